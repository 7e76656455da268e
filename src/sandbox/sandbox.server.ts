import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { AddressInfo } from 'node:net';
import { registerCardRoutes } from './sandbox.cards';
import { echoAnswer, echoDelivered, envelopedTransactions } from './sandbox.echo';
import { errorBody, isPlainObject, pathOf, sendError, shapeForPath, type SandboxContext } from './sandbox.http';
import { registerLinkRoutes } from './sandbox.link';
import { formatMinor } from './sandbox.money';
import { resolveSandboxOptions, type SandboxOptions } from './sandbox.options';
import { registerPayInRoutes } from './sandbox.payin';
import { pathMatches, type SandboxFault } from './sandbox.faults';
import { SandboxState } from './sandbox.state';
import { TEST_WALLET_LIST } from './test-wallets';

export { SANDBOX_DEFAULTS, type SandboxOptions } from './sandbox.options';
export * from './sandbox.cards.types';
export * from './sandbox.faults';
export * from './sandbox.link.types';
export * from './sandbox.payin.types';
export * from './sandbox.state';
export * from './test-wallets';

export interface RunningSandbox {
  /** Base URL, e.g. `http://127.0.0.1:41234` (no trailing slash): both `{base_url}` and `{link_base_url}`. */
  url: string;
  port: number;
  state: SandboxState;
  /** Stops listening, cancels pending callbacks and releases held requests. Idempotent. */
  close(): Promise<void>;
}

const CONTROL_PREFIX = '/__sandbox';

function dropConnection(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.hijack();
  request.raw.socket?.destroy();
  return reply;
}

function buildApp(ctx: SandboxContext): FastifyInstance {
  const { state, opts, log } = ctx;
  const app = Fastify({ logger: false, forceCloseConnections: true, bodyLimit: 1024 * 1024 });
  /** Requests whose normal answer gets its delivered secrets echoed (`echoDelivered`). */
  const echoingDelivered = new WeakSet<FastifyRequest>();

  // Bodies are parsed by hand so that malformed JSON reaches the route, which answers in its own shape,
  // and so that any content type is accepted and recorded.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, payload, done) => {
    const text = String(payload);
    if (text.length === 0) return done(null, undefined);
    if (/json/i.test(request.headers['content-type'] ?? '')) {
      try {
        return done(null, JSON.parse(text));
      } catch {
        ctx.malformed.add(request);
      }
    }
    return done(null, text);
  });

  // Record every request (before any validation), then apply an injected fault if one matches.
  app.addHook('preHandler', async (request, reply) => {
    const path = pathOf(request);
    if (path === CONTROL_PREFIX || path.startsWith(`${CONTROL_PREFIX}/`)) return;
    state.record({
      method: request.method,
      path,
      query: { ...(request.query as Record<string, unknown>) },
      headers: { ...request.headers },
      body: request.body ?? null,
      ip: request.ip,
    });
    if (request.method === 'POST' && path === '/api/action/auth') state.counters.authRequests++;

    const fault = state.takeFault(request.method, path);
    if (!fault) return;
    log('fault applied', { method: request.method, path, fault });
    if (fault.delayMs) {
      const elapsed = await state.sleep(fault.delayMs);
      if (!elapsed) return dropConnection(request, reply);
    }
    if (fault.dropConnection) return dropConnection(request, reply);
    if (fault.echo) {
      const echoed = echoAnswer(ctx, request, path, fault.status);
      return reply.code(echoed.status).send(echoed.body);
    }
    if (fault.echoDelivered) {
      echoingDelivered.add(request);
      return;
    }
    if (fault.transactionsEnvelope !== undefined) {
      const listing = envelopedTransactions(ctx, path, fault.transactionsEnvelope);
      if (listing !== undefined) return reply.code(200).send(listing);
    }
    if (fault.status === undefined && fault.body === undefined && fault.rawBody === undefined) return;
    reply.code(fault.status ?? 500);
    if (fault.rawBody !== undefined) return reply.type(fault.contentType ?? 'text/plain').send(fault.rawBody);
    if (fault.body !== undefined) {
      return reply.type(fault.contentType ?? 'application/json').send(JSON.stringify(fault.body));
    }
    return reply.send();
  });

  app.addHook('onSend', async (request, _reply, payload) => {
    if (!echoingDelivered.has(request) || typeof payload !== 'string') return payload;
    let answer: unknown;
    try {
      answer = JSON.parse(payload);
    } catch {
      return payload;
    }
    const echoed = echoDelivered(answer);
    return echoed ? JSON.stringify(echoed) : payload;
  });

  app.post('/api/action/auth', async (request, reply) => {
    if (ctx.malformed.has(request)) return sendError(reply, 'action', 400, 'Malformed JSON body');
    const body = isPlainObject(request.body) ? request.body : {};
    if (body.public_apikey !== opts.apiKey || body.private_secretkey !== opts.secretKey) {
      log('auth refused');
      return sendError(reply, 'action', 401, 'Invalid credentials');
    }
    const { token, expiresAt } = state.issueToken(opts.tokenTtlMs);
    log('token issued', { expireAt: new Date(expiresAt).toISOString() });
    return reply.code(200).send({ token, data: { expireAt: new Date(expiresAt).toISOString() } });
  });

  registerPayInRoutes(app, ctx);
  registerCardRoutes(app, ctx);
  registerLinkRoutes(app, ctx);
  registerControlRoutes(app, state);

  app.setNotFoundHandler((request, reply) => {
    sendError(reply, shapeForPath(pathOf(request)), 404, `Route ${request.method} ${pathOf(request)} not found`);
  });

  app.setErrorHandler((error: { statusCode?: number; message?: string }, request, reply) => {
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    log('request error', { path: pathOf(request), status, message: error.message });
    reply
      .code(status)
      .send(errorBody(shapeForPath(pathOf(request)), status, status === 500 ? 'Internal sandbox error' : (error.message ?? 'Bad request')));
  });

  return app;
}

/** Test-only routes: not recorded, not authenticated, never subject to faults. */
function registerControlRoutes(app: FastifyInstance, state: SandboxState): void {
  app.get(`${CONTROL_PREFIX}/requests`, (request) => {
    const q = request.query as Record<string, unknown>;
    const path = typeof q.path === 'string' && q.path ? q.path : undefined;
    const method = typeof q.method === 'string' && q.method ? q.method.toUpperCase() : undefined;
    return Promise.resolve(state.requests.filter((r) => (!path || pathMatches(path, r.path)) && (!method || r.method === method)));
  });

  app.get(`${CONTROL_PREFIX}/callbacks`, () => Promise.resolve(state.callbackDeliveries));

  app.get(`${CONTROL_PREFIX}/stats`, () =>
    Promise.resolve({
      ...state.counters,
      activeTokens: state.tokens.size,
      pendingFaults: state.pendingFaults.length,
    }),
  );

  app.get(`${CONTROL_PREFIX}/test-wallets`, () => Promise.resolve(TEST_WALLET_LIST));

  app.get(`${CONTROL_PREFIX}/state`, () =>
    Promise.resolve({
      payIns: [...state.payIns.values()],
      cardUsers: [...state.cardUsers.values()],
      cards: [...state.cards.values()].map((c) => ({
        card_id: c.card_id,
        user_id: c.user_id,
        card_number: c.card_number,
        expiry: c.expiry,
        currency: c.currency,
        balance: formatMinor(c.balanceMinor, c.decimals),
        status: c.status,
        transactions: c.transactions.map((t) => ({
          transaction_id: t.transaction_id,
          type: t.type,
          amount: formatMinor(t.amountMinor, c.decimals),
          balance_after: formatMinor(t.balanceAfterMinor, c.decimals),
          created_at: t.created_at,
        })),
      })),
      walletLinks: [...state.walletLinks.values()],
      linkInits: [...state.linkInits.values()],
      fiatDistributions: state.fiatDistributions,
    }),
  );

  app.post(`${CONTROL_PREFIX}/reset`, (request) => {
    const q = request.query as Record<string, unknown>;
    const body = isPlainObject(request.body) ? request.body : {};
    const all = body.all === true || q.all === 'true' || q.all === '1';
    state.reset({ all });
    return Promise.resolve({ success: true, all });
  });

  app.post(`${CONTROL_PREFIX}/faults`, async (request, reply) => {
    if (!isPlainObject(request.body)) return reply.code(400).send({ error: 400, message: 'Body must be a JSON fault object' });
    try {
      const id = state.injectFault(request.body as unknown as SandboxFault);
      return reply.code(201).send({ id });
    } catch (err) {
      return reply.code(400).send({ error: 400, message: err instanceof Error ? err.message : String(err) });
    }
  });

  app.delete(`${CONTROL_PREFIX}/faults`, () => {
    state.clearFaults();
    return Promise.resolve({ success: true });
  });

  app.post(`${CONTROL_PREFIX}/tokens/revoke`, () => {
    const revoked = state.tokens.size;
    state.revokeTokens();
    return Promise.resolve({ success: true, revoked });
  });
}

/**
 * Starts a stateful simulator of the payment provider on `host:port` (default 127.0.0.1, random
 * port). All ten provider endpoints are served on one base URL.
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const opts = resolveSandboxOptions(options);
  const state = new SandboxState();
  const ctx: SandboxContext = { opts, state, log: opts.logger, malformed: new WeakSet() };
  const app = buildApp(ctx);
  try {
    await app.listen({ port: opts.port, host: opts.host });
  } catch (err) {
    state.shutdown();
    await app.close().catch(() => undefined);
    throw err;
  }
  const port = (app.server.address() as AddressInfo).port;
  const urlHost = opts.host === '0.0.0.0' || opts.host === '::' ? '127.0.0.1' : opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  const url = `http://${urlHost}:${port}`;
  opts.logger('sandbox listening', { url });

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    state,
    close() {
      closing ??= (async () => {
        state.shutdown();
        await app.close();
        opts.logger('sandbox closed', { url });
      })();
      return closing;
    },
  };
}
