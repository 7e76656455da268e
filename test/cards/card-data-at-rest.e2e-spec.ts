import { randomUUID } from 'node:crypto';
import { CardsModule } from '../../src/cards/cards.module';
import { isLuhnValid, luhnCheckDigit } from '../../src/sandbox/sandbox.money';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { cardsClient, userWithCard, type CardsClientOf } from '../support/cards-factories';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/**
 * The full card number and the CVV exist in one answer and nowhere else: after cards are created,
 * read, replayed, operated and failed in every way, a dump of every table of the database and the
 * service's logs hold none of the numbers and CVVs the test was shown.
 */
describe('card data at rest', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let alice: CardsClientOf;
  /** Full card numbers this test saw (answers of the API, or bodies the provider sent). */
  const numbers: string[] = [];
  /** CVVs this test saw. */
  const cvvs: string[] = [];
  let baseline = '';

  /** Every row of every table of the public schema, as JSON text, one line per row. */
  async function dumpDatabase(): Promise<{ tables: string[]; text: string }> {
    const tables = await service.prisma.$queryRaw<{ name: string }[]>`
      SELECT table_name::text AS name FROM information_schema.tables
      WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`;
    const lines: string[] = [];
    for (const { name } of tables) {
      const rows = await service.prisma.$queryRawUnsafe<{ row: string }[]>(
        `SELECT row_to_json(t)::text AS row FROM "${name.replace(/"/g, '""')}" t`,
      );
      for (const { row } of rows) lines.push(`${name}: ${row}`);
    }
    return { tables: tables.map((t) => t.name), text: lines.join('\n') };
  }

  const count = (text: string, needle: string) => text.split(needle).length - 1;

  /** A Luhn-valid 16-digit number the sandbox would never issue (it starts with 5). */
  function foreignCardNumber(): string {
    const payload = `5${String(Math.floor(Math.random() * 1e14)).padStart(14, '0')}`;
    return `${payload}${luhnCheckDigit(payload)}`;
  }

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox, { LOG_LEVEL: 'trace', PROVIDER_TIMEOUT_MS: '400' }, [CardsModule]);
    alice = await cardsClient(service);
    baseline = (await dumpDatabase()).text;

    // Cards in two currencies, read back (the provider sends the full number on every read).
    for (const body of [
      { balance: '5000', currency: 'XAF' },
      { balance: '12.50', currency: 'EUR' },
      { balance: 0, currency: 'USD' },
    ]) {
      const { cardUser, card } = await userWithCard(alice, body);
      numbers.push(card.cardNumber);
      cvvs.push(card.cvv);
      expect((await alice.getCard(card.id)).status).toBe(200);
      expect((await alice.getCardUser(cardUser.id)).status).toBe(200);
    }
    const { cardUser, card } = await userWithCard(alice);
    numbers.push(card.cardNumber);
    cvvs.push(card.cvv);

    // A replayed creation, operations, a history read, a termination. (Amounts have no three-digit
    // form, so that no stored amount can look like one of the CVVs searched for below.)
    const key = randomUUID();
    const first = await alice.createCard(cardUser.id, { balance: '7000', currency: 'XAF' }, key);
    numbers.push(first.body.cardNumber);
    cvvs.push(first.body.cvv);
    expect((await alice.createCard(cardUser.id, { balance: '7000', currency: 'XAF' }, key)).headers['idempotent-replayed']).toBe('true');
    expect((await alice.topUp(card.id, '1000')).status).toBe(200);
    expect((await alice.withdraw(card.id, '50')).status).toBe(200);
    expect((await alice.transactions(card.id)).status).toBe(200);
    expect((await alice.freeze(card.id)).status).toBe(200);
    expect((await alice.listCards()).status).toBe(200);

    // The provider misbehaving with card data in its answers.
    const stray = { number: foreignCardNumber(), cvv: '987' };
    sandbox.state.injectFault({
      path: `/api/action/card/${cardUser.providerUserId}`,
      method: 'POST',
      status: 200,
      body: { card_number: stray.number, cvv: stray.cvv, expiry: '01/30' },
    });
    const unreadable = await alice.createCard(cardUser.id, { balance: '1', currency: 'XAF' });
    expect(unreadable.body).toMatchObject({ code: 'provider_bad_response', operationStatus: 'UNKNOWN' });
    const rejected = { number: foreignCardNumber(), cvv: '654' };
    sandbox.state.injectFault({
      path: `/api/action/card/transaction/${card.providerCardId}`,
      status: 400,
      body: { error: 400, message: 'Refused', card_number: rejected.number, cvv: rejected.cvv },
    });
    expect((await alice.unfreeze(card.id)).body).toMatchObject({ code: 'provider_rejected', operationStatus: 'FAILED' });
    const failing = { number: foreignCardNumber() };
    sandbox.state.injectFault({
      path: `/api/action/card/${card.providerCardId}`,
      method: 'GET',
      status: 500,
      body: { message: 'boom', card_number: failing.number },
    });
    expect((await alice.getCard(card.id)).body.refreshed).toBe(false);
    // A creation whose answer is lost: the provider made a card that nobody was shown.
    sandbox.state.injectFault({ path: `/api/action/card/${cardUser.providerUserId}`, method: 'POST', delayMs: 1000 });
    expect((await alice.createCard(cardUser.id, { balance: '2', currency: 'XAF' })).status).toBe(504);
    expect((await alice.terminate(card.id)).status).toBe(200);
    // The sandbox makes that card once its delay is over.
    for (const deadline = Date.now() + 5000; sandbox.state.cards.size < 6 && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 50));
    expect(sandbox.state.cards.size).toBe(6);

    numbers.push(stray.number, rejected.number, failing.number);
    cvvs.push(stray.cvv, rejected.cvv);
    // Every number the sandbox ever issued, including the one of the lost creation.
    for (const issued of sandbox.state.cards.values()) {
      numbers.push(issued.card_number);
      cvvs.push(issued.cvv);
    }
  });
  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
  });

  it('saw real card data along the way', () => {
    expect(numbers.length).toBeGreaterThanOrEqual(9);
    for (const number of numbers) expect(isLuhnValid(number)).toBe(true);
    for (const cvv of cvvs) expect(cvv).toMatch(/^\d{3}$/);
  });

  it('a dump of every table holds no full card number and no CVV', async () => {
    const { tables, text } = await dumpDatabase();
    expect(tables).toEqual(expect.arrayContaining(['card_users', 'cards', 'card_operations', 'idempotency_records', 'provider_calls']));
    // The dump did catch the card rows (so an empty dump cannot pass).
    expect(text).toContain(`"last4":"${numbers[0].slice(-4)}"`);
    for (const number of new Set(numbers)) {
      expect(text).not.toContain(number);
      expect(text).not.toContain(number.replace(/(\d{4})(?=\d)/g, '$1 '));
    }
    // No "cvv" member holding a value, and none of the CVVs seen as a JSON string value that was
    // not already in the database before the test (other areas may hold short numeric strings).
    expect(text).not.toMatch(/"cvv"\s*:\s*"(?!\[REDACTED\])/i);
    for (const cvv of new Set(cvvs))
      expect({ cvv, occurrences: count(text, `"${cvv}"`) }).toEqual({ cvv, occurrences: count(baseline, `"${cvv}"`) });
    // Nothing shaped like a card number at all: no JSON string of 13 to 19 digits passing Luhn.
    const shaped = [...text.matchAll(/"(\d{13,19})"/g)].map((m) => m[1]).filter(isLuhnValid);
    expect(shaped).toEqual([]);
  });

  it('identity document numbers are only stored encrypted: not in any table, call log or log line in clear', async () => {
    const idNumbers = (await service.prisma.cardUser.findMany({ select: { id: true } })).length;
    expect(idNumbers).toBeGreaterThan(0);
    const sent = sandbox.state.requests
      .filter((r) => r.path === '/api/action/card/user')
      .map((r) => (r.body as { id_number: string }).id_number);
    expect(sent.length).toBeGreaterThan(0);
    const { text } = await dumpDatabase();
    for (const idNumber of sent) {
      expect(text).not.toContain(idNumber);
      expect(service.logs.text).not.toContain(idNumber);
    }
  });

  it('the logs hold no full card number and no CVV', () => {
    const text = service.logs.text;
    expect(service.logs.lines.length).toBeGreaterThan(20);
    for (const number of new Set(numbers)) expect(text).not.toContain(number);
    for (const cvv of new Set(cvvs)) expect(text).not.toContain(`"${cvv}"`);
    expect(text).not.toMatch(/"cvv"\s*:\s*"(?!\[REDACTED\])/i);
    // A card number stands alone; sixteen digits inside a hexadecimal provider id (card_c584fd1441858175496190dd) are not one.
    expect(text).not.toMatch(/(?<![0-9A-Za-z])\d{16}(?![0-9A-Za-z])/);
  });

  it('what is kept instead: last four digits, expiry, currency, status, balance', async () => {
    const cards = await service.prisma.card.findMany({ where: { ownerId: alice.sub } });
    expect(cards.length).toBeGreaterThanOrEqual(5);
    for (const card of cards) {
      expect(card.last4).toMatch(/^\d{4}$/);
      expect(card.expiry).toMatch(/^\d{2}\/\d{2}$/);
      expect(Object.keys(card).sort()).toEqual(
        [
          'balanceSyncedAt',
          'cardUserId',
          'createdAt',
          'currency',
          'expiry',
          'id',
          'last4',
          'lastKnownBalance',
          'ownerId',
          'providerCardId',
          'status',
          'terminatedAt',
          'updatedAt',
        ].sort(),
      );
    }
  });
});
