/**
 * Two tiers, one run (`npm test` runs both):
 * - `unit`: the specs next to the code (`src/**\/*.spec.ts`). Pure logic and services with fake
 *   repositories and clients: no global setup, no database, no application. `npm run test:unit`.
 * - `integration`: everything under `test/`, against one migrated database (PGlite in memory, or a
 *   fresh database on TEST_DATABASE_URL) created by the global setup. `npm run test:integration`.
 */
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
  // Nest 12 and some of its deep dependencies are ESM-only: compile everything to CommonJS.
  transform: { '^.+\\.(t|j|mj|cj)s$': ['@swc/jest', swc] },
  transformIgnorePatterns: [],
};

module.exports = {
  // A run-wide option: jest ignores it inside a project.
  testTimeout: 30000,
  projects: [
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
      globalSetup: '<rootDir>/test/global-setup.ts',
      globalTeardown: '<rootDir>/test/global-teardown.ts',
    },
  ],
};
