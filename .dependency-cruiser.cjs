/**
 * The dependency rules of src/ (`npm run lint:deps`, part of `npm run check`). Type-only imports
 * count (tsPreCompilationDeps): a cycle of types is still a cycle of the design.
 *
 * - no file imports itself back, through any chain of files;
 * - no top-level folder of src/ imports itself back through other folders (folder scope: every
 *   folder is one node, e.g. src/orders -> src/callbacks -> src/orders);
 * - src/common depends on nothing of ours: it is the bottom layer (money, pagination, DomainError...);
 * - the callbacks area reaches the orders area only through orders/order-callbacks.port.ts (and
 *   OrdersModule, which provides it): never through a repository or a service of orders.
 *
 * src/generated (Prisma's client) is a dependency like a package: cruised as a leaf, never into.
 * test/docs/dependency-rules.spec.ts proves that each rule fails on a copy of src/ that breaks it.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-file-cycles',
      severity: 'error',
      comment: 'Two files that import each other (directly or through others): move what both need to one of them, or to a third file.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-folder-cycles',
      severity: 'error',
      comment:
        'Two folders of src/ that depend on each other: one of them has to depend on an interface (a port) of the other, or the shared part has to move down.',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'common-depends-on-nothing-of-ours',
      severity: 'error',
      comment: 'src/common is the bottom layer: it imports packages and itself, nothing else of src/.',
      from: { path: '^src/common/' },
      to: { path: '^src/', pathNot: '^src/common/' },
    },
    {
      name: 'callbacks-meet-orders-through-the-port',
      severity: 'error',
      comment: 'The callbacks area uses the orders area only through orders/order-callbacks.port.ts (ORDER_CALLBACKS) and OrdersModule.',
      from: { path: '^src/callbacks/' },
      to: { path: '^src/orders/', pathNot: '^src/orders/(order-callbacks[.]port|orders[.]module)[.]ts$' },
    },
  ],
  options: {
    includeOnly: '^src/',
    doNotFollow: { path: ['node_modules', '^src/generated/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    moduleSystems: ['cjs', 'es6'],
    skipAnalysisNotInRules: true,
  },
};
