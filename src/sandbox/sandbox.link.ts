import type { FastifyInstance } from 'fastify';
import { guard, isEmail, isNonEmptyString, isPlainObject, queryString, sendError, type SandboxContext } from './sandbox.http';
import { isCurrencyCode } from './sandbox.money';
import { randomDigits, randomHex } from './sandbox.ids';
import type { DistributionEntry } from './sandbox.link.types';
import type { SandboxState } from './sandbox.state';

/** Rates are compared in millionths of a percent so that 33.33 + 33.33 + 33.34 is exactly 100. */
const RATE_SCALE = 1_000_000;

function isPositiveNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}

function distributionProblem(state: SandboxState, value: unknown): string | undefined {
  if (!Array.isArray(value) || value.length === 0) return 'distribution must be a non-empty array';
  const seen = new Set<string>();
  let total = 0;
  for (const [index, entry] of value.entries()) {
    if (!isPlainObject(entry)) return `distribution[${index}] must be an object`;
    if (!isNonEmptyString(entry.matricule)) return `distribution[${index}].matricule is required`;
    if (!isPositiveNumber(entry.rate)) return `distribution[${index}].rate must be a number greater than 0`;
    if (seen.has(entry.matricule)) return `matricule ${entry.matricule} appears more than once`;
    seen.add(entry.matricule);
    if (![...state.walletLinks.values()].some((l) => l.matricule === entry.matricule)) {
      return `Unknown matricule ${entry.matricule}`;
    }
    total += Math.round(entry.rate * RATE_SCALE);
  }
  if (total > 100 * RATE_SCALE) return 'The sum of the rates must not exceed 100';
  return undefined;
}

function copyDistribution(value: unknown): DistributionEntry[] {
  return (value as Array<Record<string, unknown>>).map((e) => ({ matricule: e.matricule as string, rate: e.rate as number }));
}

export function registerLinkRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const { state, log } = ctx;

  app.get('/api/agent/link/new', async (request, reply) => {
    if (guard(ctx, request, reply, 'link-new')) return reply;
    const email = queryString(request, 'email');
    const phone = queryString(request, 'phone');
    const phoneCountry = queryString(request, 'phoneCountry');
    if (!email) return sendError(reply, 'link-new', 400, 'email is required');
    if (!isEmail(email)) return sendError(reply, 'link-new', 400, 'email must be a valid email address');
    if (!phone) return sendError(reply, 'link-new', 400, 'phone is required');
    if (!/^\d{4,15}$/.test(phone)) return sendError(reply, 'link-new', 400, 'phone must contain digits only');
    if (!phoneCountry) return sendError(reply, 'link-new', 400, 'phoneCountry is required');
    if (!/^\+\d{1,4}$/.test(phoneCountry)) return sendError(reply, 'link-new', 400, 'phoneCountry must be + followed by digits');
    const key = email.toLowerCase();
    if (state.walletLinks.has(key)) return sendError(reply, 'link-new', 400, 'User already linked');
    const link = {
      email,
      phone,
      phoneCountry,
      apikey: `lk_${randomHex(20)}`,
      matricule: `MAT${randomDigits(8)}`,
      created_at: new Date().toISOString(),
    };
    state.walletLinks.set(key, link);
    log('wallet linked', { email, matricule: link.matricule });
    return reply.code(200).send({
      success: true,
      data: { apikey: link.apikey, matricule: link.matricule },
      message: 'User linked successfully',
    });
  });

  app.post('/api/agent/link/init', async (request, reply) => {
    if (guard(ctx, request, reply, 'agent')) return reply;
    if (ctx.malformed.has(request)) return sendError(reply, 'agent', 400, 'Malformed JSON body');
    const body = request.body;
    if (!isPlainObject(body)) return sendError(reply, 'agent', 400, 'Body must be a JSON object');
    if (!isNonEmptyString(body.payment_receiver)) return sendError(reply, 'agent', 400, 'payment_receiver is required');
    if (!isNonEmptyString(body.payment_id)) return sendError(reply, 'agent', 400, 'payment_id is required');
    if (!isPositiveNumber(body.amount)) return sendError(reply, 'agent', 400, 'amount must be a number greater than 0');
    const problem = distributionProblem(state, body.distribution);
    if (problem) return sendError(reply, 'agent', 400, problem);
    if (state.linkInits.has(body.payment_id)) return sendError(reply, 'agent', 400, 'Duplicate payment_id');
    state.linkInits.set(body.payment_id, {
      payment_receiver: body.payment_receiver,
      payment_id: body.payment_id,
      amount: body.amount,
      distribution: copyDistribution(body.distribution),
      created_at: new Date().toISOString(),
    });
    log('transaction initialised', { payment_id: body.payment_id });
    return reply.code(200).send({ success: true, message: 'Transaction initialised successfully' });
  });

  app.post('/api/agent/link/fiat-distribution', async (request, reply) => {
    if (guard(ctx, request, reply, 'agent')) return reply;
    if (ctx.malformed.has(request)) return sendError(reply, 'agent', 400, 'Malformed JSON body');
    const body = request.body;
    if (!isPlainObject(body) || !isPlainObject(body.data)) return sendError(reply, 'agent', 400, 'data must be an object');
    const data = body.data;
    if (!isNonEmptyString(data.payer)) return sendError(reply, 'agent', 400, 'payer is required');
    if (!isCurrencyCode(data.currency)) return sendError(reply, 'agent', 400, 'currency must be a 3-letter code');
    if (!isPositiveNumber(data.amount)) return sendError(reply, 'agent', 400, 'amount must be a number greater than 0');
    const problem = distributionProblem(state, data.distribution);
    if (problem) return sendError(reply, 'agent', 400, problem);
    const id = `FD${randomDigits(12)}`;
    state.fiatDistributions.push({
      id,
      payer: data.payer,
      currency: data.currency.toUpperCase(),
      amount: data.amount,
      distribution: copyDistribution(data.distribution),
      created_at: new Date().toISOString(),
    });
    log('fiat distribution', { id, payer: data.payer });
    return reply.code(200).send({ success: true, message: 'Distribution completed successfully' });
  });
}
