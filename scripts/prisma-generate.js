#!/usr/bin/env node
// `prisma generate` offline: every Prisma CLI command first tries to download a native schema
// engine from outside npm. Generation does not use that engine, so we point the CLI at any
// executable to skip the download. Migrations use @prisma/schema-engine-wasm (scripts/migrate.ts).
//
// Generation takes seconds and runs before every `npm start`, `npm test` and `npm run build`, so
// it is skipped when the client exists and was generated from the same schema by the same Prisma
// version (a hash of both is stored next to the client). `--force` generates regardless.
const { spawnSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const { existsSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const schemaPath = path.join(root, 'prisma', 'schema.prisma');
const generatedDir = path.join(root, 'src', 'generated');
// Outside the client's own folder, which `prisma generate` empties.
const hashPath = path.join(generatedDir, 'prisma-client.hash');
const clientEntry = path.join(generatedDir, 'prisma', 'client.ts');

const hash = createHash('sha256')
  .update(`prisma ${require('prisma/package.json').version}\n`)
  .update(readFileSync(schemaPath))
  .digest('hex');
const upToDate = existsSync(clientEntry) && existsSync(hashPath) && readFileSync(hashPath, 'utf8').trim() === hash;
if (upToDate && !process.argv.includes('--force')) process.exit(0);

// A generation that fails half-way must not be taken for an up-to-date client next time.
rmSync(hashPath, { force: true });
const env = { ...process.env };
env.PRISMA_SCHEMA_ENGINE_BINARY = env.PRISMA_SCHEMA_ENGINE_BINARY || process.execPath;
env.PRISMA_HIDE_UPDATE_MESSAGE = '1';
env.CHECKPOINT_DISABLE = '1';
const cli = require.resolve('prisma/build/index.js');
const result = spawnSync(process.execPath, [cli, 'generate', '--schema', schemaPath], {
  env,
  stdio: ['ignore', 'pipe', 'inherit'],
});
if (result.status !== 0) {
  process.stdout.write(result.stdout);
  process.exit(result.status ?? 1);
}
writeFileSync(hashPath, `${hash}\n`);
