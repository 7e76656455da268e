import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { MIGRATIONS_DIR, SCHEMA_PATH } from '../../src/database/migrator';

const ROOT = resolve(__dirname, '../..');

/**
 * prisma.config.ts is what Prisma 7's own CLI reads (`prisma migrate deploy`, `prisma migrate
 * status`, `prisma migrate diff`, `prisma validate`): the schema, the migrations and the database
 * must be the ones the service's WebAssembly runner (`npm run db:migrate`) uses. The migrate
 * commands need Prisma's native schema engine, which this machine cannot download: what is checked
 * is the configuration Prisma loads, with Prisma's own loader, and a CLI command that needs no engine.
 */
/** Runs `code` in a node of its own, with only PATH and `env`, and returns what it prints. */
function runNode(args: string[], env: Record<string, string>) {
  const result = spawnSync(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, output: `${result.stdout}${result.stderr}` };
}

describe('prisma.config.ts', () => {
  // Loaded in a process of its own: the loader evaluates the file with that process's environment.
  it("names the schema and the migrations the migration runner reads, and DATABASE_URL's database", () => {
    const load = `require('@prisma/config').loadConfigFromFile({ configRoot: ${JSON.stringify(ROOT)} })
      .then(({ config, error, resolvedPath }) => console.log(JSON.stringify({ error, resolvedPath, schema: config.schema, migrations: config.migrations, datasource: config.datasource })))`;
    const result = runNode(['-e', load], { DATABASE_URL: 'postgresql://bff@db.example:5432/payments' });
    expect([result.status, result.output]).toEqual([0, expect.any(String)]);
    expect(JSON.parse(result.stdout)).toEqual({
      resolvedPath: resolve(ROOT, 'prisma.config.ts'),
      schema: SCHEMA_PATH,
      migrations: { path: MIGRATIONS_DIR },
      datasource: { url: 'postgresql://bff@db.example:5432/payments' },
    });
  });

  it('is found by the Prisma CLI from the project root, without --schema', () => {
    // As scripts/prisma-generate.js: any executable stands for the native engine, so the CLI does
    // not try to download one (validate does not run it).
    const result = runNode([require.resolve('prisma/build/index.js'), 'validate'], { PRISMA_SCHEMA_ENGINE_BINARY: process.execPath });
    expect([result.status, result.output]).toEqual([0, expect.stringContaining('Loaded Prisma config from prisma.config.ts')]);
    expect(result.output).toContain('prisma/schema.prisma is valid');
  });

  it('leaves the migrate commands to say that DATABASE_URL is missing', () => {
    const cli = require.resolve('prisma/build/index.js');
    const status = runNode([cli, 'migrate', 'status'], { PRISMA_SCHEMA_ENGINE_BINARY: process.execPath });
    expect(status.status).not.toBe(0);
    expect(status.output).toContain('The datasource.url property is required in your Prisma config file');
  });
});
