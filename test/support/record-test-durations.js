#!/usr/bin/env node
// Writes test/support/test-durations.json, the order test/support/test-sequencer.js gives a run
// that has no durations of its own, from the report of one whole run:
//   npx jest --selectProjects unit integration --json --outputFile=/tmp/jest-report.json
//   node test/support/record-test-durations.js /tmp/jest-report.json
// Only the order matters, so a run on a busy machine does as well as one on a quiet machine.
const { readFileSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const root = join(__dirname, '../..');
const report = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const durations = Object.fromEntries(
  report.testResults
    .map((file) => [relative(root, file.name).split('\\').join('/'), Math.round((file.endTime - file.startTime) / 100) / 10])
    .sort(([a], [b]) => a.localeCompare(b)),
);
writeFileSync(join(__dirname, 'test-durations.json'), `${JSON.stringify(durations, null, 2)}\n`);
console.log(`${Object.keys(durations).length} files`);
