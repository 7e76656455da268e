import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { CardsModule } from '../../src/cards/cards.module';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { cardsClient, cardUserRequest, userWithCard, type CardsClientOf } from '../support/cards-factories';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

const PROBLEM_JSON = /^application\/problem\+json/;

describe('virtual cards: invalid input and who may do what', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  /** Owns the card user and the card every access test aims at. */
  let alice: CardsClientOf;
  let bob: CardsClientOf;
  let finance: CardsClientOf;
  let admin: CardsClientOf;
  let target: { cardUser: Record<string, any>; card: Record<string, any> };

  const cardRequests = () => sandbox.state.requestsTo('/api/action/card*').length;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox, {}, [CardsModule]);
    alice = await cardsClient(service);
    bob = await cardsClient(service);
    finance = await cardsClient(service, `fin_${randomUUID().slice(0, 8)}`, 'finance');
    admin = await cardsClient(service, `adm_${randomUUID().slice(0, 8)}`, 'admin');
    target = await userWithCard(alice);
    await alice.topUp(target.card.id, '100');
  });
  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
  });

  function expectValidationProblem(res: request.Response, fields: string[]) {
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
    expect(res.body).toMatchObject({
      status: 400,
      code: 'validation_failed',
      requestId: expect.any(String),
      type: expect.any(String),
      title: expect.any(String),
    });
    expect([...new Set(res.body.errors.map((e: { field: string }) => e.field))].sort()).toEqual([...fields].sort());
    for (const error of res.body.errors) expect(error.message).toEqual(expect.any(String));
  }

  describe('card user fields: 400 problem+json by field, nothing sent to the provider, nothing stored', () => {
    it.each([
      ['a bad email', { email: 'not-an-email' }, ['email']],
      ['a three-letter country code', { countryCode: 'CMR' }, ['countryCode']],
      ['a date of birth in the future', { dob: `${new Date().getUTCFullYear() + 1}-01-01` }, ['dob']],
      ['a date of birth today', { dob: new Date().toISOString().slice(0, 10) }, ['dob']],
      ['a date that does not exist', { dob: '2023-02-30' }, ['dob']],
      ['a date in another format', { dob: '12/04/1990' }, ['dob']],
      ['a contact with other than digits', { contact: '+237 65-00' }, ['contact']],
      ['a contact of letters', { contact: 'call me' }, ['contact']],
      ['a business without businessName', { isBusiness: true, businessName: undefined }, ['businessName']],
      ['a business with an empty businessName', { isBusiness: true, businessName: '  ' }, ['businessName']],
      ['isBusiness not a boolean', { isBusiness: 'yes' }, ['isBusiness']],
      ['a missing first name', { firstName: undefined }, ['firstName']],
      ['a missing id number', { idNumber: undefined }, ['idNumber']],
      ['an unknown field', { nickname: 'Awa' }, ['nickname']],
      ['the provider spelling instead of ours', { billing_adress: 'x' }, ['billing_adress']],
      ['several at once', { email: 'x', countryCode: 'C', dob: '2023-02-30' }, ['email', 'countryCode', 'dob']],
    ])('%s', async (_name, overrides, fields) => {
      const carol = await cardsClient(service);
      const before = cardRequests();
      const res = await carol.createCardUser(overrides);
      expectValidationProblem(res, fields);
      expect(cardRequests()).toBe(before);
      expect(await service.prisma.cardUser.count({ where: { ownerId: carol.sub } })).toBe(0);
    });

    it('accepts a business with its name, and a lower-case country code (stored upper-case)', async () => {
      const res = await alice.createCardUser({ isBusiness: true, businessName: 'Awa SARL', countryCode: 'sn' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ isBusiness: true, businessName: 'Awa SARL', countryCode: 'SN' });
    });

    it('needs an Idempotency-Key (it creates a provider object)', async () => {
      const before = cardRequests();
      const res = await request(service.server).post('/v1/card-users').auth(alice.token, { type: 'bearer' }).send(cardUserRequest());
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('idempotency_key_required');
      expect(cardRequests()).toBe(before);
    });
  });

  describe('card creation and amounts: 400 by field, no provider call', () => {
    it.each([
      ['a negative balance', { balance: '-5', currency: 'XAF' }, ['balance']],
      ['decimals on XAF', { balance: '10.5', currency: 'XAF' }, ['balance']],
      ['three decimals on EUR', { balance: '1.234', currency: 'EUR' }, ['balance']],
      ['an unaccepted currency', { balance: '10', currency: 'GBP' }, ['currency']],
      ['a lower-case currency', { balance: '10', currency: 'xaf' }, ['currency']],
      ['a non-numeric balance', { balance: 'ten', currency: 'XAF' }, ['balance']],
      ['a missing balance', { currency: 'XAF' }, ['balance']],
      ['above the maximum', { balance: '100000000000', currency: 'XAF' }, ['balance']],
      ['an unknown field', { balance: '1', currency: 'XAF', cvv: '123' }, ['cvv']],
    ])('card: %s', async (_name, body, fields) => {
      const before = cardRequests();
      const res = await alice.createCard(target.cardUser.id, body);
      expectValidationProblem(res, fields);
      expect(cardRequests()).toBe(before);
    });

    it.each([
      ['an XAF amount with decimals', '10.5', ['amount']],
      ['an XAF amount given as a decimal number', 10.5, ['amount']],
      ['zero', '0', ['amount']],
      ['zero as a number', 0, ['amount']],
      ['a negative amount', '-10', ['amount']],
      ['a negative number', -10, ['amount']],
      ['a non-numeric amount', 'lots', ['amount']],
      ['an exponent', '1e3', ['amount']],
      ['no amount', undefined, ['amount']],
      ['above the maximum', '100000000001', ['amount']],
    ])('top-up and withdrawal: %s', async (_name, amount, fields) => {
      const before = cardRequests();
      expectValidationProblem(await alice.topUp(target.card.id, amount), fields);
      expectValidationProblem(await alice.withdraw(target.card.id, amount), fields);
      expect(cardRequests()).toBe(before);
    });

    it('an unknown field next to the amount', async () => {
      const before = cardRequests();
      const res = await request(service.server)
        .post(`/v1/cards/${target.card.id}/topup`)
        .auth(alice.token, { type: 'bearer' })
        .set('Idempotency-Key', randomUUID())
        .send({ amount: '10', currency: 'EUR' });
      expectValidationProblem(res, ['currency']);
      expect(cardRequests()).toBe(before);
    });

    it('amounts follow the card currency: two decimals on an EUR card, none on XAF', async () => {
      const { card } = await userWithCard(alice, { balance: '10', currency: 'EUR' });
      expect((await alice.topUp(card.id, '0.05')).status).toBe(200);
      expectValidationProblem(await alice.topUp(card.id, '0.055'), ['amount']);
      expect((await alice.topUp(card.id, '0.050')).status).toBe(200); // a trailing zero changes nothing
    });
  });

  describe('BOLA: another customer gets 404 on every route, and the provider hears nothing', () => {
    it('every route by id', async () => {
      const { cardUser, card } = target;
      const operationId = (await alice.cardOperations(card.id)).body.items[0].operationId;
      const before = cardRequests();
      const answers = {
        getCardUser: await bob.getCardUser(cardUser.id),
        cardUserOperations: await bob.cardUserOperations(cardUser.id),
        createCard: await bob.createCard(cardUser.id),
        getCard: await bob.getCard(card.id),
        topUp: await bob.topUp(card.id, '10'),
        withdraw: await bob.withdraw(card.id, '10'),
        freeze: await bob.freeze(card.id),
        unfreeze: await bob.unfreeze(card.id),
        terminate: await bob.terminate(card.id),
        transactions: await bob.transactions(card.id),
        cardOperations: await bob.cardOperations(card.id),
        operation: await bob.operation(operationId),
      };
      for (const [route, res] of Object.entries(answers)) {
        expect({ route, status: res.status }).toEqual({ route, status: 404 });
        expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
        expect(res.body.code).toBe('not_found');
        expect(JSON.stringify(res.body)).not.toContain(cardUser.providerUserId);
        expect(JSON.stringify(res.body)).not.toContain(card.providerCardId);
      }
      expect(cardRequests()).toBe(before);
      expect((await alice.getCard(card.id)).body.status).toBe('ACTIVE');
    });

    it('lists hold only their own', async () => {
      await userWithCard(bob);
      const users = (await bob.listCardUsers()).body.items;
      const cards = (await bob.listCards()).body.items;
      expect(users.length).toBeGreaterThan(0);
      expect(users.every((u: { ownerId: string }) => u.ownerId === bob.sub)).toBe(true);
      expect(cards.every((c: { ownerId: string }) => c.ownerId === bob.sub)).toBe(true);
      expect((await bob.listCards({ cardUserId: target.cardUser.id })).body.items).toEqual([]);
    });

    it('ids that are not ids, and ids of nothing, are 404 too', async () => {
      for (const id of ['nope', randomUUID(), "1' OR '1'='1"]) {
        expect((await alice.getCard(encodeURIComponent(id))).status).toBe(404);
        expect((await alice.getCardUser(encodeURIComponent(id))).status).toBe(404);
        expect((await alice.operation(encodeURIComponent(id))).status).toBe(404);
      }
    });
  });

  describe('roles', () => {
    it('finance reads everything', async () => {
      const { cardUser, card } = target;
      expect((await finance.getCardUser(cardUser.id)).status).toBe(200);
      expect((await finance.getCard(card.id)).body).toMatchObject({ id: card.id, maskedNumber: card.maskedNumber });
      expect((await finance.transactions(card.id)).status).toBe(200);
      expect((await finance.cardOperations(card.id)).body.items.length).toBeGreaterThan(0);
      expect((await finance.cardUserOperations(cardUser.id)).status).toBe(200);
      const users = (await finance.listCardUsers({ limit: '200' })).body.items.map((u: { ownerId: string }) => u.ownerId);
      expect(users).toEqual(expect.arrayContaining([alice.sub, bob.sub]));
      const cards = (await finance.listCards({ cardUserId: cardUser.id })).body.items.map((c: { id: string }) => c.id);
      expect(cards).toEqual([card.id]);
    });

    it('finance moves no money and changes no card: 403 on every write, nothing sent', async () => {
      const { cardUser, card } = target;
      const before = cardRequests();
      const answers = [
        await finance.createCardUser(),
        await finance.createCard(cardUser.id),
        await finance.topUp(card.id, '10'),
        await finance.withdraw(card.id, '10'),
        await finance.freeze(card.id),
        await finance.unfreeze(card.id),
        await finance.terminate(card.id),
      ];
      for (const res of answers) {
        expect(res.status).toBe(403);
        expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
        expect(res.body.code).toBe('forbidden');
      }
      expect(cardRequests()).toBe(before);
    });

    it('admin does everything, and the operation records who asked', async () => {
      const { card } = await userWithCard(bob);
      const res = await admin.topUp(card.id, '25');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ requestedBy: admin.sub, newBalance: '5025' });
      expect((await admin.freeze(card.id)).body.cardStatus).toBe('FROZEN');
      expect((await admin.getCard(card.id)).status).toBe(200);
      const ops = (await bob.cardOperations(card.id)).body.items;
      expect(ops.map((o: { requestedBy: string }) => o.requestedBy)).toEqual([admin.sub, admin.sub, bob.sub]);
    });

    it('nobody without a token gets in', async () => {
      const http = () => request(service.server);
      for (const res of [
        await http().get('/v1/card-users'),
        await http().get(`/v1/card-users/${target.cardUser.id}`),
        await http().post('/v1/card-users').send(cardUserRequest()),
        await http().get(`/v1/cards/${target.card.id}`),
        await http().get('/v1/cards'),
        await http().post(`/v1/cards/${target.card.id}/topup`).set('Idempotency-Key', randomUUID()).send({ amount: '1' }),
        await http().post(`/v1/cards/${target.card.id}/terminate`),
        await http().get(`/v1/cards/${target.card.id}/transactions`),
      ]) {
        expect(res.status).toBe(401);
        expect(res.body.code).toBe('unauthenticated');
      }
    });
  });
});
