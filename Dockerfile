# syntax=docker/dockerfile:1
#
# Payments BFF image (Node.js 24 LTS, Debian bookworm slim; .nvmrc names the same major for development).
#   docker build -t payments-bff .
#   docker run --rm --env-file prod.env payments-bff npm run db:migrate    # migrations: a separate, one-shot step
#   docker run -d -p 3000:3000 --env-file prod.env payments-bff            # the service (never migrates)
# docker-compose.yml runs both, with PostgreSQL and the provider sandbox, for a local
# production-like run.
#
# The image runs with NODE_ENV=production: every development default is refused (exit 78), so the
# environment must provide DATABASE_URL, PROVIDER_BASE_URL, PROVIDER_API_KEY, PROVIDER_SECRET_KEY,
# PROVIDER_SP_AUTH_TOKEN, PUBLIC_BASE_URL, CALLBACK_SIGNING_SECRET, DATA_ENCRYPTION_KEY and
# AUTH_JWT_SECRET or AUTH_JWKS_URL (see .env.example and README.md). No .env enters the image.

ARG NODE_IMAGE=node:24-bookworm-slim

# --- build: every dependency, Prisma client generation, TypeScript compilation to dist/ ---------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV CI=true \
    NPM_CONFIG_UPDATE_NOTIFIER=false
COPY package.json package-lock.json ./
# client/ is an npm workspace (the frontends' TypeScript client): `npm run build` builds it too.
COPY client/package.json ./client/
# --ignore-scripts: the project's own postinstall (the Prisma client for `npx nest start` on a fresh
# clone) needs scripts/ and prisma/, not copied yet: `npm run build` generates the client itself.
# Prisma's engine download, which would fail, is skipped with it: nothing here needs the native engine
# (scripts/prisma-generate.js generates offline; migrations use the WebAssembly schema engine).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json .swcrc nest-cli.json ./
COPY scripts ./scripts
COPY prisma ./prisma
COPY src ./src
COPY client ./client
RUN npm run build

# --- runtime: production dependencies only, the compiled service, the migrations ---------------
FROM ${NODE_IMAGE} AS runtime
# MALLOC_ARENA_MAX=1: as `npm run start:prod`: glibc's per-thread malloc arenas kept 20-40 MB that V8's
# background compiler threads had freed (measured idle RSS 205 MB -> 165-190 MB, no throughput cost seen).
ENV NODE_ENV=production \
    MALLOC_ARENA_MAX=1 \
    PORT=3000 \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only (without client/, the workspace is skipped: the service does not use it). @swc-node/register and @swc/core are among them on purpose:
# `npm run db:migrate` runs the TypeScript entry src/database/migrate.cli.ts, `npm run sandbox`
# src/sandbox/sandbox.cli.ts and `npm run token` scripts/token.ts.
# --ignore-scripts: as in the build stage (the generated client comes from the build, under src/ and dist/).
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
# prisma.config.ts: Prisma's own CLI (`npx prisma migrate status`) finds the schema, the migrations and
# DATABASE_URL where its native engine can be downloaded; `npm run db:migrate` does not need it.
COPY tsconfig.json .swcrc prisma.config.ts ./
# The compiled service (with the generated Prisma client under dist/generated).
COPY --from=build /app/dist ./dist
# Migrations: applied by `npm run db:migrate`, read by /health/ready (pending migrations = not ready).
COPY --from=build /app/prisma ./prisma
# TypeScript sources (with the generated client) for the db:migrate, sandbox and token commands.
COPY --from=build /app/src ./src
COPY --from=build /app/scripts ./scripts
# Everything above belongs to root and is read-only for the service, which runs unprivileged
# (the `node` user, uid 1000, of the official image) and writes nothing under /app.
USER node
EXPOSE 3000
# Liveness only (the process answers); readiness (database, migrations) is /health/ready, for the load balancer.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM (docker stop) shuts the service down gracefully; the service never migrates at start.
STOPSIGNAL SIGTERM
# As `npm run start:prod`: --max-old-space-size=1024 also makes V8 grow its heap by a smaller factor
# after each collection (it scales the factor with the limit), so garbage does not pile up to 2-4
# times the live heap under load. --no-allocation-site-pretenuring: under concurrent pay-ins V8
# pretenured the requests' objects, and the old generation filled with garbage (docs/operations.md).
# --max-semi-space-size=8 --min-semi-space-size=8: a young generation of 16 MB, neither grown to
# Node 24's 128 MB under load nor shrunk to 1 MB while idle (the first requests after a quiet minute
# then paid for it). --no-maglev: Maglev's compilation memory, about 20 MB of peak RSS, for a CPU
# difference within the bench's noise (docs/operations.md).
# dist/main.bundle.js is the compiled service in one file (scripts/bundle.mjs): it starts in about
# half the time.
CMD ["node", "--max-old-space-size=1024", "--max-semi-space-size=8", "--min-semi-space-size=8", "--no-maglev", "--no-allocation-site-pretenuring", "dist/main.bundle.js"]
