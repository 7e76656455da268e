import axios from 'axios';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { guard, header, isEmail, isHttpUrl, isNonEmptyString, isPlainObject, providerDateTime, type SandboxContext } from './sandbox.http';
import { randomDigits } from './sandbox.ids';
import type { CallbackOutcome, CallbackPayload, PayIn } from './sandbox.payin.types';
import { testWalletBehaviour, type TestWalletBehaviour } from './test-wallets';

const MAX_CALLBACK_ATTEMPTS = 5;
const CALLBACK_REQUEST_TIMEOUT_MS = 10_000;

function newProviderReference(): string {
  return `SP${randomDigits(14)}`;
}

function envelopeData(reference: string, body: Record<string, unknown>): Record<string, unknown> {
  return {
    operation: 'PURCHASE',
    reference,
    external_reference: typeof body.order_id === 'string' ? body.order_id : null,
    transaction_reference: null,
    transaction_category: 'direct',
    transaction_channel: 'MSISDN',
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the sandbox echoes whatever scalar it was sent, as the provider does
    amount: body.amount === undefined || body.amount === null ? null : String(body.amount),
    currency: typeof body.currency === 'string' ? body.currency : null,
  };
}

/** Shape (b): the full envelope with success false, code 400, status FAILURE. */
function sendRejection(reply: FastifyReply, body: Record<string, unknown>, message: string): FastifyReply {
  return reply.code(400).send({
    success: false,
    code: 400,
    status: 'FAILURE',
    created_at: providerDateTime(),
    data: envelopeData(newProviderReference(), body),
    message,
  });
}

/** First problem of a pay-in body, or undefined when it is valid. */
function payInBodyProblem(body: Record<string, unknown>): string | undefined {
  for (const field of ['wallet', 'amount', 'currency', 'order_id', 'description', 'payer', 'payerEmail', 'successUrl', 'failureUrl']) {
    if (body[field] === undefined || body[field] === null || body[field] === '') return `${field} is required`;
  }
  if (!isNonEmptyString(body.wallet) || body.wallet.length > 64) return 'wallet must be a non-empty string';
  if (typeof body.amount !== 'number' || !Number.isFinite(body.amount) || body.amount <= 0) {
    return 'amount must be a number greater than 0';
  }
  if (typeof body.currency !== 'string' || !/^[A-Za-z]{3}$/.test(body.currency)) return 'currency must be a 3-letter code';
  if (!isNonEmptyString(body.order_id)) return 'order_id must be a non-empty string';
  if (typeof body.description !== 'string') return 'description must be a string';
  if (!isNonEmptyString(body.payer)) return 'payer must be a non-empty string';
  if (!isEmail(body.payerEmail)) return 'payerEmail must be a valid email address';
  if (!isHttpUrl(body.successUrl)) return 'successUrl must be an absolute http(s) URL';
  if (!isHttpUrl(body.failureUrl)) return 'failureUrl must be an absolute http(s) URL';
  return undefined;
}

export function registerPayInRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const { state, opts, log } = ctx;

  async function deliver(payIn: PayIn, payload: CallbackPayload): Promise<void> {
    const url = payload.status === 'SUCCESS' ? payIn.successUrl : payIn.failureUrl;
    for (let attempt = 1; attempt <= MAX_CALLBACK_ATTEMPTS; attempt++) {
      if (state.closed) return;
      const { controller, done } = state.newAbortController();
      const timer = setTimeout(() => controller.abort(), CALLBACK_REQUEST_TIMEOUT_MS);
      timer.unref();
      let httpStatus: number | null = null;
      let error: string | undefined;
      try {
        // axios, the HTTP client the service was ordered with (its provider calls use node:http: ADR 0015).
        const response = await axios.post(url, JSON.stringify(payload), {
          headers: { 'content-type': 'application/json' },
          signal: controller.signal,
          validateStatus: () => true,
          responseType: 'arraybuffer',
          // Like fetch: no proxy taken from the environment.
          proxy: false,
        });
        httpStatus = response.status;
      } catch (err) {
        const code = (err as { code?: string } | null)?.code;
        error = err instanceof Error ? `${err.name}: ${err.message}${code ? ` (${code})` : ''}` : String(err);
      } finally {
        clearTimeout(timer);
        done();
      }
      if (state.closed) return;
      const ok = httpStatus !== null && httpStatus >= 200 && httpStatus < 300;
      state.recordDelivery({
        url,
        reference: payIn.reference,
        orderId: payIn.order_id,
        outcome: payload.status,
        attempt,
        httpStatus,
        ok,
        ...(error ? { error } : {}),
        payload,
      });
      log('callback delivery', { url, outcome: payload.status, attempt, httpStatus, error });
      if (ok) return;
      if (attempt < MAX_CALLBACK_ATTEMPTS) {
        const slept = await state.sleep(opts.callbackDelayMs * 2 ** (attempt - 1));
        if (!slept) return;
      }
    }
  }

  function payloadFor(payIn: PayIn, outcome: CallbackOutcome): CallbackPayload {
    payIn.transaction_reference ??= `TR${randomDigits(12)}`;
    return {
      status: outcome,
      reference: payIn.reference,
      external_reference: payIn.order_id,
      amount: String(payIn.amount),
      currency: payIn.currency,
      transaction_reference: payIn.transaction_reference,
      message: outcome === 'SUCCESS' ? 'Transaction successful' : 'Transaction failed',
      created_at: providerDateTime(),
    };
  }

  /** Runs `deliveries` one after the other, each `callbackDelayMs` after the previous one ended. */
  function scheduleCallbacks(payIn: PayIn, outcomes: CallbackOutcome[], reusePayload = false): void {
    let previous: CallbackPayload | undefined;
    const next = (index: number) => {
      if (index >= outcomes.length) return;
      state.schedule(() => {
        const outcome = outcomes[index];
        const payload = reusePayload && previous ? previous : payloadFor(payIn, outcome);
        previous = payload;
        payIn.status = outcome === 'SUCCESS' ? 'SUCCESS' : 'FAILED';
        void deliver(payIn, payload).then(() => next(index + 1));
      }, opts.callbackDelayMs);
    };
    next(0);
  }

  function scheduleOutcome(payIn: PayIn, behaviour: TestWalletBehaviour): void {
    switch (behaviour) {
      case 'failure':
        return scheduleCallbacks(payIn, ['FAILED']);
      case 'no_callback':
        return;
      case 'conflicting_callbacks':
        return scheduleCallbacks(payIn, ['SUCCESS', 'FAILED']);
      case 'duplicate_callback':
        return scheduleCallbacks(payIn, ['SUCCESS', 'SUCCESS'], true);
      case 'success':
      case 'insufficient_funds':
      case 'timeout':
      case 'server_error':
      case 'lost_answer':
      default:
        return scheduleCallbacks(payIn, ['SUCCESS']);
    }
  }

  /** Holds the request until hangMs passes, the client disconnects, or the sandbox closes. */
  function hang(reply: FastifyReply): Promise<'elapsed' | 'disconnected' | 'shutdown'> {
    return new Promise((resolve) => {
      let settled = false;
      const finish = (why: 'elapsed' | 'disconnected' | 'shutdown') => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reply.raw.off('close', onClose);
        unregister();
        resolve(why);
      };
      const onClose = () => finish('disconnected');
      const timer = setTimeout(() => finish('elapsed'), opts.hangMs);
      timer.unref();
      reply.raw.on('close', onClose);
      const unregister = state.onShutdown(() => finish('shutdown'));
    });
  }

  app.post('/api/agent/bills/v3', async (request: FastifyRequest, reply: FastifyReply) => {
    if (guard(ctx, request, reply, 'agent')) return reply;
    if (header(request, 'operation')?.trim() !== '2') {
      return reply.code(400).send({ success: false, message: 'Invalid operation provide' });
    }
    const raw = request.body;
    const body = isPlainObject(raw) ? raw : {};
    if (ctx.malformed.has(request)) return sendRejection(reply, body, 'Malformed JSON body');
    if (!isPlainObject(raw)) return sendRejection(reply, body, 'Body must be a JSON object');
    const service = header(request, 'service')?.trim();
    if (!service || !/^\d+$/.test(service)) return sendRejection(reply, body, 'Invalid service header');
    const otp = header(request, 'otp')?.trim();
    if (otp !== undefined && !/^\d+$/.test(otp)) return sendRejection(reply, body, 'Invalid otp header');
    const problem = payInBodyProblem(body);
    if (problem) return sendRejection(reply, body, problem);
    const orderId = body.order_id as string;
    if (state.payIns.has(orderId)) return sendRejection(reply, body, 'Duplicate order_id');

    const wallet = body.wallet as string;
    const behaviour = testWalletBehaviour(wallet);
    if (behaviour === 'insufficient_funds') return sendRejection(reply, body, 'Insufficient funds');
    if (behaviour === 'server_error') {
      return reply.code(500).type('text/html').send('<html>Internal Server Error</html>');
    }

    const reference = newProviderReference();
    const payIn: PayIn = {
      reference,
      order_id: orderId,
      wallet,
      amount: body.amount as number,
      currency: body.currency as string,
      description: body.description as string,
      payer: body.payer as string,
      payerEmail: body.payerEmail as string,
      successUrl: body.successUrl as string,
      failureUrl: body.failureUrl as string,
      service,
      ...(otp !== undefined ? { otp } : {}),
      status: 'PROCESSING',
      transaction_reference: null,
      created_at: new Date().toISOString(),
    };
    state.payIns.set(orderId, payIn);
    state.counters.payInsAccepted++;
    log('pay-in accepted', { reference, order_id: orderId, wallet, behaviour });

    if (behaviour === 'lost_answer') {
      payIn.status = 'SUCCESS';
      payIn.transaction_reference = `TR${randomDigits(12)}`;
      return reply.code(502).type('text/html').send('<html>Bad Gateway</html>');
    }

    if (behaviour === 'timeout') {
      const why = await hang(reply);
      if (why !== 'shutdown') scheduleOutcome(payIn, 'success');
      if (why !== 'elapsed') {
        reply.hijack();
        request.raw.socket?.destroy();
        return reply;
      }
      return reply.code(504).type('text/html').send('<html>Gateway Timeout</html>');
    }

    scheduleOutcome(payIn, behaviour);
    return reply.code(200).send({
      success: true,
      code: 200,
      status: 'PROCESSING',
      created_at: providerDateTime(),
      data: envelopeData(reference, body),
      message: 'Transaction is processing',
    });
  });
}
