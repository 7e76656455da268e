import fc from 'fast-check';
import { cardEcho, digitsOf } from '../../test/support/card-secret-arbitraries';
import { scrubProviderBody, scrubText, sentTextContext } from '../logging/provider-body-scrub';
import { REDACTED } from '../logging/redaction';
import { answerShapeOf } from './provider-answer-shapes';

/**
 * The provider boundary's one rule, as a property: whatever phrasing, grouping, key or depth the
 * provider uses to repeat a card number and its security code, none of their digits come out.
 */
describe('what the provider says: no card number or security code survives, however written', () => {
  /** A top-up request's values: its amount and the card id of the path stay readable. */
  const sent = sentTextContext({
    path: ['', 'api', 'action', 'card', 'transaction', 'card_77b2041c'],
    query: { op: 'topup', amount: '1000', currency: 'XAF' },
  });
  const notSent = (code: string) => !sent.allowedRuns.has(code);
  const noLongRun = /\p{Nd}{3}/u;

  it('in a message (free text)', () => {
    fc.assert(
      fc.property(cardEcho, (echo) => {
        fc.pre(notSent(echo.code));
        const out = scrubText(echo.message, { ...sent, secretRuns: new Set(), secretTexts: [] });
        expect(out).not.toMatch(noLongRun);
        expect(digitsOf(out)).not.toContain(echo.card.digits.slice(-4));
        expect(out).toContain(REDACTED);
      }),
      { numRuns: 2000 },
    );
  });

  it('in an answer: its message, unknown members at any depth, their keys', () => {
    const shape = answerShapeOf('cards.operation.topup');
    fc.assert(
      fc.property(cardEcho, (echo) => {
        fc.pre(notSent(echo.code));
        const out = scrubProviderBody({ error: 400, message: echo.message, ...echo.extra }, shape, sent);
        const { error, ...rest } = out;
        expect(error).toBe(400);
        const text = JSON.stringify(rest);
        expect(text).not.toMatch(noLongRun);
        expect(digitsOf(text)).not.toContain(echo.card.digits.slice(-4));
      }),
      { numRuns: 1000 },
    );
  });

  it('keeps what we sent and the typed fields exact', () => {
    const shape = answerShapeOf('cards.operation.topup');
    fc.assert(
      fc.property(cardEcho, (echo) => {
        fc.pre(notSent(echo.code));
        const answer = {
          new_balance: '4111111111111111.00',
          transaction_id: 'tx_5500330',
          message: `${echo.message}; topup 1000 XAF on card_77b2041c, tx_5500330`,
        };
        const out = scrubProviderBody(answer, shape, sent);
        expect(out.new_balance).toBe(answer.new_balance);
        expect(out.transaction_id).toBe(answer.transaction_id);
        expect(out.message).toMatch(/; topup 1000 XAF on card_77b2041c, tx_5500330$/);
      }),
      { numRuns: 300 },
    );
  });
});
