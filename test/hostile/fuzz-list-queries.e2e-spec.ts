import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { CALLBACK_RESULTS } from '../../src/callbacks/callbacks.dto';
import { CARD_OPERATION_KINDS, CARD_OPERATION_STATUSES, CARD_STATUSES } from '../../src/cards/card.types';
import { DISTRIBUTION_KINDS, DISTRIBUTION_STATUSES } from '../../src/distributions/distribution.types';
import { ORDER_STATUSES } from '../../src/orders/order.types';
import { EVENT_TYPES } from '../../src/webhooks/event-body';
import { TEST_WALLETS } from '../../src/sandbox/test-wallets';
import { cardUserRequest } from '../support/cards-factories';
import { orderRequest } from '../support/provider-factories';
import { apiUser, uniqueLinkEmail, type LinkHosts } from '../wallet-links/link-hosts';
import {
  encodeUrlText,
  fuzzParameters,
  hostileKey,
  hostileUrlText,
  printStatusTally,
  sendAndCheck,
  urlWithQuery,
} from './fuzz-arbitraries';
import { inject, postJson, startHostileHosts } from './hostile-harness';

type ParamValues = Record<string, fc.Arbitrary<string>>;

/**
 * Property-based fuzzing of every list query (issue 10): valid queries with parameters replaced,
 * repeated, removed or added (hostile text percent-encoded, malformed percent-encoding, forged
 * cursors naming any instant JavaScript can hold, out-of-range limits and dates), and arbitrary
 * query strings. Never an answer of 500 or more, every error problem+json, no provider call for a
 * refusal (card transactions ask the provider when the query is valid).
 */
describe('fuzz: every list query', () => {
  let hosts: LinkHosts;
  let customer: string;
  let finance: string;
  let admin: string;
  let cardUserId: string;
  let cardId: string;
  /** nextCursor values the API really returned, one per list. */
  const realCursors: Record<string, string> = {};

  const providerCalls = () => hosts.base.state.requests.length + hosts.link.state.requests.length;

  beforeAll(async () => {
    hosts = await startHostileHosts(
      { PROVIDER_AGENT_HOURLY_LIMIT: '1000000', PROVIDER_CUSTOMER_HOURLY_LIMIT: '1000000' },
      { agentHourlyLimit: 1_000_000 },
    );
    const owner = await apiUser(hosts.service);
    customer = owner.token;
    finance = await hosts.service.bearer(`fin_${randomUUID().slice(0, 6)}`, 'finance');
    admin = await hosts.service.bearer(`adm_${randomUUID().slice(0, 6)}`, 'admin');
    // Two of everything, so that every list has a real next page.
    const links: string[] = [];
    for (const phone of ['650400001', '650400002']) {
      const res = await owner.createLink({ email: uniqueLinkEmail('benef'), phone, phoneCountry: '+237' });
      expect(res.status).toBe(201);
      links.push(res.body.matricule);
    }
    for (let i = 0; i < 2; i++) {
      expect((await postJson(hosts.service, '/v1/orders', customer, orderRequest({ wallet: TEST_WALLETS.NO_CALLBACK }))).status).toBe(201);
      await hosts.syncTokens();
      const fiat = { payer: 'Awa Ndiaye', amount: '100', currency: 'XAF', distribution: [{ matricule: links[i], rate: '50' }] };
      expect((await postJson(hosts.service, '/v1/distributions/fiat', admin, fiat)).status).toBe(201);
    }
    for (let i = 0; i < 2; i++) {
      const user = await postJson(hosts.service, '/v1/card-users', customer, cardUserRequest());
      expect(user.status).toBe(201);
      cardUserId = user.body.id;
    }
    for (let i = 0; i < 2; i++) {
      const card = await postJson(hosts.service, `/v1/card-users/${cardUserId}/cards`, customer, { balance: '1000', currency: 'XAF' });
      expect(card.status).toBe(201);
      cardId = card.body.id;
    }
    expect((await postJson(hosts.service, `/v1/cards/${cardId}/topup`, customer, { amount: '10' })).status).toBe(200);
    for (const list of lists()) {
      const first = await inject(hosts.service, { method: 'GET', url: `${list.path()}?limit=1`, token: list.token() });
      if (typeof first.body?.nextCursor === 'string') realCursors[list.name] = first.body.nextCursor;
    }
  });
  afterAll(async () => {
    printStatusTally();
    await hosts?.close();
  });

  const instant = fc.oneof(
    fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
    fc.date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }).map((d) => d.toISOString()),
    fc.constantFrom(
      '2026-11-01T00:00:00Z',
      '2026-11-01',
      '2026-02-30',
      '2026-01-01T25:00:00Z',
      '2026-01-01T00:00:00+99:99',
      '0000-01-01T00:00:00Z',
      '9999-12-31T23:59:59.999Z',
      '+275760-09-13T00:00:00.000Z',
      '-271821-04-20T00:00:00.000Z',
      '1970-01-01T00:00:00.000001Z',
    ),
  );
  /** Cursors: any instant JavaScript can hold with a UUID, hostile text in their place, and garbage. */
  const forgedCursor = fc.oneof(
    fc.tuple(instant, fc.uuid()).map(([at, id]) => Buffer.from(`${at}|${id}`).toString('base64url')),
    fc
      .tuple(fc.string({ unit: 'binary', maxLength: 30 }), fc.oneof(fc.uuid().map(String), fc.string({ maxLength: 40 })))
      .map(([at, id]) => Buffer.from(`${at}|${id}`).toString('base64url')),
    fc
      .oneof(fc.integer(), fc.constantFrom(1e10, 2 ** 31, -1), fc.string({ maxLength: 12 }))
      .map((n) => Buffer.from(`offset:${n}`).toString('base64url')),
    fc.string({ unit: 'binary', maxLength: 60 }).map((text) => Buffer.from(text).toString('base64url')),
  );
  const limit = fc.oneof(
    fc.constantFrom('1', '2', '50', '200', '0', '201', '-1', '1.5', '1e2', '0x10', '', ' 5', '99999999999999999999', 'NaN'),
    fc.integer().map(String),
  );
  const oneOf = (values: readonly string[]) =>
    fc.oneof(
      fc.constantFrom(...values),
      fc.constantFrom(...values).map((v) => v.toLowerCase()),
    );
  const boolText = fc.constantFrom('true', 'false', '1', '0', 'yes', '');

  const page = (name: string): ParamValues => ({ limit, cursor: fc.oneof(forgedCursor, fc.constant(realCursors[name] ?? 'none')) });
  const period: ParamValues = { from: instant, to: instant };

  /** Every list query of the controllers, with its caller and its parameters' plausible values. */
  function lists(): { name: string; path: () => string; idRoute?: boolean; token: () => string; params: ParamValues }[] {
    return [
      {
        name: 'GET /v1/orders (customer)',
        path: () => '/v1/orders',
        token: () => customer,
        params: {
          ...page('GET /v1/orders (customer)'),
          ...period,
          status: oneOf(ORDER_STATUSES),
          currency: fc.constantFrom('XAF', 'EUR', 'xaf', 'ZZZ'),
          needsReview: boolText,
        },
      },
      {
        name: 'GET /v1/orders (finance)',
        path: () => '/v1/orders',
        token: () => finance,
        params: {
          ...page('GET /v1/orders (finance)'),
          ...period,
          status: oneOf(ORDER_STATUSES),
          currency: fc.constantFrom('XAF', 'EUR'),
          needsReview: boolText,
        },
      },
      {
        name: 'GET /v1/orders/export.csv',
        path: () => '/v1/orders/export.csv',
        token: () => finance,
        params: { ...period, status: oneOf(ORDER_STATUSES), currency: fc.constantFrom('XAF', 'EUR'), needsReview: boolText },
      },
      { name: 'GET /v1/reports/summary', path: () => '/v1/reports/summary', token: () => finance, params: period },
      {
        name: 'GET /v1/callbacks',
        path: () => '/v1/callbacks',
        token: () => finance,
        params: {
          ...page('GET /v1/callbacks'),
          ...period,
          orderId: fc.oneof(fc.uuid().map(String), fc.string({ maxLength: 40 })),
          outcome: fc.constantFrom('success', 'failure'),
          result: oneOf(CALLBACK_RESULTS),
        },
      },
      { name: 'GET /v1/card-users', path: () => '/v1/card-users', token: () => customer, params: page('GET /v1/card-users') },
      {
        name: 'GET /v1/card-users/{id}/operations',
        path: () => `/v1/card-users/${cardUserId}/operations`,
        idRoute: true,
        token: () => customer,
        params: {
          ...page('GET /v1/card-users/{id}/operations'),
          kind: oneOf(CARD_OPERATION_KINDS),
          status: oneOf(CARD_OPERATION_STATUSES),
        },
      },
      {
        name: 'GET /v1/cards',
        path: () => '/v1/cards',
        token: () => customer,
        params: {
          ...page('GET /v1/cards'),
          cardUserId: fc.oneof(fc.constant(cardUserId), fc.uuid().map(String), fc.string({ maxLength: 40 })),
          status: oneOf(CARD_STATUSES),
        },
      },
      {
        name: 'GET /v1/cards/{id}/operations',
        path: () => `/v1/cards/${cardId}/operations`,
        idRoute: true,
        token: () => customer,
        params: { ...page('GET /v1/cards/{id}/operations'), kind: oneOf(CARD_OPERATION_KINDS), status: oneOf(CARD_OPERATION_STATUSES) },
      },
      {
        name: 'GET /v1/cards/{id}/transactions',
        path: () => `/v1/cards/${cardId}/transactions`,
        idRoute: true,
        token: () => customer,
        params: page('GET /v1/cards/{id}/transactions'),
      },
      {
        name: 'GET /v1/distributions',
        path: () => '/v1/distributions',
        token: () => admin,
        params: { ...page('GET /v1/distributions'), ...period, kind: oneOf(DISTRIBUTION_KINDS), status: oneOf(DISTRIBUTION_STATUSES) },
      },
      { name: 'GET /v1/wallet-links', path: () => '/v1/wallet-links', token: () => customer, params: page('GET /v1/wallet-links') },
      {
        name: 'GET /v1/events',
        path: () => '/v1/events',
        token: () => finance,
        params: { ...page('GET /v1/events'), ...period, type: oneOf(EVENT_TYPES), resourceId: fc.uuid().map(String) },
      },
      {
        name: 'GET /v1/webhook-endpoints',
        path: () => '/v1/webhook-endpoints',
        token: () => admin,
        params: { ...page('GET /v1/webhook-endpoints'), status: oneOf(['ENABLED', 'DISABLED']) },
      },
    ];
  }

  /**
   * A query: some of the list's parameters with plausible values (encoded), then one to three
   * mutations (a value made hostile, a key repeated, an unknown or hostile key added), or an
   * arbitrary query string.
   */
  function hostileQuery(params: ParamValues): fc.Arbitrary<[string, string][]> {
    const names = Object.keys(params);
    const plausible = fc
      .subarray(names)
      .chain((chosen) => fc.tuple(...chosen.map((name) => params[name].map((v): [string, string] => [name, encodeUrlText(v)]))));
    const mutation = fc.oneof(
      fc.tuple(fc.constantFrom(...names), hostileUrlText).map(
        ([name, value]) =>
          (q: [string, string][]) =>
            [...q.filter(([k]) => k !== name), [name, value]] as [string, string][],
      ),
      fc
        .constantFrom(...names)
        .map((name) => (q: [string, string][]) => [...q, ...q.filter(([k]) => k === name), [name, 'x']] as [string, string][]),
      fc.tuple(hostileKey, hostileUrlText).map(
        ([key, value]) =>
          (q: [string, string][]) =>
            [...q, [encodeUrlText(key), value]] as [string, string][],
      ),
      fc
        .tuple(
          fc.constantFrom('__proto__', 'constructor', 'toString', 'prototype', '__proto__[x]', 'limit[]', 'a[b]'),
          fc.constantFrom('1', 'x', '%00'),
        )
        .map(
          ([key, value]) =>
            (q: [string, string][]) =>
              [...q, [key, value]] as [string, string][],
        ),
    );
    const mutated = fc
      .tuple(plausible, fc.array(mutation, { maxLength: 3 }))
      .map(([query, mutations]) => mutations.reduce((q, mutate) => mutate(q), query));
    const arbitrary = fc.array(fc.tuple(hostileUrlText, hostileUrlText), { maxLength: 5 });
    return fc.oneof({ weight: 5, arbitrary: mutated }, { weight: 1, arbitrary });
  }

  it.each(lists().map((list) => [list.name] as const))(
    '%s',
    async (name) => {
      const list = lists().find((l) => l.name === name)!;
      const target = list.idRoute
        ? fc.oneof(
            { weight: 6, arbitrary: fc.constant(undefined) },
            { weight: 1, arbitrary: fc.oneof(hostileUrlText, fc.uuid().map(String)) },
          )
        : fc.constant(undefined);
      const caller = fc.oneof(
        { weight: 18, arbitrary: fc.constant('own') },
        { weight: 1, arbitrary: fc.constant('customer') },
        { weight: 1, arbitrary: fc.constant('anonymous') },
      );
      await fc.assert(
        fc.asyncProperty(hostileQuery(list.params), target, caller, async (query, id, who) => {
          const path = id === undefined ? list.path() : list.path().replace(/[0-9a-f-]{36}/, id);
          const token = who === 'own' ? list.token() : who === 'customer' ? customer : undefined;
          await sendAndCheck(hosts.service, providerCalls, { method: 'GET', url: urlWithQuery(path, query), token, key: null });
        }),
        fuzzParameters(name),
      );
    },
    600_000,
  );
});
