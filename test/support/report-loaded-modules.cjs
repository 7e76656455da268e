// Preloaded into a child service (node -r): when the process exits, writes the paths of every
// CommonJS module it loaded to the file LOADED_MODULES_REPORT names.
const { writeFileSync } = require('node:fs');

process.on('exit', () => {
  writeFileSync(process.env.LOADED_MODULES_REPORT, JSON.stringify(Object.keys(require.cache)));
});
