import { ORDER_STATUSES, type CallbackOutcome, type OrderStatus } from '../orders/order-callbacks.port';
import { decideCallback, type CallbackDecision } from './callback-decision';

const decided = (to: 'SUCCEEDED' | 'FAILED'): CallbackDecision => ({ result: 'APPLIED', transition: { kind: 'decide', to } });
const conflict: CallbackDecision = { result: 'CONFLICT', transition: { kind: 'flag_for_review' } };
const duplicate: CallbackDecision = { result: 'DUPLICATE' };

/** Order status × callback outcome → what the callback does (merchant-api.md, "Callbacks"). */
const TABLE: [OrderStatus, CallbackOutcome, CallbackDecision][] = [
  ['PENDING', 'success', decided('SUCCEEDED')],
  ['PENDING', 'failure', decided('FAILED')],
  ['PROCESSING', 'success', decided('SUCCEEDED')],
  ['PROCESSING', 'failure', decided('FAILED')],
  ['UNKNOWN', 'success', decided('SUCCEEDED')],
  ['UNKNOWN', 'failure', decided('FAILED')],
  ['EXPIRED', 'success', decided('SUCCEEDED')],
  ['EXPIRED', 'failure', decided('FAILED')],
  ['SUCCEEDED', 'success', duplicate],
  ['FAILED', 'failure', duplicate],
  ['SUCCEEDED', 'failure', conflict],
  ['FAILED', 'success', conflict],
];

describe('decideCallback (the callback decision table)', () => {
  it.each(TABLE)('an order %s given a %s callback', (status, outcome, expected) => {
    expect(decideCallback(status, outcome)).toEqual(expected);
  });

  it('covers every order status with both outcomes', () => {
    for (const status of ORDER_STATUSES) {
      for (const outcome of ['success', 'failure'] as const) {
        expect(TABLE.some(([s, o]) => s === status && o === outcome)).toBe(true);
      }
    }
  });

  it.each([
    ['no order proved by the token (unknown URL or wrong token)', undefined, undefined],
    ['a valid token for an order that does not exist', undefined, 'success' as const],
    ['an existing order but no outcome proved', 'PROCESSING' as const, undefined],
  ])('REJECTED, with no transition, for %s', (_label, status, outcome) => {
    expect(decideCallback(status, outcome)).toEqual({ result: 'REJECTED' });
  });
});
