/**
 * Three tiers, three jest projects. `npm test` runs `unit` and `integration` (`--selectProjects`);
 * `perf` runs only when asked for (`npm run test:perf`, or a `*.perf-spec.ts` path given to jest);
 * so do `chaos`, `pooler`, `replica` and `system`, each its own CI step.
 * docs/testing.md describes them.
 * - `unit`: the specs next to the code (`src/**\/*.spec.ts`). Pure logic and services with fake
 *   repositories and clients: no global setup, no database, no application. `npm run test:unit`.
 * - `integration`: everything under `test/` (`*.e2e-spec.ts`, `*.spec.ts`), each jest worker on its
 *   own copy of the run's migrated template (a PGlite per worker, or a database per worker on
 *   TEST_DATABASE_URL) made by the global setup. `npm run test:integration`.
 * - `perf`: `test/**\/*.perf-spec.ts`, measurements of the runtime rather than behaviour (V8 heap
 *   bytes, garbage-collection traces, what survives a scavenge), which depend on what else the
 *   process and the machine are doing. Same database and global setup as `integration`.
 */
const { availableParallelism } = require('node:os');

const swc = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'commonjs' },
};

const shared = {
  testEnvironment: 'node',
  moduleFileExtensions: ['ts', 'js', 'json', 'mjs', 'cjs'],
  // Nest 12 and some of its deep dependencies are ESM-only: compile everything to CommonJS. Source
  // maps (inline, @swc/jest's default) only for TypeScript, ours: on the JavaScript of node_modules
  // they made every compiled module about 4 times larger (the transform cache 82 MB instead of
  // 18 MB) and importing the application in a test file about a fifth slower.
  transform: {
    '^.+\\.ts$': ['@swc/jest', swc],
    '^.+\\.(j|mj|cj)s$': ['@swc/jest', { ...swc, sourceMaps: false }],
  },
  transformIgnorePatterns: [],
  // test/support/cached-jest-runtime.js keeps each module's transform and compiled script for the
  // whole worker (every file still gets a fresh registry and context), and client/'s `.js` imports
  // of `.ts` sources resolve through test/support/jest-resolver.js, whose answers jest caches.
  // JEST_STOCK_RUNTIME=1 runs jest's own runtime and a moduleNameMapper instead (ADR 0016).
  ...(process.env.JEST_STOCK_RUNTIME
    ? { moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' } }
    : { runtime: '<rootDir>/test/support/cached-jest-runtime.js', resolver: '<rootDir>/test/support/jest-resolver.js' }),
};

// One migrated template per run (global setup); each worker works on a copy of its own (setup file).
const integrationDatabase = {
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  setupFilesAfterEnv: ['<rootDir>/test/support/worker-database.setup.ts'],
};

const projects = [
  {
    ...shared,
    displayName: 'unit',
    roots: ['<rootDir>/src'],
    testMatch: ['**/*.spec.ts'],
    testPathIgnorePatterns: ['/node_modules/'],
  },
  {
    ...shared,
    displayName: 'integration',
    roots: ['<rootDir>/test'],
    testMatch: ['**/*.e2e-spec.ts', '**/*.spec.ts'],
    // Multi-session behaviour (advisory locks held by another session) needs a real server: CI sets
    // TEST_DATABASE_URL; the embedded PGlite is a single session.
    testPathIgnorePatterns: ['/node_modules/', ...(process.env.TEST_DATABASE_URL ? [] : ['/test/postgres-only/'])],
    ...integrationDatabase,
  },
  {
    ...shared,
    // test/webhooks/webhook-kill-chaos.chaos-spec.ts: the service SIGKILLed again and again as a
    // child process, about 1 to 2 minutes; `npx jest --selectProjects chaos`, its own CI step.
    displayName: 'chaos',
    roots: ['<rootDir>/test'],
    testMatch: ['**/*.chaos-spec.ts'],
    testPathIgnorePatterns: ['/node_modules/'],
    ...integrationDatabase,
  },
  {
    ...shared,
    // test/pooler/two-instances.pooler-spec.ts: two instances as child processes behind PgBouncer in
    // transaction mode (needs /usr/sbin/pgbouncer and TEST_DATABASE_URL); `npx jest --selectProjects
    // pooler`, its own CI step.
    displayName: 'pooler',
    roots: ['<rootDir>/test'],
    testMatch: ['**/*.pooler-spec.ts'],
    testPathIgnorePatterns: ['/node_modules/'],
    ...integrationDatabase,
  },
  {
    ...shared,
    // test/replica/finance-reads.replica-spec.ts: a private primary and its streaming standby
    // (PostgreSQL 15's initdb, pg_basebackup -R, pg_ctl, run as the postgres OS user), the finance
    // reads on the standby, its replay paused, the standby stopped; `npx jest --selectProjects
    // replica`, its own CI step. It starts and removes its own servers: no global setup.
    displayName: 'replica',
    roots: ['<rootDir>/test'],
    testMatch: ['**/*.replica-spec.ts'],
    testPathIgnorePatterns: ['/node_modules/'],
  },
  {
    ...shared,
    // Tests that need programs outside npm: Debian's chromium (test/docs/*.system-spec.ts, the Swagger
    // UI in a browser) and promtool (test/deploy/promtool.system-spec.ts). They fail without them;
    // `.ci/run` installs both, then runs `npx jest --selectProjects system`, its own CI step. So
    // `npm test` needs nothing but npm.
    displayName: 'system',
    roots: ['<rootDir>/test'],
    testMatch: ['**/*.system-spec.ts'],
    testPathIgnorePatterns: ['/node_modules/'],
    ...integrationDatabase,
  },
  {
    ...shared,
    displayName: 'perf',
    roots: ['<rootDir>/test'],
    testMatch: ['**/*.perf-spec.ts'],
    testPathIgnorePatterns: ['/node_modules/'],
    ...integrationDatabase,
  },
];

module.exports = {
  // Run-wide options: jest ignores them inside a project.
  // Three workers on two cores: the files wait (child processes, timers, each worker's database
  // process) for about a quarter of a run, which a third worker fills. A whole npm test on a 2-core
  // machine: 6 min 14 s on 2 workers, 5 min 13 s on 3. A number: jest reads "150%" as 150 workers.
  maxWorkers: Math.max(1, Math.floor(availableParallelism() * 1.5)),
  testTimeout: 30000,
  // A worker keeps about 15 MB of every file it ran (each file has a module registry of its own,
  // and some of each stays reachable): about 2 GB by the end of a run, every major collection
  // marking all of it. Past 1 GB after a file, jest starts the worker anew (its database outlives
  // it: test/support/worker-database.ts). A whole `npm test` took 7 min 48 s instead of 9 min 30 s
  // on a 2-core machine (675 s of CPU instead of 863); 600 MB was no faster.
  workerIdleMemoryLimit: '1GB',
  // The longest files first, also on a fresh clone (test/support/test-durations.json).
  testSequencer: '<rootDir>/test/support/test-sequencer.js',
  projects,
};
