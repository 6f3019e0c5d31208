# syntax=docker/dockerfile:1
# agent-registry container: build the TypeScript once, ship only dist/ and production deps.
#
#   docker build -t agent-registry .
#   docker run --rm -p 8080:8080 -e NATS_URL=nats://host.docker.internal:4222 agent-registry
#
# The image holds no nats-server, so the embedded server is off (REGISTRY_EMBEDDED=never):
# point NATS_URL at a cluster (docker-compose.yml, deploy/k8s, docs/operations.md).

ARG NODE_IMAGE=node:22-bookworm-slim

# ---- build: dev dependencies and the compiler, thrown away afterwards ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# The incremental build's bookkeeping stays in the build stage.
RUN npm run build && rm -f dist/.tsbuildinfo

# ---- production dependencies only, installed apart so dev tools never reach the runtime ----
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# ---- runtime ----
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    REGISTRY_EMBEDDED=never \
    REGISTRY_HTTP_HOST=0.0.0.0 \
    REGISTRY_HTTP_PORT=8080
WORKDIR /app
# package.json is read at run time for the version (`agent-registry --version`, build_info).
COPY --chown=root:root package.json ./
COPY --from=deps --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
# The example registry file, so REGISTRY_FILE=/app/deploy/config/agent-registry.json works unmounted.
COPY --chown=root:root deploy/config ./deploy/config

# Files are owned by root and read-only to the process; it runs as the image's unprivileged
# `node` user (uid 1000), which k8s can verify with runAsNonRoot.
USER 1000:1000

# Ops server: /metrics, /healthz, /readyz (REGISTRY_HTTP_PORT).
EXPOSE 8080

# slim images have no curl or wget: ask node itself. Exit 1 on anything but a 200.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.REGISTRY_HTTP_PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# SIGTERM goes straight to node (exec form), which drains NATS and closes the ops server.
ENTRYPOINT ["node", "--initial-old-space-size=64", "--heap-growing-percent=60", "dist/cli/main.js"]
CMD ["serve"]
