import type { FastifyRequest } from 'fastify';
import { bearerToken, errorBody, header, isPlainObject, shapeForPath, type SandboxContext } from './sandbox.http';
import { formatMinor, luhnCheckDigit } from './sandbox.money';
import type { Card } from './sandbox.cards.types';
import type { TransactionEnvelope } from './sandbox.faults';
import { randomDigits } from './sandbox.ids';

/**
 * Fault answers built from the request, for testing what a client does with a provider that
 * echoes what it was sent (a real provider's error messages do).
 */

const CARD_PATH = /^\/api\/action\/card\/(?:transaction\/)?([^/]+)$/;

/** The card named by a card route's path parameter, if the sandbox knows it. */
function cardOf(ctx: SandboxContext, path: string): Card | undefined {
  const id = CARD_PATH.exec(path)?.[1];
  return id === undefined ? undefined : ctx.state.cards.get(decodeURIComponent(id));
}

/**
 * The `echo` fault: an error in the route family's shape (401 on the token endpoint, 400 elsewhere,
 * unless `status` says otherwise) whose message repeats the request's credentials and, per route:
 * - `POST /api/action/auth`: `invalid private_secretkey <secret> for public_apikey <key>`;
 * - `/api/agent/*` (pay-in, link, distributions): the `x-api-key`, the bearer token and, on a
 *   pay-in, the `successUrl` and `failureUrl` with their tokens;
 * - card routes: `card <card_number> cvv <cvv> declined` (the card of the path, else a made-up
 *   Luhn-valid number) and the `x-sp-auth-token`.
 */
export function echoAnswer(
  ctx: SandboxContext,
  request: FastifyRequest,
  path: string,
  status?: number,
): { status: number; body: Record<string, unknown> } {
  const body = isPlainObject(request.body) ? request.body : {};
  const bearer = bearerToken(request) ?? '';
  let message: string;
  if (path === '/api/action/auth') {
    message = `invalid private_secretkey ${String(body.private_secretkey)} for public_apikey ${String(body.public_apikey)}`;
  } else if (path.startsWith('/api/agent/')) {
    message = `invalid x-api-key ${header(request, 'x-api-key') ?? ''} with bearer ${bearer}`;
    if (typeof body.successUrl === 'string') message += `; successUrl ${body.successUrl} failureUrl ${String(body.failureUrl)}`;
  } else {
    const card = cardOf(ctx, path);
    const payload = `5${randomDigits(14)}`;
    const number = card?.card_number ?? `${payload}${luhnCheckDigit(payload)}`;
    message = `card ${number} cvv ${card?.cvv ?? randomDigits(3)} declined (x-sp-auth-token ${header(request, 'x-sp-auth-token') ?? ''}, bearer ${bearer})`;
  }
  const answerStatus = status ?? (path === '/api/action/auth' ? 401 : 400);
  return { status: answerStatus, body: errorBody(shapeForPath(path), answerStatus, message) };
}

/**
 * The `echoDelivered` fault: a success answer whose `message` repeats the secrets it delivers, as
 * a provider that echoes what it just issued would (undefined when the answer delivers none).
 */
export function echoDelivered(answer: unknown): Record<string, unknown> | undefined {
  if (!isPlainObject(answer)) return undefined;
  const data = isPlainObject(answer.data) ? answer.data : {};
  const echoes: string[] = [];
  if (typeof answer.token === 'string') echoes.push(`token ${answer.token} issued`);
  if (typeof data.apikey === 'string') echoes.push(`wallet linked with apikey ${data.apikey}`);
  if (typeof answer.card_number === 'string') echoes.push(`card ${answer.card_number} issued with code ${String(answer.cvv)}`);
  if (echoes.length === 0) return undefined;
  return { ...answer, message: [typeof answer.message === 'string' ? answer.message : '', ...echoes].filter(Boolean).join('; ') };
}

/** A card's history as the `transactions` operation lists it. */
export function transactionList(card: Card): Record<string, unknown>[] {
  return card.transactions.map((tx) => ({
    transaction_id: tx.transaction_id,
    type: tx.type,
    amount: formatMinor(tx.amountMinor, card.decimals),
    currency: card.currency,
    balance_after: formatMinor(tx.balanceAfterMinor, card.decimals),
    created_at: tx.created_at,
  }));
}

/**
 * The `transactionsEnvelope` fault: the card's listing wrapped as asked (`''` a bare array,
 * `data.transactions` = `{data: {transactions: [...]}}`); undefined when the path names no known card.
 */
export function envelopedTransactions(ctx: SandboxContext, path: string, envelope: TransactionEnvelope): unknown {
  const card = cardOf(ctx, path);
  if (!card) return undefined;
  return envelope
    .split('.')
    .filter(Boolean)
    .reduceRight<unknown>((inner, key) => ({ [key]: inner }), transactionList(card));
}
