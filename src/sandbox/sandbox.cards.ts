import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { guard, isEmail, isNonEmptyString, isPlainObject, queryString, sendError, type SandboxContext } from './sandbox.http';
import { currencyDecimals, formatMinor, isCurrencyCode, luhnCheckDigit, parseDecimalAmount } from './sandbox.money';
import { transactionList } from './sandbox.echo';
import type { Card, CardStatus, CardTransaction, CardUser } from './sandbox.cards.types';
import { randomDigits, randomHex } from './sandbox.ids';

const OPTIONAL_USER_STRINGS = [
  'billing_adress',
  'billing_city',
  'billing_country',
  'id_number',
  'business_name',
  'billing_state',
  'billing_postal_code',
] as const;

const CARD_OPERATIONS = ['topup', 'withdraw', 'disabled', 'enabled', 'transactions', 'terminate'] as const;
type CardOperation = (typeof CARD_OPERATIONS)[number];

function isValidDob(value: unknown): value is string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const [y, m, d] = value.split('-').map(Number);
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d && y >= 1900 && date.getTime() < Date.now();
}

function cardUserProblem(body: Record<string, unknown>): string | undefined {
  for (const field of ['first_name', 'last_name', 'email', 'country_code', 'contact', 'dob']) {
    if (!isNonEmptyString(body[field])) return `${field} is required`;
  }
  if (!isEmail(body.email)) return 'email must be a valid email address';
  if (!/^[A-Za-z]{2}$/.test(body.country_code as string)) return 'country_code must be a two-letter country code';
  if (!/^\+?\d{6,15}$/.test((body.contact as string).replace(/[\s-]/g, ''))) return 'contact must be a phone number';
  if (!isValidDob(body.dob)) return 'dob must be a past date formatted YYYY-MM-DD';
  if (body.is_business !== undefined && body.is_business !== null && typeof body.is_business !== 'boolean') {
    return 'is_business must be a boolean';
  }
  for (const field of OPTIONAL_USER_STRINGS) {
    const value = body[field];
    if (value !== undefined && value !== null && typeof value !== 'string') return `${field} must be a string`;
  }
  if (body.is_business === true && !isNonEmptyString(body.business_name)) {
    return 'business_name is required when is_business is true';
  }
  return undefined;
}

function newCardNumber(existing: Iterable<Card>): string {
  const used = new Set([...existing].map((c) => c.card_number));
  for (;;) {
    const payload = `4${randomDigits(14)}`;
    const number = `${payload}${luhnCheckDigit(payload)}`;
    if (!used.has(number)) return number;
  }
}

function expiryInThreeYears(now = new Date()): string {
  const month = String(now.getUTCMonth() + 1).padStart(2, '0');
  const year = String((now.getUTCFullYear() + 3) % 100).padStart(2, '0');
  return `${month}/${year}`;
}

function cardView(card: Card): Record<string, unknown> {
  return {
    card_id: card.card_id,
    card_number: card.card_number,
    expiry: card.expiry,
    balance: formatMinor(card.balanceMinor, card.decimals),
    currency: card.currency,
    status: card.status,
  };
}

export function registerCardRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const { state, opts, log } = ctx;

  /** Answers for malformed or non-object bodies; returns the object body otherwise. */
  function objectBody(request: FastifyRequest, reply: FastifyReply): Record<string, unknown> | undefined {
    if (ctx.malformed.has(request)) {
      sendError(reply, 'action', 400, 'Malformed JSON body');
      return undefined;
    }
    if (!isPlainObject(request.body)) {
      sendError(reply, 'action', 400, 'Body must be a JSON object');
      return undefined;
    }
    return request.body;
  }

  app.post('/api/action/card/user', async (request, reply) => {
    if (guard(ctx, request, reply, 'card')) return reply;
    const body = objectBody(request, reply);
    if (!body) return reply;
    const problem = cardUserProblem(body);
    if (problem) return sendError(reply, 'action', 400, problem);
    const optional = (field: (typeof OPTIONAL_USER_STRINGS)[number]) => (typeof body[field] === 'string' ? body[field] : null);
    const user: CardUser = {
      user_id: `usr_${randomHex(12)}`,
      reference: `CU${randomDigits(14)}`,
      first_name: body.first_name as string,
      last_name: body.last_name as string,
      email: body.email as string,
      country_code: (body.country_code as string).toUpperCase(),
      contact: body.contact as string,
      dob: body.dob as string,
      is_business: body.is_business === true,
      billing_adress: optional('billing_adress'),
      billing_city: optional('billing_city'),
      billing_country: optional('billing_country'),
      id_number: optional('id_number'),
      business_name: optional('business_name'),
      billing_state: optional('billing_state'),
      billing_postal_code: optional('billing_postal_code'),
      cards: [],
      created_at: new Date().toISOString(),
    };
    state.cardUsers.set(user.reference, user);
    log('card user created', { user_id: user.user_id, reference: user.reference });
    return reply.code(200).send({ user_id: user.user_id, reference: user.reference });
  });

  app.get<{ Params: { reference: string } }>('/api/action/card/user/:reference', async (request, reply) => {
    if (guard(ctx, request, reply, 'card')) return reply;
    const user = state.cardUsers.get(request.params.reference);
    if (!user) return sendError(reply, 'action', 404, 'User not found');
    return reply.code(200).send({
      user_id: user.user_id,
      first_name: user.first_name,
      last_name: user.last_name,
      email: user.email,
      cards: [...user.cards],
    });
  });

  app.post<{ Params: { userId: string } }>('/api/action/card/:userId', async (request, reply) => {
    if (guard(ctx, request, reply, 'card')) return reply;
    const user = [...state.cardUsers.values()].find((u) => u.user_id === request.params.userId);
    if (!user) return sendError(reply, 'action', 404, 'User not found');
    const body = objectBody(request, reply);
    if (!body) return reply;
    if (typeof body.currency !== 'string') return sendError(reply, 'action', 400, 'currency is required and must be a string');
    if (!isCurrencyCode(body.currency)) return sendError(reply, 'action', 400, 'currency must be a 3-letter code');
    if (typeof body.balance !== 'string') return sendError(reply, 'action', 400, 'balance is required and must be a string');
    const currency = body.currency.toUpperCase();
    const decimals = currencyDecimals(currency);
    const balance = parseDecimalAmount(body.balance, decimals);
    if (!balance.ok) return sendError(reply, 'action', 400, `balance ${balance.reason}`);
    const card: Card = {
      card_id: `card_${randomHex(12)}`,
      user_id: user.user_id,
      card_number: newCardNumber(state.cards.values()),
      expiry: expiryInThreeYears(),
      cvv: randomDigits(3),
      currency,
      decimals,
      balanceMinor: balance.minor,
      status: 'active',
      transactions: [],
      created_at: new Date().toISOString(),
    };
    state.cards.set(card.card_id, card);
    user.cards.push(card.card_id);
    log('card created', { card_id: card.card_id, user_id: user.user_id });
    return reply.code(200).send({ card_id: card.card_id, card_number: card.card_number, expiry: card.expiry, cvv: card.cvv });
  });

  app.get<{ Params: { id: string } }>('/api/action/card/:id', async (request, reply) => {
    if (guard(ctx, request, reply, 'card')) return reply;
    const card = state.cards.get(request.params.id);
    if (!card) return sendError(reply, 'action', 404, 'Card not found');
    return reply.code(200).send(cardView(card));
  });

  app.get<{ Params: { id: string } }>('/api/action/card/transaction/:id', async (request, reply) => {
    if (guard(ctx, request, reply, 'card')) return reply;
    const card = state.cards.get(request.params.id);
    if (!card) return sendError(reply, 'action', 404, 'Card not found');
    const operation = queryString(request, opts.cardOperationParam) as CardOperation | undefined;
    if (!operation || !CARD_OPERATIONS.includes(operation)) {
      return sendError(reply, 'action', 400, `${opts.cardOperationParam} must be one of ${CARD_OPERATIONS.join(', ')}`);
    }
    if (operation === 'transactions') {
      // Reading the history stays possible on a terminated card.
      return reply.code(200).send({ transactions: transactionList(card) });
    }
    if (card.status === 'terminated') return sendError(reply, 'action', 400, 'Card is terminated');

    if (operation === 'topup' || operation === 'withdraw') {
      if (card.status === 'disabled') return sendError(reply, 'action', 400, 'Card is disabled');
      const amountText = queryString(request, opts.cardAmountParam);
      const currency = queryString(request, opts.cardCurrencyParam);
      if (amountText === undefined) return sendError(reply, 'action', 400, `${opts.cardAmountParam} is required`);
      if (currency === undefined) return sendError(reply, 'action', 400, `${opts.cardCurrencyParam} is required`);
      if (currency.toUpperCase() !== card.currency) {
        return sendError(reply, 'action', 400, `${opts.cardCurrencyParam} must be the card currency ${card.currency}`);
      }
      const amount = parseDecimalAmount(amountText, card.decimals);
      if (!amount.ok) return sendError(reply, 'action', 400, `${opts.cardAmountParam} ${amount.reason}`);
      if (amount.minor <= 0n) return sendError(reply, 'action', 400, `${opts.cardAmountParam} must be greater than 0`);
      if (operation === 'withdraw' && amount.minor > card.balanceMinor) {
        return sendError(reply, 'action', 400, 'Insufficient balance');
      }
      card.balanceMinor += operation === 'topup' ? amount.minor : -amount.minor;
      const tx: CardTransaction = {
        transaction_id: `ctx_${randomHex(12)}`,
        type: operation,
        amountMinor: amount.minor,
        balanceAfterMinor: card.balanceMinor,
        created_at: new Date().toISOString(),
      };
      card.transactions.push(tx);
      log(`card ${operation}`, { card_id: card.card_id, amount: amountText });
      return reply.code(200).send({ new_balance: formatMinor(card.balanceMinor, card.decimals), transaction_id: tx.transaction_id });
    }

    const next: Record<'disabled' | 'enabled' | 'terminate', CardStatus> = {
      disabled: 'disabled',
      enabled: 'active',
      terminate: 'terminated',
    };
    card.status = next[operation];
    const messages: Record<CardStatus, string> = {
      active: 'Card enabled',
      disabled: 'Card disabled',
      terminated: 'Card terminated',
    };
    log(`card ${operation}`, { card_id: card.card_id });
    return reply.code(200).send({ success: true, status: card.status, message: messages[card.status] });
  });
}
