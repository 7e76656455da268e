import type { AnswerShape } from '../logging/provider-body-scrub';

/**
 * The fields of each provider answer that a client reads and needs exact, by endpoint (see
 * `AnswerShape` in logging/redaction.ts): identifiers, amounts, dates, the secrets it delivers, the
 * card user's data. Everything else the provider writes is free text and passes the one digit
 * rule, which leaves words alone: a status, a currency or a message keeps its text unless it holds
 * a run of three digits. A field the service starts reading with digits in it belongs here, or it
 * will come back masked.
 */

/** The codes of the documented error bodies (`{error, message}`, `{code, success, message}`, the pay-in envelope's `code`). */
const ERROR_FIELDS: Record<string, AnswerShape> = { code: 'code', error: 'code' };

const shape = (fields: Record<string, AnswerShape>): AnswerShape => ({ fields: { ...ERROR_FIELDS, ...fields } });

const PAYIN_TRANSACTION: AnswerShape = {
  fields: {
    reference: 'id',
    external_reference: 'id',
    transaction_reference: 'id',
    amount: 'text',
  },
};

/** A card transaction as the listing gives it (the fields the card history shows). */
const CARD_TRANSACTION: AnswerShape = {
  fields: { transaction_id: 'id', amount: 'text', balance_after: 'text', created_at: 'text' },
};
const TRANSACTION_LIST: AnswerShape = { items: CARD_TRANSACTION };
/** Every envelope `transactionListOf` reads: a bare array, or one under `transactions`, `data`, `items`, up to two levels. */
const INNER_LISTING: AnswerShape = {
  items: CARD_TRANSACTION,
  fields: { transactions: TRANSACTION_LIST, data: TRANSACTION_LIST, items: TRANSACTION_LIST },
};
const LISTING: AnswerShape = {
  items: CARD_TRANSACTION,
  fields: { ...ERROR_FIELDS, transactions: INNER_LISTING, data: INNER_LISTING, items: INNER_LISTING },
};

const CARD_BALANCE_RESULT = shape({ new_balance: 'text', transaction_id: 'id' });

const ANSWER_SHAPES: Readonly<Record<string, AnswerShape>> = {
  'auth.token': shape({ token: 'secret', data: { fields: { expireAt: 'text' } } }),
  'payin.collect': shape({ created_at: 'text', data: PAYIN_TRANSACTION }),
  'cards.user.create': shape({ user_id: 'id', reference: 'id' }),
  'cards.user.get': shape({ user_id: 'id', reference: 'id', first_name: 'text', last_name: 'text', email: 'text', cards: { items: 'id' } }),
  'cards.card.create': shape({ card_id: 'id', card_number: 'secret', expiry: 'text', cvv: 'secret' }),
  'cards.card.get': shape({ card_id: 'id', card_number: 'secret', expiry: 'text', cvv: 'secret', balance: 'text' }),
  'cards.operation.topup': CARD_BALANCE_RESULT,
  'cards.operation.withdraw': CARD_BALANCE_RESULT,
  'cards.operation.transactions': LISTING,
  'link.new': shape({ data: { fields: { apikey: 'secret', matricule: 'id' } } }),
};

/** The shape of an endpoint's answer; an endpoint without one keeps only the error members. */
export function answerShapeOf(endpoint: string): AnswerShape {
  return ANSWER_SHAPES[endpoint] ?? shape({});
}
