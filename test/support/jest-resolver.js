'use strict';
/**
 * client/ is an ES module package: its relative imports name the emitted `.js` file of a `.ts`
 * source. Where such a file does not exist, the `.ts` source is what is meant. As a resolver
 * rather than a `moduleNameMapper`: jest maps every relative `.js` request of every module again for
 * each test file, uncached (about 25 ms a file), while a resolver's answers are cached per worker.
 */
const RELATIVE_JS = /^\.{1,2}\/.*\.js$/;

module.exports = (request, options) => {
  try {
    return options.defaultResolver(request, options);
  } catch (error) {
    if (!RELATIVE_JS.test(request)) throw error;
    return options.defaultResolver(request.slice(0, -'.js'.length), options);
  }
};
