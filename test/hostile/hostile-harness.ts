import { randomUUID } from 'node:crypto';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { SandboxOptions } from '../../src/sandbox/sandbox.options';
import type { TestService } from '../support/test-service';
import { cardUserRequest } from '../support/cards-factories';
import { apiUser, startLinkHosts, uniqueLinkEmail, type LinkHosts } from '../wallet-links/link-hosts';

export const PROBLEM_JSON = /^application\/problem\+json/;

export interface InjectedAnswer {
  status: number;
  contentType: string;
  body: any;
  raw: string;
  headers: Record<string, string | string[] | number | undefined>;
}

/**
 * The whole service (orders, cards, wallet links, distributions) with both provider hosts, and
 * requests sent through Fastify's `inject`: no socket, so thousands of cases stay fast.
 */
export async function startHostileHosts(env: Record<string, string> = {}, sandboxOptions: SandboxOptions = {}): Promise<LinkHosts> {
  return startLinkHosts(env, sandboxOptions);
}

/** Sends one request in-process; the body is sent as the exact JSON text given (or any string). */
export async function inject(
  service: TestService,
  options: {
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
    url: string;
    token?: string;
    key?: string;
    payload?: string;
    query?: Record<string, string>;
  },
): Promise<InjectedAnswer> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.key) headers['idempotency-key'] = options.key;
  if (options.payload !== undefined) headers['content-type'] = 'application/json';
  const request: InjectOptions = { method: options.method, url: options.url, headers, payload: options.payload, query: options.query };
  const res: LightMyRequestResponse = await service.app.getHttpAdapter().getInstance().inject(request);
  const contentType = String(res.headers['content-type'] ?? '');
  let body: unknown;
  try {
    body = res.body ? JSON.parse(res.body) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.statusCode, contentType, body, raw: res.body, headers: res.headers };
}

/** Sends a JSON body (serialised with JSON.stringify, which keeps `__proto__` own keys). */
export function postJson(
  service: TestService,
  url: string,
  token: string,
  body: unknown,
  key: string = randomUUID(),
): Promise<InjectedAnswer> {
  return inject(service, { method: 'POST', url, token, key, payload: JSON.stringify(body) });
}

/** A problem answer as the contract fixes it: problem+json with a numeric status and a code. */
export function problemShapeFailure(answer: InjectedAnswer): string | undefined {
  if (!PROBLEM_JSON.test(answer.contentType)) return `content-type ${answer.contentType}`;
  if (typeof answer.body !== 'object' || answer.body === null) return 'no JSON body';
  if (answer.body.status !== answer.status) return `status member ${answer.body.status}`;
  if (typeof answer.body.code !== 'string' || !answer.body.code) return 'no code';
  return undefined;
}

/**
 * What the hostile specs aim at: a customer with linked wallets (their matricules), one card user
 * and `cards` cards of it with `balance` XAF each.
 */
export async function seedCustomer(hosts: LinkHosts, options: { phones: string[]; cards: number; balance: string }) {
  const owner = await apiUser(hosts.service);
  const matricules: string[] = [];
  for (const phone of options.phones) {
    const res = await owner.createLink({ email: uniqueLinkEmail('benef'), phone, phoneCountry: '+237' });
    if (res.status !== 201) throw new Error(`wallet link failed: ${res.status} ${JSON.stringify(res.body)}`);
    matricules.push(res.body.matricule);
  }
  const user = await postJson(hosts.service, '/v1/card-users', owner.token, cardUserRequest());
  if (user.status !== 201) throw new Error(`card user creation failed: ${user.status} ${user.raw}`);
  const cardIds: string[] = [];
  for (let i = 0; i < options.cards; i++) {
    const card = await postJson(hosts.service, `/v1/card-users/${user.body.id}/cards`, owner.token, {
      balance: options.balance,
      currency: 'XAF',
    });
    if (card.status !== 201) throw new Error(`card creation failed: ${card.status} ${card.raw}`);
    cardIds.push(card.body.id);
  }
  return { owner, token: owner.token, matricules, cardUserId: user.body.id as string, cardIds };
}
