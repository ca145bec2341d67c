# syntax=docker/dockerfile:1
# The projects API as a production image: compiled JavaScript, production
# dependencies only, a non-root user and a health check.
#   docker build -t projects-api .
#   docker run --stop-timeout 30 -e DATABASE_URL=postgres://... -p 3000:3000 projects-api
# Without DATABASE_URL it runs the embedded database in the volume /var/lib/projects-api,
# seeded with the demo data on first start (its tokens: /var/lib/projects-api/demo.json):
#   docker run --stop-timeout 30 -v projects-data:/var/lib/projects-api -p 3000:3000 projects-api
# A webhook delivery worker (PostgreSQL only; the API's WEBHOOKS_WORKER=false then):
#   docker run --stop-timeout 30 -e DATABASE_URL=postgres://... --no-healthcheck projects-api node dist/src/worker.js
# A shutdown waits up to SHUTDOWN_TIMEOUT_MS (25 s) for requests in flight: give
# `docker stop` more than that (--stop-timeout 30; Docker's default is 10 s).

# Node.js 24, the active LTS line (several production dependencies need 22 or later).
ARG NODE_VERSION=24

# 1. Compile TypeScript to dist/ with the full (dev) dependency set.
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The postinstall step prepares the test runner; an image has no use for it.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY migrations ./migrations
RUN npm run build

# 2. Production dependencies only.
FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

# 3. The runtime: node, node_modules and dist/, owned by root, run as `node`.
FROM node:${NODE_VERSION}-bookworm-slim
# MALLOC_ARENA_MAX as `npm run start:prod` sets it (README, "Memory and garbage collection").
ENV NODE_ENV=production \
    MALLOC_ARENA_MAX=2 \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/var/lib/projects-api
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# Only the embedded database (no DATABASE_URL) writes to disk, and only here.
RUN mkdir -p "$DATA_DIR" && chown node:node "$DATA_DIR" && chmod 700 "$DATA_DIR"
VOLUME ["/var/lib/projects-api"]
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM (docker stop) starts a graceful shutdown: requests in flight finish,
# then the pool closes and the process exits 0 (within SHUTDOWN_TIMEOUT_MS).
STOPSIGNAL SIGTERM
# The same V8 flags as `npm run start:prod` (README, "Memory and garbage collection"): a young generation of
# 8 MB semi-spaces (16 by default) and a full collection once the heap has grown by
# half of what survived the last one (up to 4 times by default), collected on the
# main thread alone (no helper threads competing with the database for a small
# machine's cores). None caps the heap: it grows as far as live data needs; garbage
# is only collected sooner.
CMD ["node", "--max-semi-space-size=8", "--heap-growing-percent=50", "--single-threaded-gc", "dist/src/server.js"]
