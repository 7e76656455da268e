'use strict';
/**
 * jest's own runtime (`runtime` in jest.config.js), with two caches that live as long as the jest
 * worker instead of one test file. Each file still gets a fresh module registry, context and mocks:
 * only the work that gives the same result for every file is kept.
 * - Transformed code: stock jest reads every module's source and its transform from the disk
 *   cache and hashes them again for every test file. Here the transform is kept in memory, reused
 *   for the same file name and options while the file's size and modification time are unchanged.
 * - Compiled code: stock jest compiles every module with `vm.compileFunction`, which V8 never
 *   caches, so each file parses and lazily compiles the same ~1,300 modules again. A `vm.Script`
 *   of the same text hits V8's compilation cache in any context, functions compiled once included.
 *   Code that contains `import(` keeps jest's own path: the cached script would keep the first
 *   file's dynamic-import callback.
 * docs/testing.md and ADR 0016 give the measurements.
 */
const { statSync } = require('node:fs');
const { Script } = require('node:vm');
const Runtime = require('jest-runtime').default;

/** filename + options -> { stamp, transformed }: one per worker, for every file it runs. */
const transforms = new Map();
/** filename -> { source, parameters, script }: the compiled script, run again in each file's context. */
const scripts = new Map();

class CachedJestRuntime extends Runtime {
  constructor(config, environment, ...rest) {
    super(config, environment, ...rest);
    this.cacheTransforms(config);
    this.compileThroughScripts(environment);
  }

  cacheTransforms(config) {
    const cache = this.transformCache;
    const transform = cache.transform.bind(cache);
    cache.transform = (filename, options) => {
      if (options?.isInternalModule) return transform(filename, options);
      const key = `${config.id}\0${filename}\0${JSON.stringify(options ?? null)}`;
      const { mtimeMs, size } = statSync(filename);
      const stamp = `${mtimeMs}:${size}`;
      const kept = transforms.get(key);
      if (kept?.stamp !== stamp) {
        const code = transform(filename, options);
        transforms.set(key, { stamp, transformed: cache.transforms.get(filename) });
        return code;
      }
      cache.transforms.set(filename, kept.transformed);
      if (kept.transformed.sourceMapPath) cache.sourceMaps.set(filename, kept.transformed.sourceMapPath);
      return kept.transformed.code;
    };
  }

  compileThroughScripts(environment) {
    const executor = this.executor;
    const compile = executor.compile.bind(executor);
    const parameters = executor.injectedModuleParameters.join(',');
    executor.compile = (scriptSource, filename) => {
      const context = environment.getVmContext();
      if (context == null || scriptSource.includes('import(') || executor.resolution.isCoreModule(filename)) {
        return compile(scriptSource, filename);
      }
      let kept = scripts.get(filename);
      if (kept?.source !== scriptSource || kept.parameters !== parameters) {
        const wrapped = `({"Object.<anonymous>":function(${parameters}){${scriptSource}\n}});`;
        kept = { source: scriptSource, parameters, script: new Script(wrapped, { filename }) };
        scripts.set(filename, kept);
      }
      return kept.script.runInContext(context)['Object.<anonymous>'];
    };
  }
}

module.exports = CachedJestRuntime;
