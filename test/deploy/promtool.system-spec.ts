import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

/**
 * The alert rules of deploy/ through Prometheus's own checker. Its own jest project (`system`,
 * docs/testing.md): it needs `promtool` (Debian's `prometheus` package, which `.ci/run` installs),
 * and fails without it. That every metric they read is exported is test/deploy/monitoring.e2e-spec.ts.
 */
const ROOT = resolve(__dirname, '../..');
const RULES = 'deploy/prometheus/payments-bff.rules.yml';
const RULE_TESTS = 'deploy/prometheus/payments-bff.rules.test.yml';

describe('the alert rules in deploy/, checked by promtool', () => {
  it('passes promtool: the rules check, and each alert fires (or not) on its test series', () => {
    const promtool = (args: string[]) => spawnSync('promtool', args, { cwd: ROOT, encoding: 'utf8' });
    const version = promtool(['--version']);
    if (version.error)
      throw new Error(`promtool is needed (Debian: apt-get install -y prometheus; .ci/run installs it): ${version.error.message}`);
    const check = promtool(['check', 'rules', RULES]);
    expect([check.status, check.stdout + check.stderr]).toEqual([0, expect.stringContaining('SUCCESS: 10 rules found')]);
    const unit = promtool(['test', 'rules', RULE_TESTS]);
    expect([unit.status, unit.stdout + unit.stderr]).toEqual([0, expect.stringContaining('SUCCESS')]);
  });
});
