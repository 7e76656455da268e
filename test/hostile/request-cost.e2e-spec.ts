import { randomUUID } from 'node:crypto';
import type { OpenAPIObject } from '@nestjs/swagger';
import { buildOpenApiDocument } from '../../src/create-app';
import { TEST_WALLETS } from '../../src/sandbox/test-wallets';
import { cardUserRequest } from '../support/cards-factories';
import { orderRequest } from '../support/provider-factories';
import { withLongestLoopHold } from '../support/event-loop-hold';
import { uniqueLinkEmail, type LinkHosts } from '../wallet-links/link-hosts';
import { inject, problemShapeFailure, seedCustomer, startHostileHosts, type InjectedAnswer } from './hostile-harness';

/**
 * What a request costs, measured instead of guessed from examples: every route that takes a body
 * (from the app's own OpenAPI document) gets its largest accepted body, every text field at its
 * maximum length and at ~900 KB, hostile decimal text ('1.' + 100,000 zeros + '1', as a string
 * and as a JSON number) and ~900 KB bodies. The event loop the app runs on (this process: inject,
 * no socket) is sampled by a timer while each request is handled; no request may hold it for more
 * than MAX_LOOP_HOLD_CPU_MS of CPU. A quadratic pattern on such input holds it for seconds.
 */

/**
 * Far above what parsing and validating a bounded body takes (a ~900 KB field included, with the
 * harness building and injecting it), far below a quadratic pass (seconds of CPU). A hold is
 * judged by the CPU the event loop's thread spent in it (test/support/event-loop-hold.ts): on a
 * busy 2-core machine the clock read 105 to 112 ms for work that takes about 40, and the process's
 * CPU, which also counts the garbage collector's helper threads, read 161 ms in a CI run for a body
 * that takes about 30.
 * A request over it is sent again, up to RETRIES times, and judged by its least hold: a GC pause
 * does not repeat every time, work that grows faster than the input does.
 */
const MAX_LOOP_HOLD_CPU_MS = 100;
const RETRIES = 4;
const HUGE_TEXT_LENGTH = 900_000;
const ZEROS_DECIMAL = `1.${'0'.repeat(100_000)}1`;
const HUGE_DECIMAL = `1.${'0'.repeat(HUGE_TEXT_LENGTH)}1`;
const WEBHOOK_MARKER = `request-cost-${randomUUID().slice(0, 8)}`;
const WEBHOOK_URL = `https://127.0.0.1:9/${WEBHOOK_MARKER}`;

type Json = Record<string, unknown>;
type SchemaObject = {
  $ref?: string;
  type?: string;
  oneOf?: SchemaObject[];
  maxLength?: number;
  items?: SchemaObject;
  properties?: Record<string, SchemaObject>;
};

/** A field of a body: its path (keys and array indexes) and its schema. */
interface Field {
  path: (string | number)[];
  schema: SchemaObject;
}

function resolve(document: OpenAPIObject, schema: SchemaObject): SchemaObject {
  return schema.$ref ? (document.components!.schemas![schema.$ref.split('/').pop()!] as SchemaObject) : schema;
}

/** Every leaf field of `body` that the schema describes, arrays entered (each entry). */
function fieldsOf(document: OpenAPIObject, schema: SchemaObject, body: unknown, path: (string | number)[] = []): Field[] {
  const resolved = resolve(document, schema);
  if (resolved.type === 'array' && Array.isArray(body))
    return body.flatMap((entry, index) => fieldsOf(document, resolved.items!, entry, [...path, index]));
  if (resolved.properties && typeof body === 'object' && body !== null)
    return Object.entries(resolved.properties).flatMap(([key, property]) =>
      key in body ? fieldsOf(document, property, (body as Json)[key], [...path, key]) : [],
    );
  return [{ path, schema: resolved }];
}

const isDecimal = (schema: SchemaObject) => schema.oneOf?.some((s) => s.type === 'number') === true;
const isText = (schema: SchemaObject) => schema.type === 'string';
const fieldName = (field: Field) => field.path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${part}`)).join('');

/** `body` with the value at `path` replaced. */
function withField(body: Json, path: (string | number)[], value: unknown): Json {
  const copy = structuredClone(body);
  let target: Record<string | number, unknown> = copy;
  for (const part of path.slice(0, -1)) target = target[part] as Record<string | number, unknown>;
  target[path[path.length - 1]] = value;
  return copy;
}

/** JSON text of `body` with the value at `path` written as the raw `literal` (a number the client typed). */
function withLiteral(body: Json, path: (string | number)[], literal: string): string {
  const marker = `@@literal-${randomUUID()}@@`;
  return JSON.stringify(withField(body, path, marker)).replace(`"${marker}"`, () => literal);
}

describe('hostile: the cost of a request is linear in its size', () => {
  let hosts: LinkHosts;
  let document: OpenAPIObject;
  let token: string;
  let matricules: string[];
  let cardUserId: string;
  let cardId: string;
  const providerCalls = () => hosts.base.state.requests.length + hosts.link.state.requests.length;

  /** A valid body for each route that takes one (ids of what the customer owns where the path names one). */
  const validBodies: Record<string, () => Json> = {
    'POST /v1/orders': () => orderRequest({ wallet: TEST_WALLETS.NO_CALLBACK }),
    'POST /v1/card-users': () => cardUserRequest(),
    'POST /v1/card-users/{id}/cards': () => ({ balance: '5000', currency: 'XAF' }),
    'POST /v1/cards/{id}/topup': () => ({ amount: '10' }),
    'POST /v1/cards/{id}/withdraw': () => ({ amount: '1' }),
    'POST /v1/wallet-links': () => ({ email: uniqueLinkEmail('cost'), phone: '650400009', phoneCountry: '+237' }),
    'POST /v1/distributions': () => ({
      paymentReceiver: matricules[0],
      paymentId: `pay_${randomUUID()}`,
      amount: '10000',
      currency: 'XAF',
      distribution: [
        { matricule: matricules[1], rate: '33.33' },
        { matricule: matricules[2], rate: 20 },
      ],
    }),
    'POST /v1/distributions/fiat': () => ({
      payer: 'Awa Ndiaye',
      amount: '250.75',
      currency: 'EUR',
      distribution: [
        { matricule: matricules[1], rate: 60 },
        { matricule: matricules[2], rate: '40' },
      ],
    }),
    'POST /v1/orders/{id}/resolution': () => ({ status: 'SUCCEEDED', note: 'Dashboard line 42' }),
    'POST /v1/orders/{id}/review': () => ({ note: 'Dashboard line 42' }),
    'POST /v1/card-operations/{id}/resolution': () => ({ status: 'FAILED', note: 'Dashboard line 42' }),
    'POST /v1/distributions/{id}/resolution': () => ({ status: 'ACCEPTED', note: 'Dashboard line 42' }),
    'POST /v1/events/{id}/redeliver': () => ({ endpointId: randomUUID() }),
    'POST /v1/webhook-endpoints': () => ({ url: WEBHOOK_URL, events: ['order.review_needed'], description: WEBHOOK_MARKER }),
    'PUT /v1/customer-limits/{subject}': () => ({ providerCallsPerHour: 10, note: 'Dashboard line 42' }),
    'POST /v1/customers/{subject}/erasure': () => ({ note: 'Request 42 of the customer' }),
    'PATCH /v1/webhook-endpoints/{id}': () => ({
      url: WEBHOOK_URL,
      events: ['order.failed'],
      description: WEBHOOK_MARKER,
      status: 'DISABLED',
    }),
  };
  /** Webhook endpoints the file registers: unreachable at once (no delivery leaves the machine), removed in afterAll. */
  let webhookEndpointId: string;

  const urlOf = (path: string) =>
    path
      .replace('/card-users/{id}', `/card-users/${cardUserId}`)
      .replace('/cards/{id}', `/cards/${cardId}`)
      .replace('/webhook-endpoints/{id}', `/webhook-endpoints/${webhookEndpointId}`)
      .replace('{id}', randomUUID())
      .replace('{subject}', `cost_${randomUUID().slice(0, 8)}`);
  /** 'PATCH /path' as its method and path. */
  const methodOf = (route: string) => route.split(' ')[0] as 'POST' | 'PUT' | 'PATCH';
  const pathOf = (route: string) => route.split(' ')[1];

  /** Sends one request and answers it with the longest the event loop was held while it was handled. */
  async function measured(
    url: string,
    payload: string,
    method: 'POST' | 'PUT' | 'PATCH' = 'POST',
  ): Promise<{ answer: InjectedAnswer; holdCpuMs: number }> {
    const { result, holdCpuMs } = await withLongestLoopHold(() =>
      inject(hosts.service, { method, url, token, key: randomUUID(), payload }),
    );
    return { answer: result, holdCpuMs };
  }

  /** The body-taking routes of the document, as 'POST /path' with the schema of their JSON body. */
  function bodyRoutes(): { route: string; schema: SchemaObject }[] {
    return Object.entries(document.paths).flatMap(([path, item]) =>
      (['post', 'put', 'patch', 'delete'] as const).flatMap((method) => {
        const body = item[method]?.requestBody;
        if (!body || !('content' in body)) return [];
        return [{ route: `${method.toUpperCase()} ${path}`, schema: body.content['application/json'].schema as SchemaObject }];
      }),
    );
  }

  /** The cases of one route: a name, the JSON text, and whether it must be refused without a provider call. */
  function casesOf(route: string, schema: SchemaObject): { name: string; payload: string; refused: boolean }[] {
    const valid = validBodies[route]();
    const fields = fieldsOf(document, schema, valid);
    const cases: { name: string; payload: string; refused: boolean }[] = [];
    const longest = fields.reduce(
      (body, field) =>
        isText(field.schema) && field.schema.maxLength ? withField(body, field.path, 'x'.repeat(field.schema.maxLength)) : body,
      valid,
    );
    cases.push({ name: 'every text field at its maximum length', payload: JSON.stringify(longest), refused: false });
    for (const field of fields) {
      const name = fieldName(field);
      if (isText(field.schema)) {
        cases.push({
          name: `${name}: ~900 KB of text`,
          payload: JSON.stringify(withField(valid, field.path, 'x'.repeat(HUGE_TEXT_LENGTH))),
          refused: true,
        });
      }
      if (isDecimal(field.schema)) {
        cases.push(
          {
            name: `${name}: "1." + 100,000 zeros + "1" as a string`,
            payload: JSON.stringify(withField(valid, field.path, ZEROS_DECIMAL)),
            refused: true,
          },
          {
            name: `${name}: 1. + 100,000 zeros + 1 as a JSON number`,
            payload: withLiteral(valid, field.path, ZEROS_DECIMAL),
            refused: true,
          },
          {
            name: `${name}: ~900 KB decimal as a string`,
            payload: JSON.stringify(withField(valid, field.path, HUGE_DECIMAL)),
            refused: true,
          },
          { name: `${name}: ~900 KB decimal as a JSON number`, payload: withLiteral(valid, field.path, HUGE_DECIMAL), refused: true },
        );
      }
    }
    // ~900 KB bodies: an unknown field of one long text, and 900 inexact numbers of 1,000 digits, each
    // read by the bounds pass and quoted. (Thousands of values cost the validation pipeline tens of
    // milliseconds whatever they hold: BODY_BOUNDS decides that cost, not the text of the values.)
    cases.push(
      {
        name: '~900 KB body: one unknown text field',
        payload: JSON.stringify({ ...valid, padding: 'p'.repeat(HUGE_TEXT_LENGTH) }),
        refused: true,
      },
      {
        name: '~900 KB body: 900 inexact numbers of 1,000 digits',
        payload: JSON.stringify({ ...valid, padding: [] }).replace(
          '"padding":[]',
          () =>
            `"padding":[${Array(900)
              .fill(`1.${'0'.repeat(997)}1`)
              .join(',')}]`,
        ),
        refused: true,
      },
    );
    return cases;
  }

  beforeAll(async () => {
    hosts = await startHostileHosts(
      { PROVIDER_AGENT_HOURLY_LIMIT: '1000000', PROVIDER_CUSTOMER_HOURLY_LIMIT: '1000000' },
      { agentHourlyLimit: 1_000_000 },
    );
    const seeded = await seedCustomer(hosts, { phones: ['650400001', '650400002', '650400003'], cards: 1, balance: '1000000' });
    matricules = seeded.matricules;
    cardUserId = seeded.cardUserId;
    [cardId] = seeded.cardIds;
    // The seeded customer, with every role: each route is reached past its role check.
    token = await hosts.service.bearer(seeded.owner.sub, 'customer', 'finance', 'admin');
    document = buildOpenApiDocument(hosts.service.app);
    webhookEndpointId = (
      await inject(hosts.service, {
        method: 'POST',
        url: '/v1/webhook-endpoints',
        token,
        payload: JSON.stringify(validBodies['POST /v1/webhook-endpoints']()),
      })
    ).body.id;
    // Code paths compiled and caches warm before anything is measured.
    for (const { route } of bodyRoutes()) {
      const url = urlOf(pathOf(route));
      const method = methodOf(route);
      await inject(hosts.service, { method, url, token, key: randomUUID(), payload: JSON.stringify(validBodies[route]()) });
      await inject(hosts.service, { method, url, token, key: randomUUID(), payload: '{"amount":"1.5"}' });
    }
  }, 120_000);
  afterAll(async () => {
    await hosts?.service.prisma.$executeRawUnsafe(
      'DELETE FROM webhook_endpoints WHERE url LIKE $1 OR description LIKE $1',
      `%${WEBHOOK_MARKER}%`,
    );
    await hosts?.close();
  });

  it('knows a valid body for every route of the document that takes one, and no other', () => {
    expect(
      bodyRoutes()
        .map(({ route }) => route)
        .sort(),
    ).toEqual(Object.keys(validBodies).sort());
  });

  // The routes are only known once the app runs: one test per route, each case measured in it.
  it.each(Object.keys(validBodies))('%s: no request holds the event loop', async (route) => {
    const { schema } = bodyRoutes().find((r) => r.route === route)!;
    const url = urlOf(pathOf(route));
    const method = methodOf(route);
    const held: string[] = [];
    for (const { name, payload, refused } of casesOf(route, schema)) {
      const calls = providerCalls();
      const first = await measured(url, payload, method);
      const { answer } = first;
      let { holdCpuMs } = first;
      const label = `${name} (${payload.length} bytes): ${answer.status}`;
      expect([label, answer.status < 500]).toEqual([label, true]);
      if (answer.status >= 400) expect([label, problemShapeFailure(answer)]).toEqual([label, undefined]);
      if (refused) {
        expect([label, answer.status]).toEqual([label, 400]);
        expect([label, providerCalls()]).toEqual([label, calls]);
      }
      for (let retry = 0; retry < RETRIES && holdCpuMs > MAX_LOOP_HOLD_CPU_MS; retry++)
        holdCpuMs = Math.min(holdCpuMs, (await measured(url, payload, method)).holdCpuMs);
      if (holdCpuMs > MAX_LOOP_HOLD_CPU_MS) held.push(`${label}: loop held for ${holdCpuMs.toFixed(0)} ms of CPU`);
    }
    expect(held).toEqual([]);
  });

  it('refuses decimal text longer than 40 characters field by field, with a clear message', async () => {
    const { answer } = await measured('/v1/orders', JSON.stringify(orderRequest({ amount: ZEROS_DECIMAL })));
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toEqual([{ field: 'amount', message: 'amount must be a decimal of at most 40 characters' }]);
  });
});
