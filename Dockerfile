# syntax=docker/dockerfile:1
#
# Payments BFF image.
#   docker build -t payments-bff .
#   docker run --rm --env-file prod.env payments-bff npm run db:migrate    # migrations: a separate step
#   docker run -d -p 3000:3000 --env-file prod.env payments-bff            # the service (never migrates)
# The image runs with NODE_ENV=production: every development default is refused, so the
# environment must provide DATABASE_URL, PROVIDER_*, PUBLIC_BASE_URL, CALLBACK_SIGNING_SECRET,
# DATA_ENCRYPTION_KEY and AUTH_JWT_SECRET or AUTH_JWKS_URL (see .env.example and README.md).

ARG NODE_IMAGE=node:20-bookworm-slim

# --- build: all dependencies, Prisma client generation, TypeScript compilation to dist/ ---------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV CI=true
COPY package.json package-lock.json ./
# Prisma's postinstall may try to download a native engine; nothing here needs it.
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json .swcrc ./
COPY scripts ./scripts
COPY prisma ./prisma
COPY src ./src
RUN npm run build

# --- runtime: production dependencies, compiled service, migrations ----------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    PORT=3000 \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only. @swc-node/register and @swc/core are among them on purpose:
# `npm run db:migrate` runs the TypeScript entry src/database/migrate.main.ts, and
# `npm run token` runs scripts/token.ts.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY tsconfig.json .swcrc ./
# The compiled service (includes the generated Prisma client under dist/generated).
COPY --from=build /app/dist ./dist
# Migrations: read by `npm run db:migrate` and by /health/ready (pending migrations = not ready).
COPY --from=build /app/prisma ./prisma
# TypeScript sources for `npm run db:migrate` (and the generated client they sit beside).
COPY --from=build /app/src ./src
COPY --from=build /app/scripts ./scripts
USER node
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/main.js"]
