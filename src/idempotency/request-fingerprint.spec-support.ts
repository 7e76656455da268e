import { randomBytes } from 'node:crypto';
import { requestFingerprint, type RequestFingerprint } from './request-fingerprint';

/** For the idempotency unit specs: one fingerprint key, and the requests they fingerprint. */
export const KEY = randomBytes(32);
export const requestHash = (request: RequestFingerprint) => requestFingerprint(KEY, request);

export const topUp = (cardId: string, body: unknown): RequestFingerprint => ({
  scope: 'cards.topup',
  method: 'POST',
  route: '/v1/cards/:id/topup',
  params: { id: cardId },
  body,
});
export const fingerprint = (body: unknown, scope = 'probe'): RequestFingerprint => ({
  scope,
  method: 'POST',
  route: '/probe',
  params: {},
  body,
});
