#!/usr/bin/env bash
# The container image, built and run for real (Dockerfile; docs/deploy.md). Called once by .ci/run,
# not per Node version: the image has its own Node. Needs root (or sudo), podman and debootstrap
# (`apt-get install podman buildah runc debootstrap`, done here when missing).
#
#   bash .ci/image.sh     build the stand-in base when not cached, build the image, run it and check:
#                         it refuses to start with no UPSTREAM_URL; with SANDBOX=on it serves the
#                         dashboard from the embedded sandbox, as a non-root uid, on a
#                         read-only root filesystem, with no devDependency and nothing but dist/; its
#                         health check is healthy; `podman stop` drains a request in flight and exits 0;
#                         an older Node refuses in one line.
#
# The base is a local stand-in for node:24-bookworm-slim (.ci/image-base.sh), cached under
# ~/.cache/analytics-gateway/image and in podman's store. podman runs with runc and explicit ulimits
# (crun fails on this kind of host's cgroups and rlimits): a containers.conf of its own, written there.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
. .ci/node.sh
. .ci/image-base.sh

if [ "$(id -u)" -ne 0 ]; then
  exec sudo -n --preserve-env=PATH,HOME,XDG_CACHE_HOME,IMAGE_CACHE_DIR bash "$0" "$@"
fi
command -v podman >/dev/null && command -v debootstrap >/dev/null && command -v runc >/dev/null || {
  apt-get update -qq </dev/null >/dev/null &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends podman buildah runc debootstrap </dev/null >/dev/null
}
mkdir -p "$IMAGE_CACHE_DIR"
export CONTAINERS_CONF="$IMAGE_CACHE_DIR/containers.conf"
cat >"$CONTAINERS_CONF" <<'CONF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=1000:1000"]
[engine]
runtime = "runc"
CONF
# The host's Node (24) runs the checks' small scripts.
PATH="$(node_dir "$NODE_RECOMMENDED")/bin:$PATH"

version="$(node -p 'require("./package.json").version')"
image="localhost/analytics-graphql-gateway:$version"
name="analytics-gateway-ci-$$"
cleanup() { podman rm -f "$name" >/dev/null 2>&1 || true; }
trap cleanup EXIT
fail() {
  echo "image check failed: $*" >&2
  podman logs "$name" 2>&1 | tail -20 >&2 || true
  exit 1
}

t=$SECONDS
base="$(base_image)"
base_s=$((SECONDS - t))
t=$SECONDS
# Not pruned after: the stages' layers are the cache that makes the next build seconds, not minutes.
podman build --format docker --network=host --build-arg "NODE_IMAGE=$base" -t "$image" . >"$IMAGE_CACHE_DIR/build.log" 2>&1 || {
  tail -30 "$IMAGE_CACHE_DIR/build.log" >&2
  fail "podman build (log: $IMAGE_CACHE_DIR/build.log)"
}
build_s=$((SECONDS - t))
size="$(podman image inspect --format '{{.Size}}' "$image")"

# The image's configuration: non-root by number, production, on all interfaces, a health check, exec form.
config="$(podman image inspect --format '{{json .Config}}' "$image")"
healthcheck="$(podman image inspect --format '{{json .HealthCheck}}' "$image")"
node -e '
  const c = JSON.parse(process.argv[1]);
  const health = JSON.parse(process.argv[2]);
  const want = (ok, what) => { if (!ok) { console.error(`image config: ${what}: ${JSON.stringify(c)}`); process.exit(1); } };
  want(c.User === "1000:1000", "User is 1000:1000");
  for (const e of ["NODE_ENV=production", "HOST=0.0.0.0", "PORT=4000"]) want(c.Env.includes(e), e);
  want(Object.keys(c.ExposedPorts ?? {}).includes("4000/tcp"), "EXPOSE 4000");
  want(JSON.stringify(c.Entrypoint) === JSON.stringify(["node", "dist/bin.js"]), "exec-form ENTRYPOINT");
  want(health?.Test?.[0] === "CMD" && health.Test[1] === "node", `a HEALTHCHECK run by node: ${JSON.stringify(health)}`);
' "$config" "$healthcheck" || fail 'configuration'

# What it holds: dist/, package.json and production dependencies; no devDependency anywhere.
podman run --rm --network=none --no-healthcheck --entrypoint node "$image" -e '
  const fs = require("fs");
  const names = (dir) => fs.readdirSync(dir).flatMap((n) => n.startsWith("@") ? fs.readdirSync(`${dir}/${n}`).map((m) => `${n}/${m}`) : [n]);
  const found = [];
  const walk = (dir) => { for (const n of names(dir)) { if (n.startsWith(".")) continue; found.push(n); const sub = `${dir}/${n}/node_modules`; if (fs.existsSync(sub)) walk(sub); } };
  walk("node_modules");
  console.log(JSON.stringify({ app: fs.readdirSync("."), modules: [...new Set(found)] }));
' >"$IMAGE_CACHE_DIR/contents.json"
node -e '
  const { app, modules } = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const lock = require("./package-lock.json");
  const copies = Object.entries(lock.packages).filter(([p]) => p.includes("node_modules/"))
    .map(([p, e]) => ({ name: p.slice(p.lastIndexOf("node_modules/") + 13), dev: e.dev === true }));
  const devOnly = new Set(copies.filter((c) => c.dev && copies.every((o) => o.name !== c.name || o.dev)).map((c) => c.name));
  const dev = modules.filter((m) => devOnly.has(m));
  if (app.sort().join(" ") !== "dist node_modules package.json") { console.error(`/app holds ${app}`); process.exit(1); }
  if (devOnly.size < 50 || !modules.includes("graphql-yoga") || dev.length > 0) { console.error(`devDependencies in the image: ${dev}`); process.exit(1); }
  console.log(`contents: /app = ${app.join(", ")}; ${modules.length} packages, none of the ${devOnly.size} dev-only ones`);
' "$IMAGE_CACHE_DIR/contents.json" || fail 'contents'

# An older Node refuses at once, in one line (the version it reports set first, as an older one would).
fake="--import=data:text/javascript,Object.defineProperty(process.versions,'node',{value:'20.11.1'})"
refusal="$(podman run --rm --network=none --no-healthcheck -e "NODE_OPTIONS=$fake" "$image" 2>&1)" && fail 'started on Node 20'
[ "$refusal" = 'analytics-graphql-gateway needs Node.js 22.19.0 or newer (24 recommended); this is Node.js 20.11.1.' ] ||
  fail "refusal on an older Node: $refusal"

# With no UPSTREAM_URL, production refuses to start (exit 2), in one line saying what to set.
refusal="$(podman run --rm --network=none --no-healthcheck "$image" 2>&1)" && fail 'started with no UPSTREAM_URL'
grep -q "^  - UPSTREAM_URL is not set: set it to the analytics install's URL" <<<"$refusal" ||
  fail "refusal with no UPSTREAM_URL: $refusal"

# Run it: the embedded sandbox, asked for (SANDBOX=on), on a free port of the host's network.
port="$(node -e 's=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
t0=$(date +%s%N)
# (No systemd here: podman says it cannot schedule the health check; `podman healthcheck run` runs it.)
podman run -d --name "$name" --network=host --read-only -e SANDBOX=on -e "PORT=$port" -e DRAIN_DELAY_MS=500 "$image" >/dev/null 2>&1
base_url="http://127.0.0.1:$port"
ready=''
for _ in $(seq 1 600); do
  if node -e 'fetch(process.argv[1]).then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))' "$base_url/ready"; then
    ready=$((($(date +%s%N) - t0) / 1000000))
    break
  fi
  [ "$(podman inspect --format '{{.State.Running}}' "$name")" = true ] || fail 'the container stopped'
  sleep 0.1
done
[ -n "$ready" ] || fail 'not ready within 60 s'
logs="$(podman logs "$name" 2>&1)"
# Production serves no GraphiQL, and the line offers none.
grep -q "Gateway on http://0.0.0.0:$port/graphql, version $version, Node.js" <<<"$logs" ||
  fail "start-up line: $logs"
sandbox_url="$(sed -n 's/^Upstream: the bundled sandbox at \(http:[^ ]*\) .*/\1/p' <<<"$logs")"
key="$(sed -n 's/^Demo keys: \([^,]*\),.*/\1/p' <<<"$logs")"
[ -n "$sandbox_url" ] && [ -n "$key" ] || fail "no sandbox or demo key in: $logs"

# The gateway's process as the host sees it (rootful podman, no user namespace): its real and effective uid.
pid="$(podman inspect --format '{{.State.Pid}}' "$name")"
uid="$(awk '/^Uid:/ { print $2 "/" $3 }' "/proc/$pid/status")"
[ "$uid" = 1000/1000 ] || fail "runs as uid $uid, not 1000"

podman healthcheck run "$name" >/dev/null || fail 'health check'
[ "$(podman inspect --format '{{.State.Health.Status}}' "$name")" = healthy ] || fail 'health status'

# The dashboard, from the README, as a user runs it; then one more, in flight while `podman stop` drains.
dashboard="$(node -e '
  const readme = require("fs").readFileSync("README.md", "utf8");
  console.log(JSON.stringify({ query: /```graphql\n([\s\S]*?)```/.exec(readme)[1] }));
')"
ask() {
  node -e '
    const t0 = Date.now();
    fetch(process.argv[1], { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${process.argv[2]}` }, body: process.argv[3] })
      .then((r) => r.json()).then((b) => {
        const w = b.data?.website;
        if (!w || !(w.visitors.total > 0) || !(w.pages.nodes.length > 0)) { console.error(JSON.stringify(b)); process.exit(1); }
        console.log(`dashboard: ${w.domain}, ${w.visitors.total} visitors, in ${Date.now() - t0} ms`);
      }, (e) => { console.error(String(e)); process.exit(1); });
  ' "$base_url/graphql" "$key" "$dashboard"
}
ask || fail 'the dashboard'
node -e 'fetch(process.argv[1], { method: "PUT", body: JSON.stringify({ latencyMs: 3000 }) }).then((r) => process.exit(r.ok ? 0 : 1))' \
  "$sandbox_url/__sandbox/knobs" || fail 'sandbox knobs'
# Another website's dashboard, so that no cached read answers it: 3 s of upstream latency.
dashboard="${dashboard/id: \\\"1\\\"/id: \\\"2\\\"}"
ask >"$IMAGE_CACHE_DIR/in-flight.log" 2>&1 &
asking=$!
sleep 1
podman stop -t 30 "$name" >"$IMAGE_CACHE_DIR/stop.log" 2>&1 || fail "podman stop: $(cat "$IMAGE_CACHE_DIR/stop.log")"
wait "$asking" || fail "the request in flight during the drain: $(cat "$IMAGE_CACHE_DIR/in-flight.log")"
# Answered after the signal (a second after it was sent, the upstream took 3 s): it was in flight.
in_flight="$(cat "$IMAGE_CACHE_DIR/in-flight.log")"
[ "$(sed -n 's/.* in \([0-9]*\) ms$/\1/p' <<<"$in_flight")" -ge 2000 ] || fail "not in flight during the drain: $in_flight"
exit_code="$(podman inspect --format '{{.State.ExitCode}}' "$name")"
[ "$exit_code" = 0 ] || fail "exit code $exit_code after podman stop"
grep -q 'SIGTERM: draining' <<<"$(podman logs "$name" 2>&1)" || fail 'no drain in the log'

echo "image $image: $((size / 1000000)) MB; base ${base_s} s ($base), build ${build_s} s, start to ready ${ready} ms;" \
  "non-root (uid 1000), healthy, dashboard served, drained on podman stop with a request in flight, exit 0;" \
  "all in $((SECONDS - started)) s"
