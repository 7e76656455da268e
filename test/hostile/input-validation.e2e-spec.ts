import { randomUUID } from 'node:crypto';
import { cardUserRequest } from '../support/cards-factories';
import { orderRequest } from '../support/provider-factories';
import { uniqueLinkEmail, type LinkHosts } from '../wallet-links/link-hosts';
import { inject, postJson, problemShapeFailure, seedCustomer, startHostileHosts, type InjectedAnswer } from './hostile-harness';

/**
 * Hostile text and structure, route by route: every one is a 400 problem+json naming the field,
 * before anything is stored or sent to the provider (issue 10).
 */
describe('hostile input: refused with 400 before anything is stored or sent', () => {
  let hosts: LinkHosts;
  let customerToken: string;
  let adminToken: string;
  let financeToken: string;
  let matricules: string[];
  let cardUserId: string;
  let cardId: string;

  const providerRequests = () => hosts.base.state.requests.length + hosts.link.state.requests.length;
  const rowCounts = async () => {
    const p = hosts.service.prisma;
    return [
      await p.order.count(),
      await p.cardUser.count(),
      await p.card.count(),
      await p.cardOperation.count(),
      await p.walletLink.count(),
      await p.distribution.count(),
    ];
  };

  beforeAll(async () => {
    hosts = await startHostileHosts();
    const seeded = await seedCustomer(hosts, { phones: ['650200001', '650200002'], cards: 1, balance: '5000' });
    customerToken = seeded.token;
    matricules = seeded.matricules;
    cardUserId = seeded.cardUserId;
    cardId = seeded.cardIds[0];
    adminToken = await hosts.service.bearer(`adm_${randomUUID().slice(0, 6)}`, 'admin');
    financeToken = await hosts.service.bearer(`fin_${randomUUID().slice(0, 6)}`, 'finance');
  });
  afterAll(async () => {
    await hosts?.close();
  });
  beforeEach(async () => {
    await hosts.syncTokens();
  });

  /** Each POST route with a valid body and who may call it. */
  const routes = (): { name: string; url: string; token: string; body: Record<string, unknown> }[] => [
    { name: 'orders', url: '/v1/orders', token: customerToken, body: orderRequest() },
    { name: 'card users', url: '/v1/card-users', token: customerToken, body: cardUserRequest() },
    { name: 'cards', url: `/v1/card-users/${cardUserId}/cards`, token: customerToken, body: { balance: '5000', currency: 'XAF' } },
    { name: 'card top-up', url: `/v1/cards/${cardId}/topup`, token: customerToken, body: { amount: '10' } },
    { name: 'card withdraw', url: `/v1/cards/${cardId}/withdraw`, token: customerToken, body: { amount: '10' } },
    {
      name: 'wallet links',
      url: '/v1/wallet-links',
      token: customerToken,
      body: { email: uniqueLinkEmail(), phone: '650200009', phoneCountry: '+237' },
    },
    {
      name: 'distributions',
      url: '/v1/distributions',
      token: adminToken,
      body: {
        paymentReceiver: matricules[0],
        paymentId: `pay_${randomUUID()}`,
        amount: '1000',
        currency: 'XAF',
        distribution: [{ matricule: matricules[1], rate: '50' }],
      },
    },
    {
      name: 'fiat distributions',
      url: '/v1/distributions/fiat',
      token: adminToken,
      body: { payer: 'Awa Ndiaye', amount: '1000', currency: 'XAF', distribution: [{ matricule: matricules[1], rate: '50' }] },
    },
  ];

  async function expectRefused(answer: InjectedAnswer, field: string, before: { calls: number; rows: number[] }) {
    expect({ status: answer.status, problem: problemShapeFailure(answer) }).toEqual({ status: 400, problem: undefined });
    expect(answer.body.code).toBe('validation_failed');
    expect(answer.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    expect(providerRequests()).toBe(before.calls);
    expect(await rowCounts()).toEqual(before.rows);
  }

  const textFieldsOf = (body: Record<string, unknown>) => Object.keys(body).filter((k) => typeof body[k] === 'string');

  describe.each([
    ['a NUL character', (s: string) => `${s.slice(0, 1)}\u0000${s.slice(1)}`],
    ['a lone high surrogate', (s: string) => `${s.slice(0, 1)}\ud800${s.slice(1)}`],
    ['a lone low surrogate at the end', (s: string) => `${s}\udfff`],
    ['surrogates in the wrong order', (s: string) => `${s}\udc00\ud800`],
  ])('%s in any text field', (_what, corrupt) => {
    it('is refused field by field on every POST route', async () => {
      for (const route of routes()) {
        for (const field of textFieldsOf(route.body)) {
          const before = { calls: providerRequests(), rows: await rowCounts() };
          const answer = await postJson(hosts.service, route.url, route.token, {
            ...route.body,
            [field]: corrupt(String(route.body[field])),
          });
          try {
            await expectRefused(answer, field, before);
          } catch (error) {
            throw new Error(`${route.name}.${field}: ${answer.status} ${answer.raw.slice(0, 300)}\n${String(error)}`, { cause: error });
          }
        }
      }
    });

    it('in a nested distribution entry, names the entry', async () => {
      const route = routes().find((r) => r.name === 'distributions')!;
      const before = { calls: providerRequests(), rows: await rowCounts() };
      const answer = await postJson(hosts.service, route.url, route.token, {
        ...route.body,
        distribution: [{ matricule: corrupt(matricules[1]), rate: '50' }],
      });
      await expectRefused(answer, 'distribution[0].matricule', before);
    });
  });

  it('a well-formed surrogate pair (an emoji) is text like any other', async () => {
    const answer = await postJson(hosts.service, '/v1/orders', customerToken, orderRequest({ description: 'Tickets 🎫 x2' }));
    expect(answer.status).toBe(201);
    expect(answer.body.description).toBe('Tickets 🎫 x2');
  });

  it('a card user with a NUL or a lone surrogate never reaches the provider: no orphan provider user, and the key stays free', async () => {
    const key = randomUUID();
    const usersAtProvider = () => hosts.base.state.requestsTo('/api/action/card*').length;
    for (const body of [
      cardUserRequest({ lastName: 'Nd\u0000iaye' }),
      cardUserRequest({ email: 'awa\ud800@example.com' }),
      cardUserRequest({ firstName: '\udc00' }),
    ]) {
      const before = usersAtProvider();
      const answer = await postJson(hosts.service, '/v1/card-users', customerToken, body, key);
      expect(answer.status).toBe(400);
      expect(usersAtProvider()).toBe(before);
    }
    // Refused input is not the key's answer: the same key with a good body creates the user.
    const good = await postJson(hosts.service, '/v1/card-users', customerToken, cardUserRequest(), key);
    expect(good.status).toBe(201);
  });

  describe('a card user: nothing the local insert would refuse is found out after the provider call', () => {
    it('an answer whose user_id or reference is not storable text is 502 provider_bad_response, not 500, and nothing is stored', async () => {
      for (const created of [
        { user_id: 'usr_\u0000bad', reference: 'CU0000000000001' },
        { user_id: 'usr_ok', reference: 'CU\ud800' },
        { user_id: 'x'.repeat(5000), reference: 'CU0000000000002' },
      ]) {
        hosts.base.state.injectFault({ path: '/api/action/card/user', method: 'POST', status: 200, body: created });
        const before = await hosts.service.prisma.cardUser.count();
        const answer = await postJson(hosts.service, '/v1/card-users', customerToken, cardUserRequest());
        expect({ status: answer.status, code: answer.body?.code, problem: problemShapeFailure(answer) }).toEqual({
          status: 502,
          code: 'provider_bad_response',
          problem: undefined,
        });
        expect(await hosts.service.prisma.cardUser.count()).toBe(before);
      }
    });

    it("an answer naming a user already stored (another customer's) is 502 provider_bad_response, not 500, and no one gets the other's user", async () => {
      const existing = await hosts.service.prisma.cardUser.findUniqueOrThrow({ where: { id: cardUserId } });
      hosts.base.state.injectFault({
        path: '/api/action/card/user',
        method: 'POST',
        status: 200,
        body: { user_id: existing.providerUserId, reference: existing.providerReference },
      });
      const intruder = await hosts.service.bearer(`cust_${randomUUID().slice(0, 8)}`);
      const answer = await postJson(hosts.service, '/v1/card-users', intruder, cardUserRequest());
      expect({ status: answer.status, code: answer.body?.code }).toEqual({ status: 502, code: 'provider_bad_response' });
      expect(await hosts.service.prisma.cardUser.count({ where: { providerUserId: existing.providerUserId } })).toBe(1);
    });

    it('a refresh whose texts are not storable answers the stored copy (200), not 500', async () => {
      const existing = await hosts.service.prisma.cardUser.findUniqueOrThrow({ where: { id: cardUserId } });
      hosts.base.state.injectFault({
        path: `/api/action/card/user/${existing.providerReference}`,
        status: 200,
        body: {
          user_id: existing.providerUserId,
          first_name: 'A\u0000wa',
          last_name: '\udc00',
          email: 'x\u0000@example.com',
          cards: ['card\u0000'],
        },
      });
      const answer = await inject(hosts.service, { method: 'GET', url: `/v1/card-users/${cardUserId}`, token: customerToken });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ firstName: existing.firstName, lastName: existing.lastName, email: existing.email });
    });

    it('a bearer token whose sub is not storable text is 401 before anything is sent', async () => {
      for (const sub of ['cust\u0000x', 'cust\ud800']) {
        const before = providerRequests();
        const token = await hosts.service.bearer(sub);
        const answer = await postJson(hosts.service, '/v1/card-users', token, cardUserRequest());
        expect({ status: answer.status, problem: problemShapeFailure(answer) }).toEqual({ status: 401, problem: undefined });
        expect(providerRequests()).toBe(before);
      }
    });
  });

  it.each(['toString', 'valueOf', 'constructor', 'prototype', 'hasOwnProperty', '__proto__', '__defineGetter__', 'isPrototypeOf'])(
    'an unknown field named %s is refused like any other unknown field',
    async (name) => {
      for (const route of routes()) {
        const before = { calls: providerRequests(), rows: await rowCounts() };
        // JSON text, not an object literal: `__proto__` must arrive as an own key.
        const payload = JSON.stringify(route.body).replace(/^\{/, `{"${name}":"x",`);
        const answer = await inject(hosts.service, { method: 'POST', url: route.url, token: route.token, key: randomUUID(), payload });
        if (name === '__proto__' && answer.status === 400 && answer.body?.code !== 'validation_failed') continue; // Fastify's own prototype-poisoning refusal
        try {
          await expectRefused(answer, name, before);
        } catch (error) {
          throw new Error(`${route.name}: ${answer.status} ${answer.raw.slice(0, 300)}\n${String(error)}`, { cause: error });
        }
      }
    },
  );

  it.each([
    ['an empty array', [[]]],
    ['an array of arrays', [[{ matricule: 'MAT1', rate: '10' }]]],
    ['a string', ['MAT1']],
    ['null', [null]],
    ['a number', [7]],
  ])('a distribution entry that is %s is refused by field', async (_what, distribution) => {
    for (const route of routes().filter((r) => r.name.includes('distributions'))) {
      const before = { calls: providerRequests(), rows: await rowCounts() };
      const answer = await postJson(hosts.service, route.url, route.token, { ...route.body, distribution });
      await expectRefused(answer, 'distribution[0]', before);
    }
  });

  describe('a cursor that does not decode to a valid position is 400', () => {
    const position = (at: string, id: string = randomUUID()) => Buffer.from(`${at}|${id}`).toString('base64url');
    const lists = () => [
      ['/v1/orders', customerToken],
      ['/v1/orders', financeToken],
      ['/v1/callbacks', financeToken],
      ['/v1/card-users', customerToken],
      [`/v1/card-users/${cardUserId}/operations`, customerToken],
      ['/v1/cards', customerToken],
      [`/v1/cards/${cardId}/operations`, customerToken],
      ['/v1/wallet-links', customerToken],
      ['/v1/distributions', adminToken],
    ];
    it.each([
      ['a date beyond PostgreSQL (year 275760)', position('+275760-09-13T00:00:00.000Z')],
      ['a date before PostgreSQL (271821 BC)', position('-271821-04-20T00:00:00.000Z')],
      ['a date in another spelling', position('1 Jan 2026')],
      ['a date with a NUL', position('2026-01-01T00:00:00.000Z\u0000')],
      ['an id that is not a UUID', position('2026-01-01T00:00:00.000Z', 'x')],
      ['garbage', '%%%'],
      ['a NUL', '\u0000'],
    ])('%s', async (_what, cursor) => {
      for (const [url, token] of lists()) {
        const answer = await inject(hosts.service, { method: 'GET', url, token, query: { cursor } });
        expect({ url, status: answer.status, problem: problemShapeFailure(answer) }).toEqual({ url, status: 400, problem: undefined });
        expect(answer.body.errors?.map((e: { field: string }) => e.field)).toContain('cursor');
      }
    });

    it('the card transactions offset cursor too', async () => {
      for (const cursor of [
        Buffer.from('offset:99999999999').toString('base64url'),
        Buffer.from('offset:-1').toString('base64url'),
        '\u0000',
      ]) {
        const answer = await inject(hosts.service, {
          method: 'GET',
          url: `/v1/cards/${cardId}/transactions`,
          token: customerToken,
          query: { cursor },
        });
        expect(answer.status).toBe(400);
      }
    });

    it('a cursor the API returned still works', async () => {
      await postJson(hosts.service, '/v1/orders', customerToken, orderRequest());
      await postJson(hosts.service, '/v1/orders', customerToken, orderRequest());
      const first = await inject(hosts.service, { method: 'GET', url: '/v1/orders', token: customerToken, query: { limit: '1' } });
      expect(first.body.nextCursor).toEqual(expect.any(String));
      const second = await inject(hosts.service, {
        method: 'GET',
        url: '/v1/orders',
        token: customerToken,
        query: { limit: '1', cursor: first.body.nextCursor },
      });
      expect(second.status).toBe(200);
      expect(second.body.items[0].id).not.toBe(first.body.items[0].id);
    });
  });

  it.each([
    ['a year beyond PostgreSQL', { from: '+275760-01-01T00:00:00Z' }],
    ['an offset out of range', { to: '2026-01-01T00:00:00+99:99' }],
    ['a NUL', { from: '2026-01-01\u0000' }],
    ['a lone surrogate in a filter', { status: 'PENDING\ud800' }],
  ])('a time window or filter with %s is 400 on every list, the summary and the export', async (_what, query) => {
    for (const [url, token] of [
      ['/v1/orders', financeToken],
      ['/v1/orders/export.csv', financeToken],
      ['/v1/reports/summary', financeToken],
      ['/v1/callbacks', financeToken],
      ['/v1/distributions', adminToken],
    ] as const) {
      const answer = await inject(hosts.service, { method: 'GET', url, token, query: query });
      if ('status' in query && !['/v1/orders', '/v1/orders/export.csv'].includes(url)) continue;
      expect({ url, status: answer.status, problem: problemShapeFailure(answer) }).toEqual({ url, status: 400, problem: undefined });
    }
  });
});
