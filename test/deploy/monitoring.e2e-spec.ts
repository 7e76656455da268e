import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import request from 'supertest';
import { parse } from 'yaml';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

const ROOT = resolve(__dirname, '../..');
const RULES = 'deploy/prometheus/payments-bff.rules.yml';
const DASHBOARD = 'deploy/grafana/payments-bff.dashboard.json';

interface AlertRule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface DashboardPanel {
  type: string;
  title: string;
  datasource?: { uid?: string };
  targets?: { expr?: string }[];
}

const rules = (parse(readFileSync(resolve(ROOT, RULES), 'utf8')) as { groups: { name: string; rules: AlertRule[] }[] }).groups.flatMap(
  (group) => group.rules,
);
const dashboard = JSON.parse(readFileSync(resolve(ROOT, DASHBOARD), 'utf8')) as {
  uid: string;
  __inputs: { name: string; pluginId: string }[];
  panels: DashboardPanel[];
};
const dashboardExpressions = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr ?? ''));

/** Words of PromQL that stand where a metric name could: operators and modifiers. */
const PROMQL_WORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset']);

/**
 * The metric names a PromQL expression reads: its identifiers once strings, label matchers, ranges
 * and label lists are removed, less function names (followed by a parenthesis) and keywords.
 */
function metricNamesIn(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^{}]*\}/g, ' ')
    .replace(/\[[^[\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = [...bare.matchAll(/\b[A-Za-z_:][\w:]*\b(?!\s*\()/g)].map((m) => m[0]).filter((word) => !PROMQL_WORDS.has(word));
  return [...new Set(names)];
}

/** The series names a Prometheus text exposition declares (a histogram's _bucket, _sum and _count included). */
function exportedSeriesNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name);
    if (type === 'histogram' || type === 'summary') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
  }
  return names;
}

describe('the alert rules and the dashboard in deploy/', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let exported: Set<string>;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox);
    const res = await request(service.server).get('/metrics');
    expect(res.status).toBe(200);
    exported = exportedSeriesNames(res.text);
  });
  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
  });

  it('reads metric names out of PromQL', () => {
    expect(
      metricNamesIn(
        'sum by (endpoint, outcome) (rate(provider_calls_total{outcome=~"http_5..|x{y}"}[5m])) / on (job) max(renamed_metric offset 1h) > 0.05',
      ),
    ).toEqual(['provider_calls_total', 'renamed_metric']);
    expect(metricNamesIn('histogram_quantile(0.95, sum by (le) (rate(http_request_duration_seconds_bucket[5m])))')).toEqual([
      'http_request_duration_seconds_bucket',
    ]);
  });

  it('uses only metrics the service exports at /metrics', () => {
    const used = new Set([...rules.map((rule) => rule.expr), ...dashboardExpressions].flatMap(metricNamesIn));
    // What the alerts watch: the provider's errors and lost answers, the budget, callbacks, the attention queue, webhooks.
    expect([...used]).toEqual(
      expect.arrayContaining([
        'provider_calls_total',
        'provider_agent_budget_remaining',
        'orders_awaiting_callback_oldest_seconds',
        'attention_queue_oldest_age_seconds',
        'attention_queue_items',
        'webhook_attempts_total',
        'http_request_duration_seconds_bucket',
      ]),
    );
    expect([...used].filter((name) => !exported.has(name))).toEqual([]);
    // The check itself: a name the service does not export is caught.
    expect(exported.has('provider_calls_total')).toBe(true);
    expect(exported.has('provider_calls')).toBe(false);
  });

  it('has an alert for each condition a team watches, each with a severity and a summary', () => {
    expect(rules.map((rule) => rule.alert)).toEqual([
      'PaymentsBffProviderErrorRate',
      'PaymentsBffUnknownOutcomes',
      'PaymentsBffAgentBudgetLow',
      'PaymentsBffAgentBudgetExhausted',
      'PaymentsBffCallbacksLate',
      'PaymentsBffAttentionQueueOld',
      'PaymentsBffWebhookDeliveriesFailed',
      'PaymentsBffWebhookAttemptsFailing',
      'PaymentsBffWebhookSigningSecretUnreadable',
      'PaymentsBffServerErrors',
    ]);
    for (const rule of rules) {
      expect([rule.alert, rule.labels?.severity]).toEqual([rule.alert, expect.stringMatching(/^(warning|critical)$/)]);
      expect([rule.alert, rule.annotations?.summary]).toEqual([rule.alert, expect.any(String)]);
    }
  });

  it('is a dashboard Grafana imports: a Prometheus data source input, every panel a query on it', () => {
    expect(dashboard.uid).toBe('payments-bff');
    expect(dashboard.__inputs).toEqual([expect.objectContaining({ name: 'DS_PROMETHEUS', pluginId: 'prometheus' })]);
    const queried = dashboard.panels.filter((panel) => panel.type !== 'row');
    expect(queried.length).toBeGreaterThanOrEqual(10);
    for (const panel of queried) {
      expect([panel.title, panel.datasource?.uid]).toEqual([panel.title, '${DS_PROMETHEUS}']);
      expect([panel.title, panel.targets?.length]).toEqual([panel.title, expect.any(Number)]);
    }
    expect(dashboardExpressions.every((expr) => expr.trim().length > 0)).toBe(true);
  });
});
