/**
 * Preloaded into a benchmarked server (`node -r ./bench/count-statements.cjs …`): counts every
 * statement the process sends to PostgreSQL through pg, whoever sends it (Prisma's adapter-pg and a
 * bare pg pool both end in Client.prototype.query), and answers the counts as JSON on
 * http://127.0.0.1:$BENCH_COUNTER_PORT/. pg_stat_statements is not loaded on a stock server, and
 * pg_stat_database counts transactions, not statements: this counter is exact per process.
 * BEGIN, COMMIT and ROLLBACK are statements (each is a round trip); `transactions` counts BEGINs.
 * `responses` counts the HTTP responses the process finished: the bench divides by it, not by what
 * the load generator saw, so that requests still in flight when a run stops are counted on both sides.
 */
const http = require('node:http');
const { Client } = require('pg');

const port = Number(process.env.BENCH_COUNTER_PORT);
if (!Number.isInteger(port) || port <= 0) throw new Error('count-statements: BENCH_COUNTER_PORT must be set to a free port');

const counts = { statements: 0, transactions: 0, responses: 0 };
const sendQuery = Client.prototype.query;

function textOf(config) {
  if (typeof config === 'string') return config;
  return config && typeof config.text === 'string' ? config.text : '';
}

Client.prototype.query = function countedQuery(config, values, callback) {
  counts.statements += 1;
  if (/^\s*(BEGIN|START TRANSACTION)\b/i.test(textOf(config))) counts.transactions += 1;
  return sendQuery.call(this, config, values, callback);
};

const endResponse = http.ServerResponse.prototype.end;
http.ServerResponse.prototype.end = function countedEnd(...args) {
  if (!this.writableEnded) counts.responses += 1;
  return endResponse.apply(this, args);
};

const server = http.createServer((_request, response) => {
  response.setHeader('content-type', 'application/json');
  // Not a benchmarked response: sent past the counting wrapper.
  endResponse.call(response, JSON.stringify(counts));
});
server.listen(port, '127.0.0.1');
// The counter must never keep a server alive that is shutting down.
server.unref();
