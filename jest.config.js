/** One jest run covers unit specs next to the code (src) and integration/e2e specs (test). */
const swc = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'commonjs' },
};

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts', '**/*.e2e-spec.ts'],
  // Multi-session behaviour (advisory locks held by another session) needs a real server: CI sets
  // TEST_DATABASE_URL; the embedded PGlite is a single session.
  testPathIgnorePatterns: ['/node_modules/', ...(process.env.TEST_DATABASE_URL ? [] : ['/test/postgres-only/'])],
  moduleFileExtensions: ['ts', 'js', 'json', 'mjs', 'cjs'],
  // Nest 12 and some of its deep dependencies are ESM-only: compile everything to CommonJS.
  transform: { '^.+\\.(t|j|mj|cj)s$': ['@swc/jest', swc] },
  transformIgnorePatterns: [],
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  testTimeout: 30000,
};
