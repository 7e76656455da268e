import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { CardsModule } from '../../src/cards/cards.module';
import { ID_NUMBER_PURPOSE } from '../../src/cards/card-users.service';
import { SecretBox } from '../../src/common/secret-box';
import type { RecordedRequest } from '../../src/sandbox/sandbox.state';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { cardsClient, cardUserRequest, userWithCard, type CardsClientOf } from '../support/cards-factories';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/**
 * Every card route against the sandbox, with the provider's card parameter names and
 * x-sp-auth-token set to non-default values on both sides: what reaches the provider is asserted
 * on the wire (path, method, headers, query, body).
 */
describe('virtual cards end to end', () => {
  const SP_TOKEN = 'sp-token-cards-e2e-5f4e3d2c1b';
  const PARAMS = { operation: 'op_sel', amount: 'amt_value', currency: 'cur_code' };
  let sandbox: RunningSandbox;
  let service: TestService;
  let alice: CardsClientOf;

  const requestsTo = (path: string, method?: string) => sandbox.state.requestsTo(path, method);
  const operationCalls = (providerCardId: string) => requestsTo(`/api/action/card/transaction/${providerCardId}`, 'GET');
  const cardCalls = () => requestsTo('/api/action/card*');

  /** The provider saw our bearer token (one it issued and still honours) and the configured x-sp-auth-token. */
  function expectProviderAuth(req: RecordedRequest) {
    expect(req.headers['x-sp-auth-token']).toBe(SP_TOKEN);
    const bearer = /^Bearer (\S+)$/.exec(String(req.headers.authorization));
    expect(bearer).not.toBeNull();
    expect(sandbox.state.isTokenValid(bearer![1])).toBe(true);
    expect(req.headers['x-api-key']).toBeUndefined();
  }

  beforeAll(async () => {
    sandbox = await startTestSandbox({
      spAuthToken: SP_TOKEN,
      cardOperationParam: PARAMS.operation,
      cardAmountParam: PARAMS.amount,
      cardCurrencyParam: PARAMS.currency,
    });
    service = await startTestService(
      sandbox,
      {
        PROVIDER_SP_AUTH_TOKEN: SP_TOKEN,
        CARD_OPERATION_PARAM: PARAMS.operation,
        CARD_AMOUNT_PARAM: PARAMS.amount,
        CARD_CURRENCY_PARAM: PARAMS.currency,
        PROVIDER_TIMEOUT_MS: '500',
      },
      [CardsModule],
    );
    alice = await cardsClient(service);
  });
  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
  });

  describe('card users', () => {
    it('POST /v1/card-users sends the provider its snake_case body (billing_adress so spelled) and stores user_id and reference', async () => {
      const body = cardUserRequest({ isBusiness: true, businessName: 'Ndiaye Trading', countryCode: 'cm' });
      const before = requestsTo('/api/action/card/user', 'POST').length;
      const res = await alice.createCardUser(body);
      expect(res.status).toBe(201);
      const sent = requestsTo('/api/action/card/user', 'POST');
      expect(sent).toHaveLength(before + 1);
      const req = sent.at(-1)!;
      expectProviderAuth(req);
      expect(req.headers['content-type']).toMatch(/^application\/json/);
      expect(req.body).toEqual({
        first_name: 'Awa',
        last_name: 'Ndiaye',
        email: body.email,
        country_code: 'CM',
        contact: '237650000000',
        dob: '1990-04-12',
        is_business: true,
        billing_adress: '12 rue de la Joie',
        billing_city: 'Douala',
        billing_country: 'CM',
        id_number: body.idNumber,
        business_name: 'Ndiaye Trading',
        billing_state: 'Littoral',
        billing_postal_code: '00237',
      });

      const providerUser = [...sandbox.state.cardUsers.values()].find((u) => u.email === body.email)!;
      expect(res.body).toMatchObject({
        id: expect.any(String),
        ownerId: alice.sub,
        providerUserId: providerUser.user_id,
        providerReference: providerUser.reference,
        firstName: 'Awa',
        email: body.email,
        countryCode: 'CM',
        isBusiness: true,
        businessName: 'Ndiaye Trading',
        billingAddress: '12 rue de la Joie',
        cardIds: [],
        providerCardIds: [],
      });
      expect(res.body).not.toHaveProperty('idNumber');
      expect(JSON.stringify(res.body)).not.toContain(String(body.idNumber));

      // The id number is stored sealed, and only the data key opens it.
      const row = await service.prisma.cardUser.findUniqueOrThrow({ where: { id: res.body.id } });
      expect(row.idNumberEncrypted).not.toContain(String(body.idNumber));
      expect(new SecretBox(service.config.dataEncryptionKey).decrypt(row.idNumberEncrypted, ID_NUMBER_PURPOSE)).toBe(body.idNumber);
    });

    it('a non-business user is sent with is_business false and an empty business_name, stored with none', async () => {
      const res = await alice.createCardUser({ isBusiness: undefined });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ isBusiness: false, businessName: null });
      expect(requestsTo('/api/action/card/user', 'POST').at(-1)!.body).toMatchObject({ is_business: false, business_name: '' });
    });

    it('GET /v1/card-users/{id} asks the provider by reference and merges its answer, card ids included', async () => {
      const { cardUser, card } = await userWithCard(alice);
      const providerUser = sandbox.state.cardUsers.get(cardUser.providerReference)!;
      providerUser.first_name = 'Aïssatou';
      providerUser.email = 'aissatou@example.com';

      const res = await alice.getCardUser(cardUser.id);
      expect(res.status).toBe(200);
      const req = requestsTo(`/api/action/card/user/${cardUser.providerReference}`, 'GET').at(-1)!;
      expectProviderAuth(req);
      expect(req.body).toBeNull();
      expect(res.body).toMatchObject({
        id: cardUser.id,
        refreshed: true,
        firstName: 'Aïssatou',
        lastName: 'Ndiaye',
        email: 'aissatou@example.com',
        cardIds: [card.id],
        providerCardIds: [card.providerCardId],
        lastSyncedAt: expect.any(String),
      });
      // Merged into what is stored, not only answered.
      const row = await service.prisma.cardUser.findUniqueOrThrow({ where: { id: cardUser.id } });
      expect(row).toMatchObject({ firstName: 'Aïssatou', email: 'aissatou@example.com', providerCardIds: [card.providerCardId] });
    });

    it('GET /v1/card-users/{id} answers the stored copy (refreshed: false) when the provider fails', async () => {
      const { body: cardUser } = await alice.createCardUser();
      sandbox.state.injectFault({ path: `/api/action/card/user/${cardUser.providerReference}`, status: 500, body: { message: 'down' } });
      const res = await alice.getCardUser(cardUser.id);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: cardUser.id, refreshed: false, firstName: 'Awa', lastSyncedAt: null });
    });

    it('GET /v1/card-users lists own card users, newest first, with cursor pagination', async () => {
      const carol = await cardsClient(service);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await carol.createCardUser()).body.id);
      const page1 = await carol.listCardUsers({ limit: '2' });
      expect(page1.status).toBe(200);
      expect(page1.body.items.map((u: { id: string }) => u.id)).toEqual([ids[2], ids[1]]);
      expect(page1.body.nextCursor).toEqual(expect.any(String));
      const page2 = await carol.listCardUsers({ limit: '2', cursor: page1.body.nextCursor });
      expect(page2.body).toEqual({ items: [expect.objectContaining({ id: ids[0], ownerId: carol.sub })], nextCursor: null });
      expect((await carol.listCardUsers({ limit: '201' })).status).toBe(400);
      expect((await carol.listCardUsers({ limit: '0' })).status).toBe(400);
      expect((await carol.listCardUsers({ cursor: 'garbage' })).status).toBe(400);
    });

    it('a replayed card-user creation (same Idempotency-Key) does not ask the provider twice', async () => {
      const key = randomUUID();
      const body = cardUserRequest();
      const before = requestsTo('/api/action/card/user', 'POST').length;
      const first = await alice.createCardUser(body, key);
      const again = await alice.createCardUser(body, key);
      expect(again.status).toBe(201);
      expect(again.body).toEqual(first.body);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(requestsTo('/api/action/card/user', 'POST')).toHaveLength(before + 1);
    });
  });

  describe('cards', () => {
    it('POST /v1/card-users/{id}/cards sends balance and currency as strings and answers the number and CVV once, no-store', async () => {
      const { body: cardUser } = await alice.createCardUser();
      const res = await alice.createCard(cardUser.id, { balance: 5000, currency: 'XAF' });
      expect(res.status).toBe(201);
      expect(res.headers['cache-control']).toBe('no-store');

      const req = requestsTo(`/api/action/card/${cardUser.providerUserId}`, 'POST').at(-1)!;
      expectProviderAuth(req);
      expect(req.body).toEqual({ balance: '5000', currency: 'XAF' });

      const providerCard = sandbox.state.cards.get(res.body.providerCardId)!;
      expect(res.body).toMatchObject({
        id: expect.any(String),
        cardUserId: cardUser.id,
        ownerId: alice.sub,
        cardNumber: providerCard.card_number,
        cvv: providerCard.cvv,
        maskedNumber: `**** **** **** ${providerCard.card_number.slice(-4)}`,
        last4: providerCard.card_number.slice(-4),
        expiry: providerCard.expiry,
        currency: 'XAF',
        balance: '5000',
        status: 'ACTIVE',
        terminatedAt: null,
        secretsShownOnce: true,
        operationId: expect.any(String),
      });
      expect(res.body.cardNumber).toMatch(/^\d{16}$/);
      expect(res.body.note).toMatch(/shown only/);

      const row = await service.prisma.card.findUniqueOrThrow({ where: { id: res.body.id } });
      expect(row).toMatchObject({
        last4: providerCard.card_number.slice(-4),
        expiry: providerCard.expiry,
        currency: 'XAF',
        status: 'ACTIVE',
        providerCardId: providerCard.card_id,
      });
      expect(row.lastKnownBalance?.toFixed()).toBe('5000');
      const operation = await service.prisma.cardOperation.findUniqueOrThrow({ where: { id: res.body.operationId } });
      expect(operation).toMatchObject({
        kind: 'CREATE',
        status: 'SUCCEEDED',
        requestedBy: alice.sub,
        cardId: res.body.id,
        cardUserId: cardUser.id,
        currency: 'XAF',
      });
      expect(operation.completedAt).toBeInstanceOf(Date);
      expect(JSON.stringify(operation.providerResponse)).not.toContain(providerCard.card_number);
      expect(JSON.stringify(operation.providerResponse)).not.toContain(`"${providerCard.cvv}"`);
    });

    it('an EUR card: a numeric balance travels as the exact decimal string; a zero balance is accepted', async () => {
      const { body: cardUser } = await alice.createCardUser();
      const eur = await alice.createCard(cardUser.id, { balance: 12.5, currency: 'EUR' });
      expect(eur.status).toBe(201);
      expect(eur.body.balance).toBe('12.50');
      expect(requestsTo(`/api/action/card/${cardUser.providerUserId}`, 'POST').at(-1)!.body).toEqual({ balance: '12.50', currency: 'EUR' });
      const empty = await alice.createCard(cardUser.id, { balance: '0', currency: 'USD' });
      expect(empty.status).toBe(201);
      expect(empty.body.balance).toBe('0.00');
    });

    it('a replayed card creation answers the card without number and CVV, says so, and does not ask the provider again', async () => {
      const { body: cardUser } = await alice.createCardUser();
      const key = randomUUID();
      const calls = () => requestsTo(`/api/action/card/${cardUser.providerUserId}`, 'POST').length;
      const first = await alice.createCard(cardUser.id, { balance: '100', currency: 'XAF' }, key);
      expect(first.status).toBe(201);
      expect(first.body.cardNumber).toMatch(/^\d{16}$/);
      const replay = await alice.createCard(cardUser.id, { balance: '100', currency: 'XAF' }, key);
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.headers['cache-control']).toBe('no-store');
      expect(replay.body).not.toHaveProperty('cardNumber');
      expect(replay.body).not.toHaveProperty('cvv');
      expect(replay.body).toMatchObject({
        id: first.body.id,
        last4: first.body.last4,
        maskedNumber: first.body.maskedNumber,
        secretsShownOnce: true,
        note: 'cardNumber and cvv are shown only in the first answer',
      });
      expect(JSON.stringify(replay.body)).not.toContain(first.body.cardNumber);
      expect(calls()).toBe(1);
      const stored = await service.prisma.idempotencyRecord.findMany({ where: { key } });
      expect(JSON.stringify(stored)).not.toContain(first.body.cardNumber);
    });

    it('GET /v1/cards/{id} refreshes status and balance from the provider, the number masked', async () => {
      const { card } = await userWithCard(alice);
      sandbox.state.cards.get(card.providerCardId)!.balanceMinor = 4321n;
      const res = await alice.getCard(card.id);
      expect(res.status).toBe(200);
      const req = requestsTo(`/api/action/card/${card.providerCardId}`, 'GET').at(-1)!;
      expectProviderAuth(req);
      expect(res.body).toMatchObject({
        id: card.id,
        maskedNumber: `**** **** **** ${card.last4}`,
        balance: '4321',
        status: 'ACTIVE',
        currency: 'XAF',
        refreshed: true,
        balanceSyncedAt: expect.any(String),
      });
      expect(res.body).not.toHaveProperty('cardNumber');
      expect(res.body).not.toHaveProperty('cvv');
      expect(JSON.stringify(res.body)).not.toContain(card.cardNumber);
      expect((await service.prisma.card.findUniqueOrThrow({ where: { id: card.id } })).lastKnownBalance?.toFixed()).toBe('4321');

      // A card frozen at the provider shows FROZEN on the next read.
      sandbox.state.cards.get(card.providerCardId)!.status = 'disabled';
      expect((await alice.getCard(card.id)).body.status).toBe('FROZEN');
    });

    it('GET /v1/cards lists own cards, filtered by card user, with cursor pagination', async () => {
      const dave = await cardsClient(service);
      const { cardUser, card: first } = await userWithCard(dave);
      const second = (await dave.createCard(cardUser.id, { balance: '1', currency: 'XAF' })).body;
      const other = await userWithCard(dave);
      const all = await dave.listCards();
      expect(all.body.items.map((c: { id: string }) => c.id)).toEqual([other.card.id, second.id, first.id]);
      expect(all.body.items.every((c: Record<string, unknown>) => !('cardNumber' in c) && !('cvv' in c))).toBe(true);
      const byUser = await dave.listCards({ cardUserId: cardUser.id, limit: '1' });
      expect(byUser.body.items.map((c: { id: string }) => c.id)).toEqual([second.id]);
      const next = await dave.listCards({ cardUserId: cardUser.id, limit: '1', cursor: byUser.body.nextCursor });
      expect(next.body).toEqual({ items: [expect.objectContaining({ id: first.id })], nextCursor: null });
    });
  });

  describe('operations', () => {
    it('top-up: GET card/transaction/{id} with the configured parameter names; answers operationId, newBalance, providerTransactionId', async () => {
      const { card } = await userWithCard(alice);
      const res = await alice.topUp(card.id, '2500');
      expect(res.status).toBe(200);
      const calls = operationCalls(card.providerCardId);
      expect(calls).toHaveLength(1);
      expectProviderAuth(calls[0]);
      expect(calls[0].query).toEqual({ [PARAMS.operation]: 'topup', [PARAMS.amount]: '2500', [PARAMS.currency]: 'XAF' });
      expect(calls[0].body).toBeNull();

      const tx = sandbox.state.cards.get(card.providerCardId)!.transactions.at(-1)!;
      expect(res.body).toMatchObject({
        operationId: expect.any(String),
        newBalance: '7500',
        providerTransactionId: tx.transaction_id,
        kind: 'TOPUP',
        status: 'SUCCEEDED',
        amount: '2500',
        currency: 'XAF',
        requestedBy: alice.sub,
        cardStatus: 'ACTIVE',
      });
      const operation = await service.prisma.cardOperation.findUniqueOrThrow({ where: { id: res.body.operationId } });
      expect(operation).toMatchObject({
        kind: 'TOPUP',
        status: 'SUCCEEDED',
        requestedBy: alice.sub,
        cardId: card.id,
        providerTransactionId: tx.transaction_id,
        failureReason: null,
      });
      expect(operation.amount?.toFixed()).toBe('2500');
      expect(operation.newBalance?.toFixed()).toBe('7500');
      expect(operation.providerResponse).toEqual({ new_balance: '7500', transaction_id: tx.transaction_id });
      expect(operation.completedAt!.getTime()).toBeGreaterThanOrEqual(operation.createdAt.getTime());
      expect((await service.prisma.card.findUniqueOrThrow({ where: { id: card.id } })).lastKnownBalance?.toFixed()).toBe('7500');
    });

    it('withdraw: the same, and a provider refusal is a FAILED operation answered 422 with its reason and id', async () => {
      const { card } = await userWithCard(alice, { balance: '20.00', currency: 'EUR' });
      const res = await alice.withdraw(card.id, 7.5);
      expect(res.status).toBe(200);
      expect(operationCalls(card.providerCardId).at(-1)!.query).toEqual({
        [PARAMS.operation]: 'withdraw',
        [PARAMS.amount]: '7.50',
        [PARAMS.currency]: 'EUR',
      });
      expect(res.body).toMatchObject({
        newBalance: '12.50',
        kind: 'WITHDRAW',
        amount: '7.50',
        status: 'SUCCEEDED',
        providerTransactionId: expect.any(String),
      });

      const refused = await alice.withdraw(card.id, '100');
      expect(refused.status).toBe(422);
      expect(refused.headers['content-type']).toMatch(/problem\+json/);
      expect(refused.body).toMatchObject({
        code: 'provider_rejected',
        providerMessage: 'Insufficient balance',
        operationId: expect.any(String),
        operationStatus: 'FAILED',
        outcomeKnown: true,
      });
      const failed = await alice.operation(refused.body.operationId);
      expect(failed.body).toMatchObject({
        kind: 'WITHDRAW',
        status: 'FAILED',
        failureReason: 'Insufficient balance',
        amount: '100.00',
        completedAt: expect.any(String),
      });
    });

    it('freeze and unfreeze: disabled / enabled at the provider; money does not move on a frozen card; asking twice is harmless', async () => {
      const { card } = await userWithCard(alice);
      const frozen = await alice.freeze(card.id);
      expect(frozen.status).toBe(200);
      expect(frozen.body).toMatchObject({ kind: 'FREEZE', status: 'SUCCEEDED', cardStatus: 'FROZEN', operationId: expect.any(String) });
      expect(operationCalls(card.providerCardId).at(-1)!.query).toEqual({ [PARAMS.operation]: 'disabled' });
      expectProviderAuth(operationCalls(card.providerCardId).at(-1)!);
      expect(sandbox.state.cards.get(card.providerCardId)!.status).toBe('disabled');

      const again = await alice.freeze(card.id);
      expect(again.status).toBe(200);
      expect(again.body.cardStatus).toBe('FROZEN');

      const calls = operationCalls(card.providerCardId).length;
      const topUp = await alice.topUp(card.id, '10');
      expect(topUp.status).toBe(409);
      expect(topUp.body.code).toBe('card_frozen');
      expect(operationCalls(card.providerCardId)).toHaveLength(calls);

      const thawed = await alice.unfreeze(card.id);
      expect(thawed.status).toBe(200);
      expect(thawed.body).toMatchObject({ kind: 'UNFREEZE', cardStatus: 'ACTIVE' });
      expect(operationCalls(card.providerCardId).at(-1)!.query).toEqual({ [PARAMS.operation]: 'enabled' });
      expect((await alice.topUp(card.id, '10')).status).toBe(200);
      expect((await alice.getCard(card.id)).body.status).toBe('ACTIVE');
    });

    it('terminate asks nothing more, cannot be undone: every later operation is 409 card_terminated, unsent', async () => {
      const { card } = await userWithCard(alice);
      const res = await alice.terminate(card.id);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ kind: 'TERMINATE', status: 'SUCCEEDED', cardStatus: 'TERMINATED' });
      expect(operationCalls(card.providerCardId).at(-1)!.query).toEqual({ [PARAMS.operation]: 'terminate' });

      const before = cardCalls().length;
      const refusals = [
        await alice.topUp(card.id, '10'),
        await alice.withdraw(card.id, '10'),
        await alice.freeze(card.id),
        await alice.unfreeze(card.id),
        await alice.terminate(card.id),
      ];
      for (const refusal of refusals) {
        expect(refusal.status).toBe(409);
        expect(refusal.headers['content-type']).toMatch(/problem\+json/);
        expect(refusal.body).toMatchObject({ code: 'card_terminated', cardId: card.id, detail: expect.stringMatching(/terminated/) });
      }
      // Reading the card asks the provider nothing either: a terminated card cannot change.
      const read = await alice.getCard(card.id);
      expect(read.body).toMatchObject({ status: 'TERMINATED', terminatedAt: expect.any(String), refreshed: false });
      expect(cardCalls()).toHaveLength(before);
      // Refusals are not operations: only the creation and the termination are stored.
      const operations = await service.prisma.cardOperation.findMany({ where: { cardId: card.id }, orderBy: { createdAt: 'asc' } });
      expect(operations.map((o) => o.kind)).toEqual(['CREATE', 'TERMINATE']);

      // Even a provider claiming it active again does not revive it.
      sandbox.state.cards.get(card.providerCardId)!.status = 'active';
      expect((await alice.getCard(card.id)).body.status).toBe('TERMINATED');
      // The history stays readable.
      expect((await alice.transactions(card.id)).status).toBe(200);
    });

    it('GET /v1/cards/{id}/transactions: the provider history, mapped and paged, recorded as a TRANSACTIONS operation', async () => {
      const { card } = await userWithCard(alice);
      await alice.topUp(card.id, '100');
      await alice.withdraw(card.id, '40');
      const res = await alice.transactions(card.id, { limit: '1' });
      expect(res.status).toBe(200);
      expect(operationCalls(card.providerCardId).at(-1)!.query).toEqual({ [PARAMS.operation]: 'transactions' });
      const [topup] = sandbox.state.cards.get(card.providerCardId)!.transactions;
      expect(res.body).toEqual({
        cardId: card.id,
        operationId: expect.any(String),
        items: [
          {
            transactionId: topup.transaction_id,
            type: 'topup',
            amount: '100',
            currency: 'XAF',
            balanceAfter: '5100',
            createdAt: topup.created_at,
          },
        ],
        nextCursor: expect.any(String),
      });
      const next = await alice.transactions(card.id, { limit: '1', cursor: res.body.nextCursor });
      expect(next.body.items).toEqual([expect.objectContaining({ type: 'withdraw', amount: '40', balanceAfter: '5060' })]);
      expect(next.body.nextCursor).toBeNull();
      expect((await alice.operation(res.body.operationId)).body).toMatchObject({
        kind: 'TRANSACTIONS',
        status: 'SUCCEEDED',
        requestedBy: alice.sub,
      });
    });

    it('GET /v1/cards/{id}/operations and /v1/card-users/{id}/operations: who asked what, newest first', async () => {
      const { cardUser, card } = await userWithCard(alice);
      await alice.topUp(card.id, '1');
      await alice.freeze(card.id);
      const ops = await alice.cardOperations(card.id);
      expect(ops.status).toBe(200);
      expect(ops.body.items.map((o: { kind: string }) => o.kind)).toEqual(['FREEZE', 'TOPUP', 'CREATE']);
      expect(
        ops.body.items.every((o: { requestedBy: string; status: string }) => o.requestedBy === alice.sub && o.status === 'SUCCEEDED'),
      ).toBe(true);
      const topups = await alice.cardOperations(card.id, { kind: 'TOPUP' });
      expect(topups.body.items).toHaveLength(1);
      const byUser = await alice.cardUserOperations(cardUser.id, { limit: '2' });
      expect(byUser.body.items.map((o: { kind: string }) => o.kind)).toEqual(['FREEZE', 'TOPUP']);
      expect(byUser.body.nextCursor).toEqual(expect.any(String));
    });
  });

  describe('idempotency and lost answers', () => {
    it('10 concurrent top-ups with one key: one provider call, one operation, one answer', async () => {
      const { card } = await userWithCard(alice);
      const key = randomUUID();
      const answers = await Promise.all(Array.from({ length: 10 }, () => alice.topUp(card.id, '300', key)));
      expect(operationCalls(card.providerCardId)).toHaveLength(1);
      const ok = answers.filter((a) => a.status === 200);
      expect(ok.length).toBeGreaterThanOrEqual(1);
      expect(new Set(ok.map((a) => a.body.operationId)).size).toBe(1);
      for (const other of answers.filter((a) => a.status !== 200)) expect(other.body.code).toBe('idempotency_in_progress');
      expect(await service.prisma.cardOperation.count({ where: { cardId: card.id, kind: 'TOPUP' } })).toBe(1);
      expect(sandbox.state.cards.get(card.providerCardId)!.balanceMinor).toBe(5300n);

      const later = await alice.topUp(card.id, '300', key);
      expect(later.status).toBe(200);
      expect(later.headers['idempotent-replayed']).toBe('true');
      expect(later.body).toEqual(ok[0].body);
      expect(operationCalls(card.providerCardId)).toHaveLength(1);
      const reused = await alice.topUp(card.id, '301', key);
      expect(reused.status).toBe(422);
      expect(reused.body.code).toBe('idempotency_key_reused');
    });

    it('a top-up needs an Idempotency-Key', async () => {
      const { card } = await userWithCard(alice);
      const res = await request(service.server)
        .post(`/v1/cards/${card.id}/topup`)
        .auth(alice.token, { type: 'bearer' })
        .send({ amount: '1' });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('idempotency_key_required');
      expect(operationCalls(card.providerCardId)).toHaveLength(0);
    });

    it('a provider timeout leaves a visible UNKNOWN operation; the answer is 504 with its id; a retry with the key does not resend', async () => {
      const { card } = await userWithCard(alice);
      sandbox.state.injectFault({ path: `/api/action/card/transaction/${card.providerCardId}`, delayMs: 1500 });
      const key = randomUUID();
      const res = await alice.topUp(card.id, '900', key);
      expect(res.status).toBe(504);
      expect(res.headers['content-type']).toMatch(/problem\+json/);
      expect(res.body).toMatchObject({
        code: 'provider_timeout',
        outcomeKnown: false,
        operationId: expect.any(String),
        operationStatus: 'UNKNOWN',
      });
      expect(res.body.detail).toContain(res.body.operationId);

      const operation = await alice.operation(res.body.operationId);
      expect(operation.status).toBe(200);
      expect(operation.body).toMatchObject({
        kind: 'TOPUP',
        status: 'UNKNOWN',
        amount: '900',
        requestedBy: alice.sub,
        cardId: card.id,
        completedAt: expect.any(String),
        failureReason: expect.stringMatching(/unknown/),
      });
      expect(
        (await alice.cardOperations(card.id, { status: 'UNKNOWN' })).body.items.map((o: { operationId: string }) => o.operationId),
      ).toEqual([res.body.operationId]);

      const retry = await alice.topUp(card.id, '900', key);
      expect(retry.status).toBe(504);
      expect(retry.body.operationId).toBe(res.body.operationId);
      expect(operationCalls(card.providerCardId)).toHaveLength(1);
    });

    it('a 500 from the provider is UNKNOWN too (502), never FAILED', async () => {
      const { card } = await userWithCard(alice);
      sandbox.state.injectFault({
        path: `/api/action/card/transaction/${card.providerCardId}`,
        status: 500,
        rawBody: '<html>boom</html>',
        contentType: 'text/html',
      });
      const res = await alice.withdraw(card.id, '5');
      expect(res.status).toBe(502);
      expect(res.body).toMatchObject({ code: 'provider_unavailable', operationStatus: 'UNKNOWN' });
      expect((await alice.operation(res.body.operationId)).body.status).toBe('UNKNOWN');
    });

    it('a card creation that times out leaves an UNKNOWN CREATE operation on the card user, without a card', async () => {
      const { body: cardUser } = await alice.createCardUser();
      sandbox.state.injectFault({ path: `/api/action/card/${cardUser.providerUserId}`, method: 'POST', delayMs: 1500 });
      const res = await alice.createCard(cardUser.id, { balance: '10', currency: 'XAF' });
      expect(res.status).toBe(504);
      expect(res.body).toMatchObject({ code: 'provider_timeout', operationStatus: 'UNKNOWN', operationId: expect.any(String) });
      expect(res.body).not.toHaveProperty('cardNumber');
      const ops = await alice.cardUserOperations(cardUser.id);
      expect(ops.body.items).toEqual([
        expect.objectContaining({
          operationId: res.body.operationId,
          kind: 'CREATE',
          status: 'UNKNOWN',
          cardId: null,
          amount: '10',
          currency: 'XAF',
        }),
      ]);
      expect(await service.prisma.card.count({ where: { cardUserId: cardUser.id } })).toBe(0);
    });
  });
});
