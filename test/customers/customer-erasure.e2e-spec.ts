import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { ID_NUMBER_PURPOSE } from '../../src/cards/card-users.service';
import { SecretBox } from '../../src/common/secret-box';
import { CustomerErasureRunner } from '../../src/customers/customer-erasure.runner';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { isLuhnValid } from '../../src/sandbox/sandbox.money';
import { TEST_WALLETS } from '../../src/sandbox/test-wallets';
import { cardsClient } from '../support/cards-factories';
import { databaseDump } from '../support/database-dump';
import { customer, waitForOrder } from '../support/orders-client';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { adminCalls } from '../resolutions/support';
import { apiUser } from '../wallet-links/link-hosts';

/** Values no other row of the database holds: each customer's own, made up for this run. */
function personOf(label: string) {
  const tag = randomBytes(5).toString('hex');
  const digits = phoneDigits(String(parseInt(tag, 16)).padStart(13, '7').slice(-9));
  return {
    payer: `${label}payer Zq${tag}`,
    payerEmail: `${label}.payer.${tag}@example.com`,
    wallet: `2376${digits}`,
    firstName: `${label}first${tag}`,
    lastName: `${label}last${tag}`,
    cardEmail: `${label}.card.${tag}@example.com`,
    contact: `2375${digits}`,
    dob: `19${String((parseInt(tag.slice(0, 2), 16) % 90) + 10)}-0${(parseInt(tag[2], 16) % 9) + 1}-1${parseInt(tag[3], 16) % 9}`,
    billingAddress: `${parseInt(tag.slice(0, 3), 16)} ${label}street ${tag}`,
    billingCity: `${label}city${tag}`,
    billingState: `${label}state${tag}`,
    billingPostalCode: `PC${tag}`,
    idNumber: `ID${label.toUpperCase()}${tag.toUpperCase()}`,
    linkEmail: `${label}.link.${tag}@example.com`,
    linkPhone: `2374${digits}`,
  };
}
type Person = ReturnType<typeof personOf>;

/**
 * The 9 digits after each phone's prefix, with a last digit that leaves none of the three 13-digit
 * phones Luhn-valid: the card-data scan of every table (card-data-at-rest) would take one for a card number.
 */
function phoneDigits(candidate: string): string {
  for (let last = 0; last < 10; last++) {
    const digits = `${candidate.slice(0, -1)}${last}`;
    if (!['2374', '2375', '2376'].some((prefix) => isLuhnValid(`${prefix}${digits}`))) return digits;
  }
  throw new Error(`no last digit leaves ${candidate}'s phones Luhn-invalid`);
}

describe('POST /v1/customers/{subject}/erasure', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let admin: Awaited<ReturnType<typeof apiUser>>;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox, {}, [], { listen: true });
    admin = await apiUser(service, `admin_${randomUUID().slice(0, 6)}`, 'admin');
  });
  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
  });

  const erase = (subject: string, body: Record<string, unknown> = { note: 'Erasure request, ticket DPO-1' }, key = randomUUID()) =>
    request(service.server)
      .post(`/v1/customers/${encodeURIComponent(subject)}/erasure`)
      .auth(admin.token, { type: 'bearer' })
      .set('Idempotency-Key', key)
      .send(body);
  const erasureOf = (subject: string, token = admin.token) =>
    request(service.server)
      .get(`/v1/customers/${encodeURIComponent(subject)}/erasure`)
      .auth(token, { type: 'bearer' });
  const done = async (subject: string) => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const res = await erasureOf(subject);
      if (res.status === 200 && res.body.status === 'DONE') return res.body as Record<string, any>;
      if (Date.now() > deadline) throw new Error(`erasure never DONE: ${JSON.stringify(res.body)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  /** Two paid orders, a card user with a card topped up, a wallet link and a fiat distribution paying it. */
  async function customerWithEverything(person: Person) {
    const buyer = await customer(service);
    const orders: Record<string, any>[] = [];
    for (const amount of ['1500', '2500']) {
      const created = await buyer.createOrder({ amount, wallet: person.wallet, payer: person.payer, payerEmail: person.payerEmail });
      expect(created.status).toBe(201);
      orders.push(await waitForOrder(service, buyer.token, created.body.id, (o) => o.status === 'SUCCEEDED'));
    }
    const holder = await cardsClient(service, buyer.sub);
    const cardUser = await holder.createCardUser({
      firstName: person.firstName,
      lastName: person.lastName,
      email: person.cardEmail,
      contact: person.contact,
      dob: person.dob,
      billingAddress: person.billingAddress,
      billingCity: person.billingCity,
      billingState: person.billingState,
      billingPostalCode: person.billingPostalCode,
      idNumber: person.idNumber,
    });
    expect(cardUser.status).toBe(201);
    const card = await holder.createCard(cardUser.body.id);
    expect(card.status).toBe(201);
    expect((await holder.topUp(card.body.id, '700')).status).toBe(200);
    const owner = await apiUser(service, buyer.sub);
    const link = await owner.createLink({ email: person.linkEmail, phone: person.linkPhone, phoneCountry: '+237' });
    expect(link.status).toBe(201);
    const distribution = await admin.createFiat({
      payer: person.payer,
      currency: 'XAF',
      amount: '900',
      distribution: [{ matricule: link.body.matricule, rate: 100 }],
    });
    expect(distribution.status).toBe(201);
    return { subject: buyer.sub, buyer, orders, cardUserId: cardUser.body.id as string, distributionId: distribution.body.id as string };
  }

  const lower = (text: string) => text.toLowerCase();
  const valuesIn = (dump: string, person: Person) => {
    const text = lower(dump);
    return Object.values(person).filter((value) => text.includes(lower(value)));
  };

  it('replaces every personal value of the customer, wherever it is stored, and nothing of another customer; amounts, statuses and references stay', async () => {
    const a = personOf('alicia');
    const b = personOf('bruno');
    const alicia = await customerWithEverything(a);
    const bruno = await customerWithEverything(b);

    const before = await databaseDump(service);
    // Stored in clear before: everything but the identity number, which is sealed (and redacted from the call log).
    const clearValues = Object.keys(a).filter((key) => key !== 'idNumber');
    expect(valuesIn(before, a).sort()).toEqual(clearValues.map((key) => a[key as keyof Person]).sort());
    const brunoBefore = valuesIn(before, b);

    const asked = await erase(alicia.subject);
    expect(asked.status).toBe(202);
    expect(asked.body).toMatchObject({
      id: expect.any(String),
      subject: alicia.subject,
      status: expect.stringMatching(/^(PENDING|DONE)$/),
    });
    const erasure = await done(alicia.subject);
    expect(erasure.id).toBe(asked.body.id);
    expect(erasure.counts).toMatchObject({
      orders: 2,
      card_users: 1,
      wallet_links: 1,
      distributions: 1,
      events: expect.any(Number),
      provider_calls: expect.any(Number),
      idempotency_records: expect.any(Number),
    });
    expect(erasure.counts.events).toBeGreaterThanOrEqual(4);
    expect(erasure.counts.provider_calls).toBeGreaterThanOrEqual(4);

    const after = await databaseDump(service);
    expect(valuesIn(after, a)).toEqual([]);
    expect(valuesIn(after, b)).toEqual(brunoBefore);
    expect(brunoBefore.length).toBe(clearValues.length);

    // Finance still reads the money: amounts, currencies, statuses and references as they were.
    const finance = await service.bearer(`fin_${randomUUID().slice(0, 6)}`, 'finance');
    for (const order of alicia.orders) {
      const res = await request(service.server).get(`/v1/orders/${order.id}`).auth(finance, { type: 'bearer' });
      expect(res.body).toMatchObject({
        amount: order.amount,
        currency: order.currency,
        status: 'SUCCEEDED',
        reference: order.reference,
        payer: '[erased]',
        payerEmail: '[erased]',
        wallet: '[erased]',
      });
    }
    const distribution = await request(service.server).get(`/v1/distributions/${alicia.distributionId}`).auth(finance, { type: 'bearer' });
    expect(distribution.body).toMatchObject({ amount: '900', currency: 'XAF', status: 'ACCEPTED', payer: '[erased]' });
    // The card user reads as erased, and is not asked of the provider again (its answer would bring the values back).
    const callsBefore = sandbox.state.requests.length;
    const cardUser = await request(service.server).get(`/v1/card-users/${alicia.cardUserId}`).auth(finance, { type: 'bearer' });
    expect(cardUser.body).toMatchObject({
      firstName: '[erased]',
      lastName: '[erased]',
      email: '[erased]',
      contact: '[erased]',
      refreshed: false,
    });
    expect(sandbox.state.requests.length).toBe(callsBefore);
    // The identity number column holds the mark, sealed like every value of it.
    const [sealed] = await service.prisma.$queryRaw<
      { v: string }[]
    >`SELECT id_number_encrypted AS v FROM card_users WHERE id = ${alicia.cardUserId}::uuid`;
    expect(new SecretBox(service.config.dataEncryptionKey).decrypt(sealed.v, ID_NUMBER_PURPOSE)).toBe('[erased]');

    // Audited once, with the counts and never a value.
    const audit = await request(service.server)
      .get('/v1/audit-events')
      .query({ action: 'customer.erased', resourceId: alicia.subject })
      .auth(finance, { type: 'bearer' });
    expect(audit.body.items).toHaveLength(1);
    expect(audit.body.items[0]).toMatchObject({
      actor: admin.sub,
      resourceType: 'customer',
      details: { erasureId: erasure.id, counts: erasure.counts },
    });

    // A retry with the same key replays; the other customer was never touched.
    expect(bruno.orders).toHaveLength(2);
  });

  it('is 409 erasure_blocked, naming them, while an operation of the customer is open, and changes nothing', async () => {
    const person = personOf('carla');
    const buyer = await customer(service);
    const paid = await buyer.createOrder({ wallet: person.wallet, payer: person.payer, payerEmail: person.payerEmail });
    await waitForOrder(service, buyer.token, paid.body.id, (o) => o.status === 'SUCCEEDED');
    const lost = await buyer.createOrder({ wallet: TEST_WALLETS.LOST_ANSWER, payer: person.payer, payerEmail: person.payerEmail });
    expect(lost.body.status).toBe('UNKNOWN');

    const refused = await erase(buyer.sub);
    expect(refused.status).toBe(409);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({
      code: 'erasure_blocked',
      blockingOperations: [{ type: 'order', id: lost.body.id, status: 'UNKNOWN' }],
    });
    expect(refused.body.detail).toContain(lost.body.id);
    expect((await erasureOf(buyer.sub)).status).toBe(404);
    expect(valuesIn(await databaseDump(service), person)).toEqual(expect.arrayContaining([person.payer, person.payerEmail, person.wallet]));

    // Decided by a person, the order no longer blocks: the erasure goes through.
    const decided = await adminCalls(service, admin.token).resolveOrder(lost.body.id, { status: 'FAILED', note: 'no money moved' });
    expect(decided.status).toBe(200);
    const key = randomUUID();
    const asked = await erase(buyer.sub, { note: 'ticket DPO-2' }, key);
    expect(asked.status).toBe(202);
    await done(buyer.sub);
    const replay = await erase(buyer.sub, { note: 'ticket DPO-2' }, key);
    expect(replay.status).toBe(202);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(asked.body);
    // Also what staff's answers held: the resolution answered the order, payer and email included.
    expect(valuesIn(await databaseDump(service), person)).toEqual([]);
  });

  it('an erasure whose instance died (its lease lapsed) is taken over and finished by the job of any instance', async () => {
    const person = personOf('dora');
    const buyer = await customer(service);
    const paid = await buyer.createOrder({ wallet: person.wallet, payer: person.payer, payerEmail: person.payerEmail });
    await waitForOrder(service, buyer.token, paid.body.id, (o) => o.status === 'SUCCEEDED');
    // Asked, then its instance died before any work: PENDING, its lease lapsed.
    await service.prisma.$executeRaw`
      INSERT INTO customer_erasures (id, subject, requested_by, note, lease_until)
      VALUES (${randomUUID()}::uuid, ${buyer.sub}, ${admin.sub}, 'asked before a crash', now() - interval '1 second')`;
    expect((await erasureOf(buyer.sub)).body.status).toBe('PENDING');
    await service.get(CustomerErasureRunner).runNow();
    expect((await erasureOf(buyer.sub)).body).toMatchObject({ status: 'DONE', counts: expect.objectContaining({ orders: 1 }) });
    // Also the call of the pay-in, which its instance writes to the call log a moment after the call.
    expect(valuesIn(await databaseDump(service), person)).toEqual([]);
  });

  it('admins only; a malformed subject or note is 400 problem+json, with nothing stored', async () => {
    const finance = await service.bearer(`fin_${randomUUID().slice(0, 6)}`, 'finance');
    const subject = `cust_${randomUUID().slice(0, 8)}`;
    const asFinance = await request(service.server)
      .post(`/v1/customers/${subject}/erasure`)
      .auth(finance, { type: 'bearer' })
      .set('Idempotency-Key', randomUUID())
      .send({ note: 'x' });
    expect(asFinance.status).toBe(403);
    expect((await erasureOf(subject, finance)).status).toBe(403);
    expect((await erase(subject, {})).status).toBe(400);
    expect((await erase(subject, { note: '' })).status).toBe(400);
    const noKey = await request(service.server)
      .post(`/v1/customers/${subject}/erasure`)
      .auth(admin.token, { type: 'bearer' })
      .send({ note: 'x' });
    expect(noKey.status).toBe(400);
    expect((await erasureOf(subject)).status).toBe(404);
  });
});
