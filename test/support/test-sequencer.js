// jest's `testSequencer`: the longest files first, so that no long file starts last and holds the
// run open on one worker while the others are idle. jest orders by the durations it recorded in
// earlier runs (its cache); a fresh clone has none, and jest falls back to file size, which put
// some of the longest files (a build, a child service) among the last. Here a file jest has no
// record of takes its duration from test/support/test-durations.json (seconds, recorded from one
// `npm test` run by test/support/record-test-durations.js). A file in neither counts as the median
// recorded file (jest would run it before every file with a duration, the longest included).
//
// The files that use `dist/` (a build, or `nest start` compiling into it) take the run's lock on it
// (test/support/run-lock.ts), and one waiting for the lock leaves its worker idle: two of them
// starting together on a fresh clone cost the run about 45 s of one core (the build holding the
// lock). So no two of them are placed within DIST_USERS_APART files of each other.
const { readFileSync } = require('node:fs');
const { join, relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const recorded = JSON.parse(readFileSync(join(__dirname, 'test-durations.json'), 'utf8'));
const sorted = Object.values(recorded).sort((a, b) => a - b);
const median = sorted.length ? sorted[Math.floor(sorted.length / 2)] : undefined;

const DIST_USERS_APART = 4;
const usesDist = (test) => /\b(DIST_LOCK|buildOncePerRun)\b/.test(readFileSync(test.path, 'utf8'));

/** `order` with each file that uses dist/ moved back, if needed, to DIST_USERS_APART places after the previous one. */
function spreadDistUsers(order) {
  const placed = [];
  const waiting = [];
  let lastDistUser = -Infinity;
  for (const test of order) {
    if (usesDist(test)) waiting.push(test);
    else placed.push(test);
    if (waiting.length && placed.length - lastDistUser > DIST_USERS_APART) {
      lastDistUser = placed.length;
      placed.push(waiting.shift());
    }
  }
  return [...placed, ...waiting];
}

class LongestFirstSequencer extends Sequencer {
  sort(tests) {
    return spreadDistUsers(super.sort(tests));
  }

  time(test) {
    const cached = super.time(test);
    if (cached != null) return cached;
    const seconds = recorded[relative(test.context.config.rootDir, test.path).split('\\').join('/')] ?? median;
    return seconds == null ? undefined : seconds * 1000;
  }
}

module.exports = LongestFirstSequencer;
