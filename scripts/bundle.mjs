// `npm run build`'s last step: the compiled service (dist/main.js and what it requires) as one
// CommonJS file, dist/main.bundle.js, which `npm run start:prod` and the image run.
//
// Why: a start of dist/main.js spent about 1.2 s loading some 1,000 CommonJS files and the ESM-only
// NestJS packages through require(esm) (resolving, reading and compiling each); Node 20 has no
// module compile cache. One file starts in about half the time (docs/performance.md, "bench:startup"; bench/RESULTS.md).
//
// What stays outside the bundle, required from node_modules at run time:
// - packages that NestJS loads by name through createRequire (class-validator, class-transformer):
//   bundled, they would exist twice, and the decorators' metadata would be in the other copy;
// - packages that read files next to their own code (swagger-ui-dist's assets, PGlite's WebAssembly
//   and data files, Prisma's schema engine for --migrate, Prisma's query compiler, loaded only on
//   Prisma's first query);
// - pg, whose Client the benches instrument in node_modules;
// - optional packages that are not installed (see missingPackagesStayExternal).
// ESM packages that resolve files from `import.meta.url` get the bundle's own URL.
import { build } from 'esbuild';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export const BUNDLE_EXTERNALS = [
  'class-validator',
  'class-transformer',
  'swagger-ui-dist',
  '@electric-sql/pglite',
  '@electric-sql/pglite-socket',
  '@prisma/schema-engine-wasm/*',
  // The benches count the statements a server sends by patching pg's Client where node_modules has
  // it (bench/count-statements.cjs): a copy inside the bundle would send them uncounted.
  'pg',
  '@prisma/client/runtime/query_compiler_fast_bg.postgresql.js',
  '@prisma/client/runtime/query_compiler_fast_bg.postgresql.wasm-base64.js',
];

/**
 * A package that is not installed stays a run-time require: NestJS and pg load such optional
 * packages inside a try (pg-native, @nestjs/microservices, @fastify/multipart, …) and go on
 * without them, as they do unbundled.
 */
const missingPackagesStayExternal = {
  name: 'missing-packages-stay-external',
  setup(builder) {
    builder.onResolve({ filter: /^(@[^/]+\/)?[^./][^/]*/ }, (args) => {
      if (args.pluginData === 'probe') return undefined;
      return builder
        .resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: 'probe' })
        .then((found) => (found.errors.length > 0 ? { path: args.path, external: true } : undefined));
    });
  },
};

const result = await build({
  entryPoints: [resolve(ROOT, 'dist/main.js')],
  outfile: resolve(ROOT, 'dist/main.bundle.js'),
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  external: BUNDLE_EXTERNALS,
  plugins: [missingPackagesStayExternal],
  // `import.meta.url` of the ESM packages becomes the bundle's URL (a CommonJS file has no import.meta).
  define: { 'import.meta.url': '__bundleUrl' },
  banner: { js: "const __bundleUrl = require('node:url').pathToFileURL(__filename).href;" },
  // Class names are kept: NestJS and the error filters read constructor names.
  keepNames: true,
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: 'linked',
  logLevel: 'warning',
  metafile: true,
  // Written below, whole: two builds at once (test files run in parallel) never read each other's half-patched file.
  write: false,
});
for (const output of result.outputFiles) {
  const text = output.path.endsWith('.js') ? keepNamesOnlyWhereNeeded(output.text) : output.text;
  mkdirSync(dirname(output.path), { recursive: true });
  const partial = `${output.path}.${process.pid}.partial`;
  writeFileSync(partial, text);
  renameSync(partial, output.path);
}
const bytes = Object.values(result.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0);
console.log(
  `dist/main.bundle.js: ${Object.keys(result.metafile.inputs).length} modules, ${(bytes / 1024 / 1024).toFixed(1)} MB with its source map`,
);

/**
 * keepNames makes esbuild call `__name(fn, "name")` each time a named function is created, inner
 * closures included: Fastify's hook runners and Nest's execution context make several per request,
 * each an Object.defineProperty (about 2.5 % of a profiled GET /v1/orders/{id}). The helper now skips
 * a function whose name is already the one asked: only what esbuild renamed (`Foo2`) is renamed
 * back, as before. Same length, so that the source map's columns stay right.
 */
function keepNamesOnlyWhereNeeded(text) {
  const helper = 'var __name=(target,value)=>__defProp(target,"name",{value,configurable:!0});';
  const lazier = 'var __name=(t,v)=>t.name===v?t:__defProp(t,"name",{value:v,configurable:1});';
  if (helper.length !== lazier.length || text.split(helper).length !== 2)
    throw new Error("esbuild's __name helper changed: see keepNamesOnlyWhereNeeded");
  return text.replace(helper, lazier);
}
