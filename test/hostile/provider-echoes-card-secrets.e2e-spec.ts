import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import request from 'supertest';
import { ProviderCallLog } from '../../src/provider/provider-call-log';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { cardEcho, digitsOf, type CardEcho } from '../support/card-secret-arbitraries';
import { cardsClient, userWithCard, type CardsClientOf } from '../support/cards-factories';
import { orderRequest, uniqueEmail } from '../support/provider-factories';
import { databaseDump } from '../support/database-dump';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/**
 * What the provider says never hands back a card number, a security code or a secret it just
 * delivered, however it phrases them: the named reproductions of the defect, then generated
 * numbers and codes in any grouping and phrasing, through the sandbox, checked in the customer's
 * answer, every row of the database and the logs.
 */
describe('provider echoes of card numbers, security codes and delivered secrets', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let alice: CardsClientOf;
  let card: Record<string, any>;
  let cardUser: Record<string, any>;
  const noLongRun = /\p{Nd}{3}/u;
  /** A text without our own identifiers and times (UUIDs, order references, ISO dates), whose digits are not the provider's. */
  const withoutOwnIdentifiers = (text: string) =>
    text
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>')
      .replace(/ord_[0-9a-f]+/g, '<reference>')
      .replace(/\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?/g, '<time>');
  /** `digits` as a whole run of digits of the text. */
  const standalone = (digits: string) => new RegExp(`(?<!\\p{Nd})${digits}(?!\\p{Nd})`, 'u');

  /** The call-log rows of one customer request (by its request id). */
  async function callRows(requestId: string): Promise<string[]> {
    await service.get(ProviderCallLog).flush();
    const rows = await service.prisma.$queryRaw<{ body: string | null }[]>`
      SELECT response_body::text AS body FROM provider_calls WHERE request_id = ${requestId} AND http_status >= 400`;
    return rows.map((r) => r.body ?? '');
  }

  /** Neither the database nor the logs hold any of `texts`. */
  async function expectStoredNowhere(texts: string[]) {
    const dump = await databaseDump(service);
    for (const text of texts) {
      expect({ text, inDatabase: dump.includes(text), inLogs: service.logs.text.includes(text) }).toEqual({
        text,
        inDatabase: false,
        inLogs: false,
      });
    }
  }

  const cardPath = () => `/api/action/card/transaction/${card.providerCardId}`;
  /** A top-up refused with `body`: the answer, and the failure reason stored for it. */
  async function refusedTopUp(body: Record<string, unknown>) {
    sandbox.state.injectFault({ path: cardPath(), status: 400, body: { error: 400, ...body } });
    const answer = await alice.topUp(card.id, '1000');
    expect(answer.status).toBe(422);
    const operation = await service.prisma.$queryRaw<{ failure_reason: string | null }[]>`
      SELECT failure_reason FROM card_operations WHERE id = ${answer.body.operationId}::uuid`;
    return { answer, failureReason: operation[0]?.failure_reason ?? '', calls: await callRows(String(answer.headers['x-request-id'])) };
  }
  /** A pay-in refused with `body`: the order answered (FAILED), its stored failure reason. */
  async function refusedOrder(body: Record<string, unknown>) {
    sandbox.state.injectFault({ path: '/api/agent/bills/v3', status: 400, body: { success: false, ...body } });
    const answer = await request(service.server)
      .post('/v1/orders')
      .auth(alice.token, { type: 'bearer' })
      .set('Idempotency-Key', randomUUID())
      .send(orderRequest({ amount: '1500' }));
    expect(answer.body.status).toBe('FAILED');
    const order = await service.prisma.$queryRaw<{ failure_reason: string | null }[]>`
      SELECT failure_reason FROM orders WHERE id = ${answer.body.id}::uuid`;
    return { answer, failureReason: order[0]?.failure_reason ?? '', calls: await callRows(String(answer.headers['x-request-id'])) };
  }

  /** Every echo sent, and every secret delivered, for the checks of the database and the logs. */
  const echoes: CardEcho[] = [];
  const delivered: string[] = [];
  const answers: string[] = [];

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox, { LOG_LEVEL: 'trace' });
    alice = await cardsClient(service);
    ({ card, cardUser } = await userWithCard(alice));
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
  });

  describe('the reproductions', () => {
    it.each([
      ['carte 4111.1111.1111.1111 cryptogramme 737 refusée', 'carte [REDACTED] cryptogramme [REDACTED] refusée'],
      ['cvv is 737', 'cvv is [REDACTED]'],
      ['CVV code 737', 'CVV code [REDACTED]'],
      ['card_cvv=737', 'card_cvv=[REDACTED]'],
      ['code de sécurité 737', 'code de sécurité [REDACTED]'],
      ['card 4111\u00A01111\u00A01111\u00A01111 declined', 'card [REDACTED] declined'],
      ['carte 4111\u202F1111\u202F1111\u202F1111 refusée', 'carte [REDACTED] refusée'],
    ])('a top-up refused with %p', async (message, scrubbed) => {
      const { answer, failureReason, calls } = await refusedTopUp({ message });
      answers.push(answer.text);
      expect(answer.body.providerMessage).toBe(scrubbed);
      expect(failureReason).toBe(scrubbed);
      expect(calls).toHaveLength(1);
      for (const text of [answer.text, failureReason, ...calls].map(withoutOwnIdentifiers)) {
        expect(text).not.toMatch(standalone('737'));
        expect(text).not.toMatch(standalone('4111'));
      }
    });

    it('a refusal with the code under the keys cvv2, cvc2, security_code, at some depth', async () => {
      const { answer, calls } = await refusedTopUp({
        message: 'declined',
        cvv2: '737',
        details: { cvc2: '737', security_code: '737', errors: [{ card: { cvv2: 737, securityCode: '737' } }] },
      });
      answers.push(answer.text);
      expect(calls).toHaveLength(1);
      expect(calls[0]).toContain('security_code');
      for (const text of [answer.text, ...calls].map(withoutOwnIdentifiers)) expect(text).not.toMatch(standalone('737'));
    });

    it('a token answer whose message repeats the token', async () => {
      sandbox.state.revokeTokens();
      sandbox.state.injectFault({ path: '/api/action/auth', echoDelivered: true });
      const read = await alice.getCard(card.id);
      expect(read.status).toBe(200);
      answers.push(read.text);
      const issued = [...sandbox.state.tokens.keys()];
      expect(issued.length).toBeGreaterThan(0);
      delivered.push(...issued);
      await expectStoredNowhere(issued);
    });

    it('a wallet link answer whose message repeats its apikey', async () => {
      sandbox.state.injectFault({ path: '/api/agent/link/new', echoDelivered: true });
      // An admin links any email: this test is about the answer, not about whose email it is.
      const admin = await service.bearer(alice.sub, 'customer', 'admin');
      const link = await request(service.server)
        .post('/v1/wallet-links')
        .auth(admin, { type: 'bearer' })
        .send({ email: uniqueEmail('echo'), phone: '650000002', phoneCountry: '+237' });
      expect(link.status).toBe(201);
      answers.push(link.text);
      const apikeys = [...sandbox.state.walletLinks.values()].map((l) => l.apikey);
      expect(apikeys.length).toBeGreaterThan(0);
      delivered.push(...apikeys);
      await expectStoredNowhere(apikeys);
    });

    it("a card creation answer whose message repeats the card's number and CVV", async () => {
      sandbox.state.injectFault({ path: `/api/action/card/${cardUser.providerUserId}`, method: 'POST', echoDelivered: true });
      const created = await alice.createCard(cardUser.id);
      expect(created.status).toBe(201);
      // This answer delivers them, once, by design: it is not among the answers checked.
      expect(created.body.cardNumber).toMatch(/^\d{13,19}$/);
      delivered.push(created.body.cardNumber);
      // The sandbox writes `card <number> issued with code <cvv>`.
      const cvv = String(created.body.cvv);
      await expectStoredNowhere([created.body.cardNumber, `issued with code ${cvv}`, `"cvv":"${cvv}"`]);
    });
  });

  it('generated numbers and codes, in any grouping and phrasing, as messages and as keys at any depth', async () => {
    // Values the requests send stay readable by design: a code equal to one of them is not an echo to catch.
    const sentValues = new Set(['1000', '1500', '400', '650000002', '1042']);
    await fc.assert(
      fc.asyncProperty(cardEcho, fc.constantFrom('card', 'order'), async (echo, route) => {
        fc.pre(!sentValues.has(echo.code));
        echoes.push(echo);
        const body = { message: echo.message, ...echo.extra };
        const { answer, failureReason, calls } = route === 'card' ? await refusedTopUp(body) : await refusedOrder(body);
        answers.push(answer.text);
        const shown = route === 'card' ? String(answer.body.providerMessage) : String(answer.body.failureReason);
        // The provider's words, as shown and as stored, keep no run of three digits.
        expect(shown).not.toMatch(noLongRun);
        expect(failureReason).not.toMatch(noLongRun);
        expect(calls).toHaveLength(1);
        for (const text of [answer.text, ...calls]) {
          expect(digitsOf(text)).not.toContain(echo.card.digits);
          expect(text).not.toContain(echo.codePhrase);
          expect(withoutOwnIdentifiers(text)).not.toMatch(standalone(echo.code));
        }
      }),
      { numRuns: 24 },
    );
  }, 120_000);

  describe('afterwards', () => {
    it('no answer holds a generated number or code, nor a delivered secret', () => {
      expect(echoes.length).toBeGreaterThan(10);
      const text = answers.join('\n');
      const digits = digitsOf(text);
      for (const echo of echoes) {
        expect(text).not.toContain(echo.card.written);
        expect(text).not.toContain(echo.codePhrase);
        expect(digits).not.toContain(echo.card.digits);
      }
      for (const secret of delivered) expect(text).not.toContain(secret);
    });

    it('no row of the database and no log line holds one', async () => {
      const dump = await databaseDump(service);
      expect(dump).toContain('cryptogramme [REDACTED] refusée');
      for (const [name, text] of [
        ['database', dump],
        ['logs', service.logs.text],
      ]) {
        // Once per text, not once per echo: late in a run the dump holds every row the worker's earlier files left.
        const digits = digitsOf(text);
        for (const echo of echoes) {
          expect({ name, leaked: text.includes(echo.card.written) || text.includes(echo.codePhrase) }).toEqual({ name, leaked: false });
          expect({ name, leaked: digits.includes(echo.card.digits) }).toEqual({ name, leaked: false });
        }
        for (const secret of delivered) expect({ name, leaked: text.includes(secret) }).toEqual({ name, leaked: false });
        expect({
          name,
          leaked: /4111.1111.1111.1111|cvv is 737|CVV code 737|card_cvv=737|sécurité 737|cryptogramme 737/.test(text),
        }).toEqual({
          name,
          leaked: false,
        });
      }
    });
  });
});
