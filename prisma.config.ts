// The Prisma CLI's configuration (Prisma 7 reads it from the project root): where the schema and
// the migrations are, and which database `prisma migrate deploy`, `prisma migrate status` and
// `prisma migrate diff` talk to. The service itself never reads this file: it applies the same
// migrations with `npm run db:migrate` (src/database/migrator.ts, Prisma's schema engine compiled to
// WebAssembly), which needs no native engine download (docs/adr/0003-webassembly-migration-runner.md).
import { existsSync } from 'node:fs';
import { defineConfig } from 'prisma/config';

// As `npm start` and `npm run db:migrate` do: a local .env fills what the environment does not set.
if (existsSync('.env')) process.loadEnvFile('.env');

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  // Read as it is, not through Prisma's env(), which throws when the variable is unset: `prisma
  // generate` and `prisma validate` need no database, and the migrate commands say themselves that
  // the URL is missing.
  datasource: { url: process.env.DATABASE_URL },
});
