// ESLint flat config, type-aware (typescript-eslint), modelled on immich's server/eslint.config.mjs.
import js from '@eslint/js';
import globals from 'globals';
import regexp from 'eslint-plugin-regexp';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'src/generated/**',
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'client/src/openapi/**',
      'client/dist/**',
      'client/node_modules/**',
      'examples/**/dist/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: { ...globals.node, ...globals.jest },
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/require-await': 'error',
      // Modules loaded at run time on purpose: an optional devDependency, and package paths that ship no typings.
      '@typescript-eslint/no-require-imports': [
        'error',
        { allow: ['^pino-pretty$', '^class-transformer/cjs/storage$', '^@prisma/schema-engine-wasm/schema_engine_bg$'] },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Tests poke at untyped JSON answers, stringify them for messages, and pass methods around:
    // the unsafe-any family, no-base-to-string and unbound-method are noise there. Fakes and probe
    // controllers stand in for async code and stay async even without an await (a rejected promise
    // is not a synchronous throw), so require-await is off too. no-floating-promises,
    // no-misused-promises, await-thenable and switch-exhaustiveness-check stay on.
    files: ['**/*.spec.ts', '**/*.e2e-spec.ts', 'test/**'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // The data-access rule (ARCHITECTURE.md, docs/adr/0007): repositories send written-out statements
    // with declared columns; Prisma's model API, raw queries and transactions are not used in src/.
    files: ['src/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        ...['$queryRaw', '$queryRawUnsafe', '$executeRaw', '$executeRawUnsafe', '$transaction'].map((property) => ({
          property,
          message: 'Write the statement out with sqlStatement (ARCHITECTURE.md#data-access).',
        })),
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "CallExpression > MemberExpression[property.name=/^(findMany|findUnique|findUniqueOrThrow|findFirst|findFirstOrThrow|create|createMany|createManyAndReturn|update|updateMany|upsert|delete|deleteMany|count|aggregate|groupBy)$/] > MemberExpression.object[object.property.name='prisma']",
          message: "Prisma's model API is not used in src/: write the statement out with sqlStatement (ARCHITECTURE.md#data-access).",
        },
        {
          // Each enabled AsyncLocalStorage adds work to every promise: the process has one (src/common/async-scope.ts).
          selector: "NewExpression[callee.name='AsyncLocalStorage']",
          message: 'Use a ScopedValue (src/common/async-scope.ts): the process has one AsyncLocalStorage.',
        },
      ],
    },
  },
  {
    // A pattern that backtracks super-linearly turns a long input into seconds of a blocked event loop.
    plugins: { regexp },
    rules: {
      'regexp/no-super-linear-backtracking': 'error',
      'regexp/no-super-linear-move': 'error',
    },
  },
  {
    // Plain JavaScript (config files, scripts/*.js): no type information.
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
