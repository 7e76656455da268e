import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import { Client, Pool, type QueryResult } from 'pg';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';

/**
 * Prisma migrations without the native schema engine, which the Prisma CLI downloads from outside
 * npm. The same engine compiled to WebAssembly (@prisma/schema-engine-wasm, pinned to this
 * prisma's engines version) drives the database through @prisma/adapter-pg. It reads the standard
 * prisma/migrations layout and keeps the standard _prisma_migrations table, so the normal CLI
 * still works wherever it can download its engine.
 */
export const MIGRATIONS_DIR = join(projectRoot(__dirname), 'prisma', 'migrations');
export const SCHEMA_PATH = join(projectRoot(__dirname), 'prisma', 'schema.prisma');

/**
 * The directory of the project's package.json, above `from`: the same whether this code runs from
 * src/database (TypeScript), dist/database (compiled) or dist/main.bundle.js (start:prod).
 */
export function projectRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

type WasmSchemaEngine = {
  applyMigrations(input: unknown): Promise<{ appliedMigrationNames: string[] }>;
  devDiagnostic(input: unknown): Promise<{ action: { tag: string; reason?: string } }>;
  createMigration(input: unknown): Promise<{ generatedMigrationName: string; migrationScript: string | null }>;
  diagnoseMigrationHistory(input: unknown): Promise<{ history: unknown; failedMigrationNames: string[] }>;
  free(): void;
};

type WasmEngineModule = {
  SchemaEngine: { new: (o: unknown, cb: (msg: string) => void, adapter: object) => Promise<WasmSchemaEngine> };
};

let wasmModule: WasmEngineModule | undefined;

async function loadEngineModule() {
  if (wasmModule) return wasmModule;
  const g = globalThis as unknown as { PRISMA_WASM_PANIC_REGISTRY?: { set_message(m: string): void } };
  g.PRISMA_WASM_PANIC_REGISTRY ??= { set_message: () => undefined };
  const bindings = require('@prisma/schema-engine-wasm/schema_engine_bg') as WasmEngineModule & { __wbg_set_wasm(exports: object): void };
  const wasmPath = join(require.resolve('@prisma/schema-engine-wasm/schema_engine_bg'), '..', 'schema_engine_bg.wasm');
  const wasmBytes = await readFile(wasmPath);
  // Node has WebAssembly; the ES lib typings this project compiles with do not declare it.
  const { WebAssembly: wasm } = globalThis as unknown as {
    WebAssembly: { instantiate(b: Buffer, i: object): Promise<{ instance: { exports: object } }> };
  };
  const { instance } = await wasm.instantiate(wasmBytes, { './schema_engine_bg.js': bindings });
  bindings.__wbg_set_wasm(instance.exports);
  (instance.exports as { __wbindgen_start: () => void }).__wbindgen_start();
  wasmModule = bindings;
  return bindings;
}

export async function loadMigrationsList(baseDir = MIGRATIONS_DIR) {
  const entries = (await readdir(baseDir, { withFileTypes: true }).catch(() => []))
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  const migrationDirectories = await Promise.all(
    entries.map(async (name) => {
      const content = await readFile(join(baseDir, name, 'migration.sql'), 'utf8').then(
        (value) => ({ tag: 'ok' as const, value }),
        (error: Error) => ({ tag: 'error' as const, value: error.message }),
      );
      return { path: name, migrationFile: { path: 'migration.sql', content } };
    }),
  );
  const lockContent = await readFile(join(baseDir, 'migration_lock.toml'), 'utf8').catch(() => null);
  return {
    baseDir,
    lockfile: { path: 'migration_lock.toml', content: lockContent },
    shadowDbInitScript: '',
    migrationDirectories,
  };
}

const PG_CHAR_OID = 18;
const PG_TEXT_OID = 25;

/**
 * adapter-pg refuses the single-byte `"char"` type that the engine's catalog introspection reads
 * (pg_class.relkind and friends). pg already parses it to a string, so the column is relabelled
 * as text before the adapter looks at it. Passed as the pool's Client so that the shadow database
 * pool, which adapter-pg builds from the same config, gets it too.
 */
class CharAsTextClient extends Client {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg's Client.query has a dozen overloads; one override can only match them all with any
  override query(...args: unknown[]): any {
    const relabel = (r: QueryResult | undefined) => {
      for (const field of r?.fields ?? []) if (field.dataTypeID === PG_CHAR_OID) field.dataTypeID = PG_TEXT_OID;
      return r;
    };
    const last = args.length - 1;
    if (typeof args[last] === 'function') {
      const callback = args[last] as (err: unknown, r?: QueryResult) => void;
      args[last] = (err: unknown, r?: QueryResult) => callback(err, relabel(r));
      return (super.query as (...a: unknown[]) => unknown)(...args);
    }
    const result = (super.query as (...a: unknown[]) => unknown)(...args);
    return result instanceof Promise ? result.then(relabel) : result;
  }
}

const NO_FILTERS = { externalTables: [], externalEnums: [] };

/**
 * Runs `work` with an engine connected to `databaseUrl` through one pool, closed afterwards so a
 * long-lived process keeps no socket. With `shadowDatabase` (migration authoring), the engine may
 * also ask for a throw-away shadow database beside it.
 */
export async function withSchemaEngine<T>(
  databaseUrl: string,
  work: (engine: WasmSchemaEngine) => Promise<T>,
  options: { shadowDatabase?: boolean } = {},
): Promise<T> {
  const { SchemaEngine } = await loadEngineModule();
  const schema = await readFile(SCHEMA_PATH, 'utf8');
  const poolConfig = { ...connectionFields(databaseUrl), max: 2, Client: CharAsTextClient };
  const pool = new Pool(poolConfig);
  const main = new PrismaPg(pool);
  const factory = options.shadowDatabase
    ? {
        provider: 'postgres' as const,
        adapterName: main.adapterName,
        connect: () => main.connect(),
        connectToShadowDb: () => connectToOwnShadowDatabase(pool, poolConfig),
      }
    : main;
  const adapterFactory = bindMigrationAwareSqlAdapterFactory(factory);
  const engine = await SchemaEngine.new({ datamodels: [[SCHEMA_PATH, schema]] }, () => undefined, adapterFactory);
  try {
    return await work(engine);
  } finally {
    engine.free();
    await pool.end();
  }
}

/**
 * A shadow database we create and drop ourselves: adapter-pg's own drops the database before
 * closing the pool that still uses it, which PostgreSQL refuses.
 */
async function connectToOwnShadowDatabase(admin: Pool, config: ReturnType<typeof connectionFields> & object) {
  const database = `prisma_shadow_${randomUUID().replace(/-/g, '')}`;
  await admin.query(`CREATE DATABASE "${database}"`);
  const shadowPool = new Pool({ ...config, database });
  // DROP ... WITH (FORCE) ends any connection the engine still holds; that is expected.
  shadowPool.on('error', () => undefined);
  const adapter = await new PrismaPg(shadowPool).connect();
  const dispose = adapter.dispose.bind(adapter);
  adapter.dispose = async () => {
    await dispose().catch(() => undefined);
    await shadowPool.end().catch(() => undefined);
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  };
  return adapter;
}

/**
 * Discrete connection fields rather than a connection string: adapter-pg builds the shadow database
 * pool as `{ ...config, database: <shadow> }`, which a connectionString would silently override.
 */
function connectionFields(databaseUrl: string) {
  const url = new URL(databaseUrl);
  return {
    host: decodeURIComponent(url.hostname),
    port: url.port ? Number(url.port) : 5432,
    user: decodeURIComponent(url.username) || undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    database: decodeURIComponent(url.pathname.slice(1)) || undefined,
    ssl: ['require', 'verify-ca', 'verify-full'].includes(url.searchParams.get('sslmode') ?? '')
      ? { rejectUnauthorized: url.searchParams.get('sslmode') !== 'require' }
      : undefined,
  };
}

/** `prisma migrate deploy`: applies every pending migration, in order, each recorded in _prisma_migrations. */
export async function applyMigrations(databaseUrl: string): Promise<string[]> {
  const migrationsList = await loadMigrationsList();
  if (await migrationsUpToDate(databaseUrl, migrationsList)) return [];
  return withSchemaEngine(databaseUrl, async (engine) => {
    const { appliedMigrationNames } = await engine.applyMigrations({ migrationsList, filters: NO_FILTERS });
    return appliedMigrationNames;
  });
}

type MigrationRow = { name: string; checksum: string; finished: boolean; rolledBack: boolean };

/**
 * True when _prisma_migrations records every migration on disk as applied and unchanged (the
 * checksum Prisma keeps: the SHA-256 of its migration.sql), and nothing else: no failed migration,
 * none this build does not know. Then `migrate deploy` has nothing to do, and loading the schema
 * engine to be told so (WebAssembly: about half a second of every `npm start`) is skipped. Any
 * other state, a database without the table or one that cannot be read included, goes to the
 * engine exactly as before.
 */
export async function migrationsUpToDate(databaseUrl: string, list: Awaited<ReturnType<typeof loadMigrationsList>>): Promise<boolean> {
  const client = new Client(connectionFields(databaseUrl));
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<MigrationRow>(
      `SELECT migration_name AS name, checksum, finished_at IS NOT NULL AS finished, rolled_back_at IS NOT NULL AS "rolledBack"
       FROM _prisma_migrations`,
    );
    if (rows.some((row) => !row.finished && !row.rolledBack)) return false;
    const applied = new Map(rows.filter((row) => row.finished && !row.rolledBack).map((row) => [row.name, row.checksum]));
    if (applied.size !== list.migrationDirectories.length) return false;
    return list.migrationDirectories.every(
      ({ path, migrationFile: { content } }) =>
        content.tag === 'ok' && applied.get(path) === createHash('sha256').update(content.value, 'utf8').digest('hex'),
    );
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Names of the migrations on disk, in the order they apply. */
export async function migrationNamesOnDisk(): Promise<string[]> {
  const list = await loadMigrationsList();
  return list.migrationDirectories.map((d) => d.path);
}
