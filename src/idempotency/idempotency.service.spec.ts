import { randomBytes, randomUUID } from 'node:crypto';
import { ConfigService } from '@nestjs/config';
import { IdempotencyInProgressError, IdempotencyKeyReusedError } from './idempotency.errors';
import type {
  IdempotencyRecord,
  IdempotencyRepository,
  IdempotentResource,
  InsertOutcome,
  NewIdempotencyRecord,
} from './idempotency.repository';
import { IdempotencyService } from './idempotency.service';
import { legacyRequestHash } from './request-fingerprint';
import { fingerprint, topUp } from './request-fingerprint.spec-support';

/**
 * The state machine of a key, against an in-memory repository with the same guards as the SQL
 * (a record's id changes when it is claimed; a lapsed lease is judged by one clock).
 */
describe('IdempotencyService: the life of a key', () => {
  const LEASE_MS = 1_000;

  class MemoryRepository {
    now = 0;
    rows = new Map<string, Omit<IdempotencyRecord, 'leaseLapsed'> & { leaseUntil: number | null }>();
    claims = 0;

    private view(row: Omit<IdempotencyRecord, 'leaseLapsed'> & { leaseUntil: number | null }): IdempotencyRecord {
      const { leaseUntil, ...record } = row;
      return { ...record, leaseLapsed: record.state === 'in_progress' && leaseUntil !== null && leaseUntil <= this.now };
    }
    private slot(userId: string, scope: string, key: string) {
      return `${userId}|${scope}|${key}`;
    }
    async insertOrGet(input: NewIdempotencyRecord): Promise<InsertOutcome> {
      const slot = this.slot(input.userId, input.scope, input.key);
      if (this.rows.has(slot)) return { created: false, record: this.view(this.rows.get(slot)!) };
      const row = {
        id: randomUUID(),
        userId: input.userId,
        scope: input.scope,
        key: input.key,
        requestHash: input.requestHash,
        state: 'in_progress' as const,
        responseStatus: null,
        responseBody: null,
        expiresAt: new Date(8.64e15),
        leaseUntil: this.now + input.leaseMs,
        resourceType: null,
        resourceId: null,
      };
      this.rows.set(slot, row);
      return { created: true, record: this.view(row) };
    }
    async find(userId: string, scope: string, key: string) {
      const row = this.rows.get(this.slot(userId, scope, key));
      return row && this.view(row);
    }
    private byId(id: string) {
      return [...this.rows.values()].find((row) => row.id === id);
    }
    async claimLapsed(record: Pick<IdempotencyRecord, 'id' | 'resourceId'>, leaseMs: number) {
      const row = this.byId(record.id);
      if (
        !row ||
        row.state !== 'in_progress' ||
        row.leaseUntil === null ||
        row.leaseUntil > this.now ||
        row.resourceId !== record.resourceId
      )
        return undefined;
      this.claims++;
      Object.assign(row, { id: randomUUID(), leaseUntil: this.now + leaseMs, resourceType: null, resourceId: null });
      return this.view(row);
    }
    async renewLease(record: Pick<IdempotencyRecord, 'id'>, leaseMs: number) {
      const row = this.byId(record.id);
      if (!row || row.state !== 'in_progress') return false;
      row.leaseUntil = this.now + leaseMs;
      return true;
    }
    async complete(record: Pick<IdempotencyRecord, 'id'>, status: number, body: unknown) {
      const row = this.byId(record.id);
      if (!row || row.state !== 'in_progress') return false;
      Object.assign(row, { state: 'completed', responseStatus: status, responseBody: body, leaseUntil: null });
      return true;
    }
    async release(record: Pick<IdempotencyRecord, 'id'>) {
      for (const [slot, row] of this.rows) if (row.id === record.id && row.state === 'in_progress') this.rows.delete(slot);
    }
    /** What linkIdempotentResource does inside the creating transaction. */
    link(recordId: string, resource: IdempotentResource) {
      const row = this.byId(recordId);
      if (!row || row.state !== 'in_progress') throw new IdempotencyInProgressError();
      Object.assign(row, { resourceType: resource.type, resourceId: resource.id });
    }
  }

  const setup = (waitMs = 50) => {
    const repository = new MemoryRepository();
    const service = new IdempotencyService(repository as unknown as IdempotencyRepository, { waitMs, pollMs: 5, leaseMs: LEASE_MS });
    const orders = new Map<string, { id: string; status: string }>();
    service.registerRecovery({ type: 'order', scopes: ['orders.create'], answer: async (id) => orders.get(id) });
    return { repository, service, orders };
  };
  const alice = { id: 'alice', roles: ['customer'] } as never;
  const order = (body: unknown) => ({ ...fingerprint(body, 'orders.create'), route: '/v1/orders' });

  it('a record stored with a legacy plain hash still replays its request, and refuses another', async () => {
    const { repository, service } = setup();
    await repository.insertOrGet({
      userId: 'alice',
      scope: 'orders.create',
      key: 'old',
      requestHash: legacyRequestHash(order({ amount: 1 })),
      ttlSeconds: 60,
      leaseMs: LEASE_MS,
    });
    const [row] = repository.rows.values();
    Object.assign(row, { state: 'completed', responseStatus: 201, responseBody: { id: 'o0' }, leaseUntil: null });
    expect(await service.begin('alice', order({ amount: 1 }), 'old')).toEqual({ kind: 'replay', status: 201, body: { id: 'o0' } });
    await expect(service.begin('alice', order({ amount: 2 }), 'old')).rejects.toThrow(IdempotencyKeyReusedError);
  });

  it('after DATA_ENCRYPTION_KEY is rotated, a record fingerprinted under the previous key still replays its request, and refuses another', async () => {
    const configOf = (dataEncryptionKey: Buffer, dataEncryptionPreviousKeys: Buffer[] = []) =>
      new ConfigService({ provider: { timeoutMs: 2_000 }, dataEncryptionKey, dataEncryptionPreviousKeys }) as never;
    const serviceWith = (repository: MemoryRepository, config: never) =>
      new IdempotencyService(repository as unknown as IdempotencyRepository, { waitMs: 50, pollMs: 5, leaseMs: LEASE_MS }, config);
    const oldKey = randomBytes(32);
    const repository = new MemoryRepository();
    const before = serviceWith(repository, configOf(oldKey));
    const started = await before.begin('alice', order({ amount: 1 }), 'rotated');
    expect(started.kind).toBe('new');
    await repository.complete((started as { record: IdempotencyRecord }).record, 201, { id: 'o1' });

    const rotated = serviceWith(repository, configOf(randomBytes(32), [oldKey]));
    expect(await rotated.begin('alice', order({ amount: 1 }), 'rotated')).toEqual({ kind: 'replay', status: 201, body: { id: 'o1' } });
    await expect(rotated.begin('alice', order({ amount: 2 }), 'rotated')).rejects.toThrow(IdempotencyKeyReusedError);
    // Without the previous key, the fingerprint made under it no longer matches.
    const dropped = serviceWith(repository, configOf(randomBytes(32)));
    await expect(dropped.begin('alice', order({ amount: 1 }), 'rotated')).rejects.toThrow(IdempotencyKeyReusedError);
  });

  it('stores a keyed fingerprint for a new request', async () => {
    const { repository, service } = setup();
    await service.begin('alice', order({ amount: 1 }), 'k');
    const [row] = repository.rows.values();
    expect(row.requestHash).toMatch(/^hmac1:[0-9a-f]{64}$/);
    expect(row.requestHash).not.toContain(legacyRequestHash(order({ amount: 1 })));
  });

  it('new: the first request with a key runs', async () => {
    const { service } = setup();
    const started = await service.begin('alice', order({ amount: 1 }), 'k');
    expect(started.kind).toBe('new');
  });

  it('replay: a retry of a completed request gets its stored answer', async () => {
    const { service } = setup();
    const started = await service.begin('alice', order({ amount: 1 }), 'k');
    if (started.kind !== 'new') throw new Error(started.kind);
    await service.complete(started.record, 201, { id: 'o1' });
    expect(await service.begin('alice', order({ amount: 1 }), 'k')).toEqual({ kind: 'replay', status: 201, body: { id: 'o1' } });
  });

  it('in progress: a retry while the first request holds its lease gets 409 after the wait', async () => {
    const { service } = setup();
    await service.begin('alice', order({ amount: 1 }), 'k');
    await expect(service.begin('alice', order({ amount: 1 }), 'k')).rejects.toThrow(IdempotencyInProgressError);
  });

  it('reused: the same key on another request is refused, running or not, lapsed or not', async () => {
    const { service, repository } = setup();
    await service.begin('alice', topUp('card-a', { amount: '100' }), 'k');
    await expect(service.begin('alice', topUp('card-b', { amount: '100' }), 'k')).rejects.toThrow(IdempotencyKeyReusedError);
    repository.now += LEASE_MS;
    await expect(service.begin('alice', topUp('card-b', { amount: '100' }), 'k')).rejects.toThrow(IdempotencyKeyReusedError);
  });

  it('lapsed with a resource: the retry answers that resource as it is now, never runs anew', async () => {
    const { service, repository, orders } = setup();
    const started = await service.begin('alice', order({ amount: 1 }), 'k');
    if (started.kind !== 'new') throw new Error(started.kind);
    orders.set('o1', { id: 'o1', status: 'PENDING' });
    repository.link(started.record.id, { type: 'order', id: 'o1' });
    // Still held: the retry waits, then 409.
    await expect(service.begin('alice', order({ amount: 1 }), 'k')).rejects.toThrow(IdempotencyInProgressError);
    // The process died: no renewal, the lease lapses; the sweep made the order UNKNOWN meanwhile.
    repository.now += LEASE_MS;
    orders.set('o1', { id: 'o1', status: 'UNKNOWN' });
    const retry = await service.begin('alice', order({ amount: 1 }), 'k');
    expect(retry).toMatchObject({ kind: 'recover', resource: { type: 'order', id: 'o1' } });
    if (retry.kind !== 'recover') throw new Error(retry.kind);
    expect(await service.recover(retry.resource, alice)).toEqual({ id: 'o1', status: 'UNKNOWN' });
    expect(repository.claims).toBe(0);
  });

  it('lapsed without a resource: exactly one of two retries claims the record and runs anew; the dead request cannot link any more', async () => {
    const { service, repository } = setup(30);
    const first = await service.begin('alice', order({ amount: 1 }), 'k');
    if (first.kind !== 'new') throw new Error(first.kind);
    repository.now += LEASE_MS;
    const retries = await Promise.allSettled([
      service.begin('alice', order({ amount: 1 }), 'k'),
      service.begin('alice', order({ amount: 1 }), 'k'),
    ]);
    const ran = retries.filter((r) => r.status === 'fulfilled' && r.value.kind === 'new');
    const refused = retries.filter((r) => r.status === 'rejected' && r.reason instanceof IdempotencyInProgressError);
    expect([ran.length, refused.length]).toEqual([1, 1]);
    expect(repository.claims).toBe(1);
    const claimed = (ran[0] as PromiseFulfilledResult<{ kind: 'new'; record: IdempotencyRecord }>).value.record;
    expect(claimed.id).not.toBe(first.record.id);
    expect(() => repository.link(first.record.id, { type: 'order', id: 'late' })).toThrow(IdempotencyInProgressError);
    expect(await service.complete(first.record, 201, {})).toBe(false);
  });

  it('renewal keeps a live request from being presumed dead', async () => {
    const { service, repository } = setup();
    const started = await service.begin('alice', order({ amount: 1 }), 'k');
    if (started.kind !== 'new') throw new Error(started.kind);
    repository.now += LEASE_MS / 2;
    expect(await service.renewLease(started.record)).toBe(true);
    repository.now += LEASE_MS / 2;
    await expect(service.begin('alice', order({ amount: 1 }), 'k')).rejects.toThrow(IdempotencyInProgressError);
  });

  it('lapsed on a route that does not link what it creates: stays in progress (what it did is unknown)', async () => {
    const { service, repository } = setup();
    await service.begin('alice', fingerprint({ a: 1 }, 'card-users.create'), 'k');
    repository.now += LEASE_MS;
    await expect(service.begin('alice', fingerprint({ a: 1 }, 'card-users.create'), 'k')).rejects.toThrow(IdempotencyInProgressError);
    expect(repository.claims).toBe(0);
  });

  it('exposes the record held by the request in flight to the code it runs, and nothing outside', async () => {
    const { service } = setup();
    const started = await service.begin('alice', order({ amount: 1 }), 'k');
    if (started.kind !== 'new') throw new Error(started.kind);
    expect(service.recoveryPoint()).toBeUndefined();
    const inFlight = { claim: service.claimOf(started.record), status: 201, answerInline: true, answerStored: false };
    const seen = await service.runHolding(inFlight, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      const inline = service.inlineAnswer();
      service.answerStoredInline();
      return { id: service.recoveryPoint(), claim: service.pendingClaim(), inline };
    });
    expect(seen).toEqual({
      id: started.record.id,
      claim: expect.objectContaining({ id: started.record.id, userId: 'alice', key: 'k', requestHash: started.record.requestHash }),
      inline: { recordId: started.record.id, status: 201 },
    });
    expect(inFlight.answerStored).toBe(true);
    expect(service.pendingClaim()).toBeUndefined();
  });

  it('released: a request that did not execute frees its key; the next one with any body runs anew', async () => {
    const { service } = setup();
    const started = await service.begin('alice', order({ amount: 1 }), 'k');
    if (started.kind !== 'new') throw new Error(started.kind);
    await service.abandon(started.record);
    const next = await service.begin('alice', order({ amount: 2 }), 'k');
    expect(next.kind).toBe('new');
    expect(await service.complete(started.record, 201, {})).toBe(false);
  });

  it('a retry waiting on the holder gets its answer once stored, or the key once released', async () => {
    const { service } = setup(1_000);
    const first = await service.begin('alice', order({ amount: 1 }), 'k');
    if (first.kind !== 'new') throw new Error(first.kind);
    const waiting = service.begin('alice', order({ amount: 1 }), 'k');
    await new Promise((resolve) => setTimeout(resolve, 20));
    await service.complete(first.record, 201, { id: 'o1' });
    await expect(waiting).resolves.toEqual({ kind: 'replay', status: 201, body: { id: 'o1' } });

    const second = await service.begin('alice', order({ amount: 1 }), 'other');
    if (second.kind !== 'new') throw new Error(second.kind);
    const retry = service.begin('alice', order({ amount: 1 }), 'other');
    await new Promise((resolve) => setTimeout(resolve, 20));
    await service.abandon(second.record);
    const claimed = await retry;
    expect(claimed.kind).toBe('new');
    if (claimed.kind === 'new') expect(claimed.record.id).not.toBe(second.record.id);
  });

  it('reused: another request on a completed key is refused, never given the stored answer', async () => {
    const { service } = setup();
    const started = await service.begin('alice', order({ amount: 1 }), 'k');
    if (started.kind !== 'new') throw new Error(started.kind);
    await service.complete(started.record, 201, { id: 'o1' });
    await expect(service.begin('alice', order({ amount: 2 }), 'k')).rejects.toThrow(IdempotencyKeyReusedError);
  });

  it('keys are per user: the same key and body of another user is another request', async () => {
    const { service } = setup();
    await service.begin('alice', order({ amount: 1 }), 'k');
    await expect(service.begin('bob', order({ amount: 1 }), 'k')).resolves.toMatchObject({ kind: 'new' });
  });

  it('a resource that vanished (never sent): one retry claims the record and runs anew; the dead request can no longer renew', async () => {
    const { service, repository } = setup();
    const first = await service.begin('alice', order({ amount: 1 }), 'k');
    if (first.kind !== 'new') throw new Error(first.kind);
    repository.link(first.record.id, { type: 'order', id: 'gone' });
    repository.now += LEASE_MS;
    const retry = await service.begin('alice', order({ amount: 1 }), 'k');
    if (retry.kind !== 'recover') throw new Error(retry.kind);
    expect(await service.recover(retry.resource, alice)).toBeUndefined();
    const claimed = await service.claimAfterVanishedResource(retry.record);
    expect(claimed?.resourceId).toBeNull();
    expect(await service.claimAfterVanishedResource(retry.record)).toBeUndefined();
    expect(await service.renewLease(first.record)).toBe(false);
    await expect(service.recover({ type: 'unregistered', id: 'x' }, alice)).rejects.toThrow(/no recovery is registered/);
  });

  it('defaults the lease to the provider timeout plus a margin', () => {
    const service = new IdempotencyService({} as IdempotencyRepository, {}, new ConfigService({ provider: { timeoutMs: 2_000 } }) as never);
    expect(service.leaseMs).toBe(7_000);
  });
});
