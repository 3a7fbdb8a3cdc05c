#!/usr/bin/env bash
# `node` for the soak (SOAK_GATEWAY_NODE=bench/container-node.sh): runs the gateway inside the image,
# under the memory limit it is built for, on the host's network, so that the soak's load, attacks and
# inspector reach it as they reach `node dist/main.js` (docs/deploy.md#memory). The script's path is
# mapped to the image's own dist/; the settings the soak gives the gateway are passed on.
#
#   IMAGE      the image (default localhost/analytics-graphql-gateway:<package.json's version>)
#   MEMORY     the container's memory limit, swap included (default 512m)
#   CONTAINER  the container's name, for `podman inspect` (default analytics-gateway-soak)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
image="${IMAGE:-localhost/analytics-graphql-gateway:$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$root/package.json")}"
args=()
for arg in "$@"; do
  case "$arg" in
    "$root"/dist/*) args+=("/app/dist/${arg#"$root"/dist/}") ;;
    *) args+=("$arg") ;;
  esac
done
env=()
for name in HOST PORT UPSTREAM_URL LOG_LEVEL WORKERS UPSTREAM_BREAKER_RESET_MS GRAPHIQL; do
  [ -z "${!name+set}" ] || env+=(-e "$name=${!name}")
done
exec podman run --rm --no-healthcheck --name "${CONTAINER:-analytics-gateway-soak}" --network=host \
  --memory="${MEMORY:-512m}" --memory-swap="${MEMORY:-512m}" "${env[@]}" --entrypoint node "$image" "${args[@]}"
