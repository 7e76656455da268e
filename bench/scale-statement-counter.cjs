// Preloaded into the service by bench/scale-support.mjs: counts the statements every pg
// connection of the process sends, and answers the parent over IPC with that count and the
// process's memory (after a full collection when the service runs with --expose-gc).
const { Client } = require(require.resolve('pg', { paths: [process.cwd()] }));

let statements = 0;
const recent = [];
const query = Client.prototype.query;
Client.prototype.query = function countedQuery(...args) {
  statements++;
  const first = args[0];
  recent.push(typeof first === 'string' ? first : first?.text);
  if (recent.length > 20) recent.shift();
  return query.apply(this, args);
};
process.on('message', (message) => {
  if (message === 'statements') process.send({ statements, recent });
  if (message === 'memory') {
    globalThis.gc?.();
    process.send({ memory: process.memoryUsage() });
  }
});
process.channel?.unref();
