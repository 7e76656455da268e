import { applyMigrations, loadMigrationsList, migrationsUpToDate } from '../../src/database/migrator';
import { testDatabaseUrl } from '../support/test-database';

/** Every load of the WebAssembly schema engine's bindings (it stays the real module). */
const mockEngineLoads: string[] = [];
jest.mock('@prisma/schema-engine-wasm/schema_engine_bg', () => {
  mockEngineLoads.push(new Error('schema engine loaded').stack ?? '');
  return jest.requireActual('@prisma/schema-engine-wasm/schema_engine_bg');
});

type MigrationsList = Awaited<ReturnType<typeof loadMigrationsList>>;

function withContent(
  list: MigrationsList,
  index: number,
  content: MigrationsList['migrationDirectories'][number]['migrationFile']['content'],
) {
  return {
    ...list,
    migrationDirectories: list.migrationDirectories.map((directory, i) =>
      i === index ? { ...directory, migrationFile: { ...directory.migrationFile, content } } : directory,
    ),
  };
}

/**
 * `applyMigrations` (npm start, --migrate, npm run db:migrate) asks the schema engine only when
 * there may be something for it to do. The test database was migrated by the global set-up.
 */
describe('migrations already applied', () => {
  let list: MigrationsList;

  beforeAll(async () => {
    list = await loadMigrationsList();
    expect(list.migrationDirectories.length).toBeGreaterThan(5);
  });

  it('are recognised from _prisma_migrations, without loading the schema engine', async () => {
    await expect(migrationsUpToDate(testDatabaseUrl(), list)).resolves.toBe(true);
    await expect(applyMigrations(testDatabaseUrl())).resolves.toEqual([]);
    expect(mockEngineLoads).toEqual([]);
  });

  it('go to the engine when a migration on disk was changed after it was applied', async () => {
    const last = list.migrationDirectories.length - 1;
    const content = list.migrationDirectories[last].migrationFile.content;
    expect(content.tag).toBe('ok');
    await expect(
      migrationsUpToDate(testDatabaseUrl(), withContent(list, last, { tag: 'ok', value: `${content.value}\n-- edited` })),
    ).resolves.toBe(false);
    await expect(migrationsUpToDate(testDatabaseUrl(), withContent(list, 0, { tag: 'error', value: 'ENOENT' }))).resolves.toBe(false);
  });

  it('go to the engine when a migration on disk is not recorded, or one recorded is not on disk', async () => {
    const extra = {
      path: '29991231000000_not_applied_yet',
      migrationFile: { path: 'migration.sql', content: { tag: 'ok' as const, value: 'SELECT 1;' } },
    };
    await expect(
      migrationsUpToDate(testDatabaseUrl(), { ...list, migrationDirectories: [...list.migrationDirectories, extra] }),
    ).resolves.toBe(false);
    await expect(
      migrationsUpToDate(testDatabaseUrl(), { ...list, migrationDirectories: list.migrationDirectories.slice(0, -1) }),
    ).resolves.toBe(false);
  });

  it('go to the engine when the database cannot be read', async () => {
    await expect(migrationsUpToDate('postgresql://nobody@127.0.0.1:1/nothing', list)).resolves.toBe(false);
  });
});
