import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { TEST_WALLETS } from '../../src/sandbox/test-wallets';
import { cardUserRequest } from '../support/cards-factories';
import { orderRequest } from '../support/provider-factories';
import { uniqueLinkEmail, type LinkHosts } from '../wallet-links/link-hosts';
import { fuzzParameters, hostileBody, hostileUrlText, printStatusTally, sendAndCheck } from './fuzz-arbitraries';
import { postJson, seedCustomer, startHostileHosts } from './hostile-harness';

/**
 * Property-based fuzzing of every POST route (issue 10): near-valid bodies (one to three fields
 * mutated: NUL, surrogates, huge numbers, wrong types, extra keys such as `__proto__`, nested
 * arrays, removed fields) and arbitrary JSON or non-JSON. Whatever arrives: never an answer of
 * 500 or more, every error problem+json with `status` and `code`, no provider call for a refusal.
 * Valid bodies may create what they describe (2xx): the provider is then called, as it should be.
 */
const WEBHOOK_MARKER = `fuzz-${randomUUID().slice(0, 8)}`;

describe('fuzz: every POST route', () => {
  let hosts: LinkHosts;
  let customer: string;
  let stranger: string;
  let admin: string;
  let matricules: string[];
  let cardUserId: string;
  let cardId: string;
  let terminatedCardId: string;
  let eventId: string;

  const providerCalls = () => hosts.base.state.requests.length + hosts.link.state.requests.length;

  beforeAll(async () => {
    // Budgets out of the way: thousands of valid bodies reach the provider on purpose.
    hosts = await startHostileHosts(
      { PROVIDER_AGENT_HOURLY_LIMIT: '1000000', PROVIDER_CUSTOMER_HOURLY_LIMIT: '1000000' },
      { agentHourlyLimit: 1_000_000 },
    );
    const seeded = await seedCustomer(hosts, { phones: ['650300001', '650300002', '650300003'], cards: 2, balance: '1000000' });
    customer = seeded.token;
    matricules = seeded.matricules;
    cardUserId = seeded.cardUserId;
    const cards = seeded.cardIds;
    stranger = await hosts.service.bearer(`cust_${randomUUID().slice(0, 8)}`);
    admin = await hosts.service.bearer(`adm_${randomUUID().slice(0, 6)}`, 'admin');
    [cardId, terminatedCardId] = cards;
    expect((await postJson(hosts.service, `/v1/cards/${terminatedCardId}/terminate`, customer, {})).status).toBe(200);
    // The termination's event (card_operation.succeeded): what redeliveries aim at.
    const [event] = await hosts.service.prisma.$queryRawUnsafe<{ id: string }[]>(
      'SELECT id FROM events ORDER BY created_at DESC, id DESC LIMIT 1',
    );
    eventId = event.id;
  });
  afterAll(async () => {
    printStatusTally();
    await hosts?.service.prisma.$executeRawUnsafe(
      'DELETE FROM webhook_endpoints WHERE url LIKE $1 OR description LIKE $1',
      `%${WEBHOOK_MARKER}%`,
    );
    await hosts?.close();
  });

  /** Every POST route of the controllers, with a valid body and the role that may call it. */
  // Freeze, unfreeze and terminate take no body, so nearly every case would reach the provider:
  // they aim mostly at a terminated card (409, nothing sent) and now and then at the live one.
  const stateRoute = (action: string) => (live: boolean) => `/v1/cards/${live ? cardId : terminatedCardId}/${action}`;
  const routes: {
    name: string;
    path: (live: boolean) => string;
    idRoute?: boolean;
    noBody?: boolean;
    token: () => string;
    body: () => Record<string, unknown>;
  }[] = [
    {
      name: 'POST /v1/orders',
      path: () => '/v1/orders',
      token: () => customer,
      body: () => orderRequest({ wallet: TEST_WALLETS.NO_CALLBACK }),
    },
    { name: 'POST /v1/card-users', path: () => '/v1/card-users', token: () => customer, body: () => cardUserRequest() },
    {
      name: 'POST /v1/card-users/{id}/cards',
      path: () => `/v1/card-users/${cardUserId}/cards`,
      idRoute: true,
      token: () => customer,
      body: () => ({ balance: '5000', currency: 'XAF' }),
    },
    {
      name: 'POST /v1/cards/{id}/topup',
      path: () => `/v1/cards/${cardId}/topup`,
      idRoute: true,
      token: () => customer,
      body: () => ({ amount: '10' }),
    },
    {
      name: 'POST /v1/cards/{id}/withdraw',
      path: () => `/v1/cards/${cardId}/withdraw`,
      idRoute: true,
      token: () => customer,
      body: () => ({ amount: '1' }),
    },
    {
      name: 'POST /v1/cards/{id}/freeze',
      path: stateRoute('freeze'),
      idRoute: true,
      noBody: true,
      token: () => customer,
      body: () => ({}),
    },
    {
      name: 'POST /v1/cards/{id}/unfreeze',
      path: stateRoute('unfreeze'),
      idRoute: true,
      noBody: true,
      token: () => customer,
      body: () => ({}),
    },
    {
      name: 'POST /v1/cards/{id}/terminate',
      path: stateRoute('terminate'),
      idRoute: true,
      noBody: true,
      token: () => customer,
      body: () => ({}),
    },
    {
      name: 'POST /v1/wallet-links',
      path: () => '/v1/wallet-links',
      token: () => customer,
      body: () => ({ email: uniqueLinkEmail('fuzz'), phone: '650300009', phoneCountry: '+237' }),
    },
    {
      name: 'POST /v1/distributions',
      path: () => '/v1/distributions',
      token: () => admin,
      body: () => ({
        paymentReceiver: matricules[0],
        paymentId: `pay_${randomUUID()}`,
        amount: '10000',
        currency: 'XAF',
        distribution: [
          { matricule: matricules[1], rate: '33.33' },
          { matricule: matricules[2], rate: 20 },
        ],
      }),
    },
    {
      name: 'POST /v1/distributions/fiat',
      path: () => '/v1/distributions/fiat',
      token: () => admin,
      body: () => ({
        payer: 'Awa Ndiaye',
        amount: '250.75',
        currency: 'EUR',
        distribution: [
          { matricule: matricules[1], rate: 60 },
          { matricule: matricules[2], rate: '40' },
        ],
      }),
    },
    {
      name: 'POST /v1/events/{id}/redeliver',
      path: () => `/v1/events/${eventId}/redeliver`,
      idRoute: true,
      token: () => admin,
      body: () => ({}),
    },
    {
      name: 'POST /v1/webhook-endpoints',
      path: () => '/v1/webhook-endpoints',
      token: () => admin,
      // Unreachable at once: no delivery leaves the machine; afterAll removes them.
      body: () => ({ url: `https://127.0.0.1:9/${WEBHOOK_MARKER}`, events: ['order.review_needed'], description: WEBHOOK_MARKER }),
    },
  ];

  it.each(routes.map((route) => [route.name, route] as const))(
    '%s',
    async (name, route) => {
      // Mostly the route's own caller on its own resource; sometimes a foreign or hostile id, another
      // customer, no token, or an Idempotency-Key that is missing or odd.
      const target = route.idRoute
        ? fc.oneof(
            { weight: 5, arbitrary: fc.constant(undefined) },
            { weight: 1, arbitrary: fc.oneof(hostileUrlText, fc.uuid().map(String)) },
          )
        : fc.constant(undefined);
      const caller = fc.oneof(
        { weight: 18, arbitrary: fc.constant('own') },
        { weight: 1, arbitrary: fc.constant('stranger') },
        { weight: 1, arbitrary: fc.constant('anonymous') },
      );
      const key = fc.oneof(
        { weight: 18, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constant(null) },
        { weight: 1, arbitrary: fc.constantFrom('', ' ', 'k'.repeat(300), 'é', 'a b') },
      );
      const live = route.noBody
        ? fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) })
        : fc.constant(true);
      await fc.assert(
        fc.asyncProperty(hostileBody(route.body), target, caller, key, live, async (payload, id, who, idempotencyKey, onLiveCard) => {
          const path = id === undefined ? route.path(onLiveCard) : route.path(onLiveCard).replace(/[0-9a-f-]{36}/, id);
          const token = who === 'own' ? route.token() : who === 'stranger' ? stranger : undefined;
          await sendAndCheck(hosts.service, providerCalls, { method: 'POST', url: path, token, key: idempotencyKey, payload });
        }),
        fuzzParameters(name),
      );
    },
    600_000,
  );
});
