# The gateway's image: built in stages, it runs `node dist/bin.js` as a non-root user with production
# dependencies only (no TypeScript, tests, bench or docs). Configuration is by environment only
# (docs/configuration.md); how to run it, and the memory it is built for: docs/deploy.md.
#
#   podman build --format docker -t analytics-graphql-gateway .      (or docker build)
#   podman run --rm -p 4000:4000 -e UPSTREAM_URL=https://analytics.example.com analytics-graphql-gateway
#   podman run --rm -p 4000:4000 -e SANDBOX=on analytics-graphql-gateway   (a demo: the embedded sandbox)
#
# NODE_IMAGE names the base: an official Node 24 image on Debian, or the same from a mirror
# (--build-arg NODE_IMAGE=mirror.example.com/library/node:24-bookworm-slim).
ARG NODE_IMAGE=node:24-bookworm-slim

# Every dependency, and the TypeScript compiled into dist/. The lockfile comes first so that its layer
# (npm ci, the slow step) is reused by every build that changes only the code.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src/ src/
# npm run build: the compiler, then the MCP tools' .graphql operations copied beside their module.
RUN npm run build --silent && rm -f dist/.tsbuildinfo && find dist -name '*.map' -delete

# Production dependencies only: what the gateway imports at run time.
FROM ${NODE_IMAGE} AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force

FROM ${NODE_IMAGE}
# The memory envelope: a container limit of 512 MiB (docs/deploy.md#memory). V8 collects its old
# generation before it reaches 256 MB; the young generation keeps V8's default (two 64 MB semi-spaces
# on Node 24), which costs less CPU than capping it and fits the limit.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4000 \
    NODE_OPTIONS=--max-old-space-size=256
WORKDIR /app
COPY --from=dependencies /app/node_modules/ node_modules/
COPY package.json ./
COPY --from=build /app/dist/ dist/
# The official image's `node` user, by number, so that Kubernetes' runAsNonRoot can check it.
USER 1000:1000
EXPOSE 4000
# Liveness by Node itself: the image has no curl.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||4000)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM itself, drains, and exits 0.
ENTRYPOINT ["node", "dist/bin.js"]
