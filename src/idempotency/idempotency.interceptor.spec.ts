import 'reflect-metadata';
import { HttpCode, type CallHandler, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import pino from 'pino';
import { lastValueFrom, of, throwError } from 'rxjs';
import { ValidationFailedError } from '../common/domain-error';
import { ProviderTimeoutError, ProviderUnreachableError } from '../provider/provider.errors';
import { IdempotencyInProgressError, ReplayedProblemError } from './idempotency.errors';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import type { IdempotencyClaim, IdempotencyRecord, IdempotentResource } from './idempotency.repository';
import type { BeginResult, IdempotencyService, InFlightRequest } from './idempotency.service';
import type { RequestFingerprint } from './request-fingerprint';
import { Idempotent } from './idempotent.decorator';

/** How a request ends decides what becomes of its key: stored answer, stored problem, or released. */

class ProbeController {
  @Idempotent('probe.create', {
    releaseOn: (error) => error instanceof ProviderUnreachableError,
    storeBody: (body) => ({ ...(body as object), secret: undefined, stored: true }),
  })
  @HttpCode(202)
  create() {}

  @Idempotent('probe.pay', { claimInResourceStatement: true })
  @HttpCode(201)
  pay() {}
}

const record = (id = 'record-1'): IdempotencyRecord => ({
  id,
  userId: 'alice',
  scope: 'probe.create',
  key: 'k',
  requestHash: 'h',
  state: 'in_progress',
  responseStatus: null,
  responseBody: null,
  expiresAt: new Date(8.64e15),
  leaseLapsed: false,
  resourceType: null,
  resourceId: null,
});

/** The service's side of a key, scripted: what begin answers, and every decision taken on the record. */
class ScriptedIdempotency {
  readonly leaseMs = 60_000;
  started: BeginResult = { kind: 'new', record: record() };
  recovered: unknown = undefined;
  claimedAfterVanish: IdempotencyRecord | undefined = record('record-2');
  releaseFails = false;
  readonly fingerprints: RequestFingerprint[] = [];
  readonly completed: Array<{ id: string; status: number; body: unknown }> = [];
  readonly released: string[] = [];
  held: string | undefined;
  /** The requests the handler ran as, in order. */
  readonly ranAs: InFlightRequest[] = [];
  begun = 0;

  async begin(_userId: string, request: RequestFingerprint) {
    this.begun++;
    this.fingerprints.push(request);
    return this.started;
  }
  newClaim(userId: string, request: RequestFingerprint, key: string): IdempotencyClaim {
    this.fingerprints.push(request);
    return { id: 'claim-1', userId, scope: request.scope, key, requestHash: 'h', ttlSeconds: 86_400, leaseMs: this.leaseMs };
  }
  claimOf(held: IdempotencyRecord): IdempotencyClaim {
    return {
      id: held.id,
      userId: held.userId,
      scope: held.scope,
      key: held.key,
      requestHash: held.requestHash,
      ttlSeconds: 86_400,
      leaseMs: this.leaseMs,
    };
  }
  async recover(_resource: IdempotentResource) {
    return this.recovered;
  }
  async claimAfterVanishedResource() {
    return this.claimedAfterVanish;
  }
  runHolding<T>(request: InFlightRequest, work: () => Promise<T>) {
    this.held = request.claim.id;
    this.ranAs.push(request);
    return work();
  }
  async renewLease() {
    return true;
  }
  async complete(held: { id: string }, status: number, body: unknown) {
    this.completed.push({ id: held.id, status, body });
    return true;
  }
  async abandon(held: { id: string }) {
    if (this.releaseFails) throw new Error('database gone');
    this.released.push(held.id);
  }
}

function setup(handler: 'create' | 'pay' = 'create') {
  const idempotency = new ScriptedIdempotency();
  const interceptor = new IdempotencyInterceptor(idempotency as unknown as IdempotencyService, new Reflector(), pino({ level: 'silent' }));
  const reply = { statusCode: 200, headers: {} } as {
    statusCode: number;
    headers: Record<string, string>;
    status(code: number): typeof reply;
    header(name: string, value: string): typeof reply;
    removeHeader(name: string): typeof reply;
  };
  reply.status = (code) => Object.assign(reply, { statusCode: code });
  reply.header = (name, value) => Object.assign(reply, { headers: { ...reply.headers, [name.toLowerCase()]: value } });
  reply.removeHeader = (name) => {
    delete reply.headers[name.toLowerCase()];
    return reply;
  };
  const request = {
    id: 'req-1',
    method: 'POST',
    url: '/probe/c1?x=1',
    routeOptions: { url: '/probe/:id' },
    params: { id: 'c1' },
    body: { amount: '10' },
    headers: { 'idempotency-key': 'k' } as Record<string, string>,
    user: { id: 'alice', roles: ['customer'] },
  };
  const context = {
    getHandler: () => ProbeController.prototype[handler],
    getClass: () => ProbeController,
    switchToHttp: () => ({ getRequest: () => request, getResponse: () => reply }),
  } as unknown as ExecutionContext;
  let handled = 0;
  const run = async (outcome: { answer: unknown } | { error: unknown }, ...later: ({ answer: unknown } | { error: unknown })[]) => {
    const outcomes = [outcome, ...later];
    const next: CallHandler = {
      handle: () => {
        const current = outcomes[Math.min(handled, outcomes.length - 1)];
        handled++;
        return 'error' in current ? throwError(() => current.error) : of(current.answer);
      },
    };
    return lastValueFrom(await interceptor.intercept(context, next), { defaultValue: undefined });
  };
  return { idempotency, reply, request, run, handled: () => handled, interceptor, context };
}

describe('IdempotencyInterceptor: what a request leaves on its key', () => {
  it('completed: the handler runs holding the record; what storeBody keeps is stored with the route status', async () => {
    const { idempotency, run, handled } = setup();
    await expect(run({ answer: { id: 'o1', secret: 's' } })).resolves.toEqual({ id: 'o1', secret: 's' });
    expect(handled()).toBe(1);
    expect(idempotency.held).toBe('record-1');
    expect(idempotency.completed).toEqual([{ id: 'record-1', status: 202, body: { id: 'o1', secret: undefined, stored: true } }]);
    expect(idempotency.released).toEqual([]);
    expect(idempotency.fingerprints).toEqual([
      { scope: 'probe.create', method: 'POST', route: '/probe/:id', params: { id: 'c1' }, body: { amount: '10' } },
    ]);
  });

  it('released after a validation failure or an error the route declares harmless: nothing stored', async () => {
    for (const error of [new ValidationFailedError([{ field: 'amount', message: 'bad' }]), new ProviderUnreachableError('unreachable')]) {
      const { idempotency, run } = setup();
      await expect(run({ error })).rejects.toBe(error);
      expect(idempotency.released).toEqual(['record-1']);
      expect(idempotency.completed).toEqual([]);
    }
  });

  it('any other failure may have moved money: its problem is stored as the answer every retry gets', async () => {
    const { idempotency, run } = setup();
    const error = new ProviderTimeoutError('The payment provider did not answer in time.');
    await expect(run({ error })).rejects.toBe(error);
    expect(idempotency.released).toEqual([]);
    expect(idempotency.completed).toEqual([
      { id: 'record-1', status: 504, body: expect.objectContaining({ status: 504, code: 'provider_timeout', requestId: 'req-1' }) },
    ]);
  });

  it('a key that cannot be released stays taken; the client still gets its own error', async () => {
    const { idempotency, run } = setup();
    idempotency.releaseFails = true;
    const error = new ValidationFailedError([{ field: 'amount', message: 'bad' }]);
    await expect(run({ error })).rejects.toBe(error);
    expect(idempotency.completed).toEqual([]);
  });

  it('replay: the stored answer with Idempotent-Replayed, the handler not run; a stored problem is thrown again', async () => {
    const { idempotency, reply, run, handled } = setup();
    idempotency.started = { kind: 'replay', status: 201, body: { id: 'o1' } };
    await expect(run({ answer: 'fresh' })).resolves.toEqual({ id: 'o1' });
    expect(reply).toMatchObject({ statusCode: 201, headers: { 'idempotent-replayed': 'true' } });
    idempotency.started = { kind: 'replay', status: 422, body: { type: 't', title: 'x', status: 422, code: 'provider_rejected' } };
    await expect(run({ answer: 'fresh' })).rejects.toBeInstanceOf(ReplayedProblemError);
    expect(handled()).toBe(0);
  });

  it('recover: the resource of a dead request as it is now, with the route status; the handler not run', async () => {
    const { idempotency, reply, run, handled } = setup();
    idempotency.started = { kind: 'recover', record: record(), resource: { type: 'order', id: 'o1' } };
    idempotency.recovered = { id: 'o1', status: 'UNKNOWN' };
    await expect(run({ answer: 'fresh' })).resolves.toEqual({ id: 'o1', status: 'UNKNOWN' });
    expect(reply).toMatchObject({ statusCode: 202, headers: { 'idempotent-replayed': 'true' } });
    expect(handled()).toBe(0);
    expect(idempotency.completed).toEqual([]);
  });

  it('recover of a resource that vanished: the retry claims the record and runs anew, or is told to wait', async () => {
    const { idempotency, reply, run, handled } = setup();
    idempotency.started = { kind: 'recover', record: record(), resource: { type: 'order', id: 'gone' } };
    await expect(run({ answer: { id: 'o2' } })).resolves.toEqual({ id: 'o2' });
    expect(handled()).toBe(1);
    expect(reply.headers).not.toHaveProperty('idempotent-replayed');
    expect(idempotency.completed).toEqual([{ id: 'record-2', status: 202, body: { id: 'o2', stored: true } }]);

    idempotency.claimedAfterVanish = undefined;
    await expect(run({ answer: { id: 'o3' } })).rejects.toBeInstanceOf(IdempotencyInProgressError);
    expect(handled()).toBe(1);
  });

  describe('a route whose resource statement claims the key (claimInResourceStatement)', () => {
    it('runs the handler at once under a new claim, without a claim statement of its own, and stores its answer', async () => {
      const { idempotency, run, handled } = setup('pay');
      await expect(run({ answer: { id: 'o1' } })).resolves.toEqual({ id: 'o1' });
      expect(idempotency.begun).toBe(0);
      expect(handled()).toBe(1);
      expect(idempotency.ranAs.map((r) => [r.claim.id, r.status, r.answerInline])).toEqual([['claim-1', 201, true]]);
      expect(idempotency.completed).toEqual([{ id: 'claim-1', status: 201, body: { id: 'o1' } }]);
    });

    it('stores nothing more when the handler stored its answer with its last write', async () => {
      const { idempotency, interceptor, context } = setup('pay');
      const next: CallHandler = {
        handle: () => {
          idempotency.ranAs[0].answerStored = true;
          return of({ id: 'o1' });
        },
      };
      await expect(lastValueFrom(await interceptor.intercept(context, next))).resolves.toEqual({ id: 'o1' });
      expect(idempotency.completed).toEqual([]);
    });

    it('when the statement finds the key held by another request, answers as any idempotent route: here the replay', async () => {
      const { idempotency, reply, run, handled } = setup('pay');
      idempotency.started = { kind: 'replay', status: 201, body: { id: 'first' } };
      await expect(run({ error: new IdempotencyInProgressError() })).resolves.toEqual({ id: 'first' });
      expect(handled()).toBe(1);
      expect(idempotency.begun).toBe(1);
      expect(reply.headers['idempotent-replayed']).toBe('true');
      expect(idempotency.completed).toEqual([]);
      expect(idempotency.released).toEqual([]);
    });

    it('when the holder vanished meanwhile, runs the handler again holding the claimed record', async () => {
      const { idempotency, run, handled } = setup('pay');
      await expect(run({ error: new IdempotencyInProgressError() }, { answer: { id: 'o2' } })).resolves.toEqual({ id: 'o2' });
      expect(handled()).toBe(2);
      expect(idempotency.ranAs.map((r) => r.claim.id)).toEqual(['claim-1', 'record-1']);
      expect(idempotency.completed).toEqual([{ id: 'record-1', status: 201, body: { id: 'o2' } }]);
    });

    it('a validation failure before the statement leaves the key as it was: nothing stored, nothing to keep', async () => {
      const { idempotency, run } = setup('pay');
      const error = new ValidationFailedError([{ field: 'amount', message: 'bad' }]);
      await expect(run({ error })).rejects.toBe(error);
      expect(idempotency.completed).toEqual([]);
      expect(idempotency.begun).toBe(0);
    });
  });
});
