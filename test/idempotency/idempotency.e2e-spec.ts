import { createHash, createHmac, randomUUID } from 'node:crypto';
import request from 'supertest';
import { IdempotencyModule } from '../../src/idempotency/idempotency.module';
import { IdempotencyRepository } from '../../src/idempotency/idempotency.repository';
import { canonicalJson, fingerprintKey } from '../../src/idempotency/request-fingerprint';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { IdempotencyProbeModule, runsOf } from './idempotency-probe.module';

const PROBLEM_JSON = /^application\/problem\+json/;

describe('idempotent POSTs', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  /** A second instance on the same database. */
  let other: TestService;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox, {}, [IdempotencyModule, IdempotencyProbeModule]);
    other = await startTestService(sandbox, {}, [IdempotencyModule, IdempotencyProbeModule]);
    alice = await service.bearer('alice');
    bob = await service.bearer('bob');
  });
  afterAll(async () => {
    await other?.close();
    await service?.close();
    await sandbox?.close();
  });

  const post = (path: string, options: { token?: string; key?: string; body?: unknown; on?: TestService }) => {
    let req = request((options.on ?? service).server)
      .post(`/idempotency-probe/${path}`)
      .set('authorization', `Bearer ${options.token ?? alice}`);
    if (options.key !== undefined) req = req.set('idempotency-key', options.key);
    return typeof options.body === 'string'
      ? req.set('content-type', 'application/json').send(options.body)
      : req.send(options.body as object);
  };
  const fresh = () => ({ key: randomUUID(), ref: randomUUID() });
  const recordsOf = (key: string) => service.prisma.idempotencyRecord.findMany({ where: { key } });
  const withoutRequestId = ({ requestId: _requestId, ...rest }: Record<string, unknown>) => rest;

  describe('replays', () => {
    it('answers a retry with the first status and body, without running the handler again', async () => {
      const { key, ref } = fresh();
      const first = await post('charge', { key, body: { ref, amount: 1500 } }).expect(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const retry = await post('charge', { key, body: { ref, amount: 1500 } }).expect(201);
      expect(retry.body).toEqual(first.body);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.headers['content-type']).toMatch(/^application\/json/);
      expect(runsOf(ref)).toBe(1);
      const [record] = await recordsOf(key);
      expect(record).toMatchObject({ userId: 'alice', scope: 'probe.charge', state: 'completed', responseStatus: 201 });
      expect(retry.text).toBe(first.text);
      const ttlMs = record.expiresAt.getTime() - record.createdAt.getTime();
      expect(ttlMs).toBe(24 * 60 * 60 * 1000);
    });

    it('treats bodies differing only in member order, at any depth, as the same', async () => {
      const { key, ref } = fresh();
      const first = await post('charge', { key, body: `{"ref":"${ref}","amount":7,"meta":{"b":1,"a":{"y":[1,2],"x":null}}}` }).expect(201);
      const retry = await post('charge', { key, body: `{"meta":{"a":{"x":null,"y":[1,2]},"b":1},"amount":7,"ref":"${ref}"}` }).expect(201);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.body).toEqual(first.body);
      expect(runsOf(ref)).toBe(1);
    });

    it('keeps the status set by @HttpCode', async () => {
      const { key, ref } = fresh();
      const first = await post('confirm', { key, body: { ref, amount: 3 } }).expect(200);
      const retry = await post('confirm', { key, body: { ref, amount: 3 } }).expect(200);
      expect(retry.body).toEqual(first.body);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect((await recordsOf(key))[0].responseStatus).toBe(200);
    });

    it('stores only what storeBody keeps: a replay carries no secret and says so', async () => {
      const { key, ref } = fresh();
      const first = await post('card', { key, body: { ref, amount: 1 } }).expect(201);
      expect(first.body).toEqual({ cardId: expect.any(String), cvv: '101' });
      const retry = await post('card', { key, body: { ref, amount: 1 } }).expect(201);
      expect(retry.body).toEqual({ cardId: first.body.cardId, note: 'The CVV is shown only in the first answer.' });
      // The stored answer, not the whole record: a random hash may contain any digits, and so may
      // the card's random id (one CI run's held "…dcc3610157e5"): the CVV is looked for as the JSON
      // string it would be stored as.
      const stored = String((await recordsOf(key))[0].responseBody);
      expect(stored).not.toContain('cvv');
      expect(stored).not.toContain('"101"');
      expect(JSON.parse(stored)).toEqual({ cardId: first.body.cardId, note: 'The CVV is shown only in the first answer.' });
      expect(runsOf(ref)).toBe(1);
    });
  });

  describe('stored fingerprints', () => {
    const canonicalCharge = (body: unknown) => canonicalJson(['probe.charge', 'POST', '/idempotency-probe/charge', {}, body]);

    it('cannot be recomputed from the request alone: an HMAC under a key derived from DATA_ENCRYPTION_KEY', async () => {
      const { key, ref } = fresh();
      const body = { ref, amount: 1500 };
      await post('charge', { key, body }).expect(201);
      const [record] = await recordsOf(key);
      const canonical = canonicalCharge(body);
      expect(record.requestHash).not.toContain(createHash('sha256').update(canonical).digest('hex'));
      const keyed = createHmac('sha256', fingerprintKey(service.config.dataEncryptionKey)).update(canonical).digest('hex');
      expect(record.requestHash).toBe(`hmac1:${keyed}`);
    });

    it('a record stored before the upgrade (a plain SHA-256) still replays its retry, and refuses another body', async () => {
      const { key, ref } = fresh();
      const body = { ref, amount: 1500 };
      const answer = { chargeId: randomUUID(), run: 1 };
      await service.prisma.idempotencyRecord.create({
        data: {
          userId: 'alice',
          scope: 'probe.charge',
          key,
          requestHash: createHash('sha256').update(canonicalCharge(body)).digest('hex'),
          state: 'completed',
          responseStatus: 201,
          responseBody: JSON.stringify(answer),
          completedAt: new Date(),
          expiresAt: new Date(Date.now() + 60_000),
        },
      });
      const retry = await post('charge', { key, body, on: other }).expect(201);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.body).toEqual(answer);
      const changed = await post('charge', { key, body: { ref, amount: 1501 } }).expect(422);
      expect(changed.body.code).toBe('idempotency_key_reused');
      expect(runsOf(ref)).toBe(0);
    });
  });

  describe('refusals', () => {
    it('refuses the same key with another body (422 idempotency_key_reused), without running the handler', async () => {
      const { key, ref } = fresh();
      await post('charge', { key, body: { ref, amount: 1500 } }).expect(201);
      const res = await post('charge', { key, body: { ref, amount: 1501 } }).expect(422);
      expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(res.body).toMatchObject({ status: 422, code: 'idempotency_key_reused', requestId: expect.any(String) });
      expect(runsOf(ref)).toBe(1);
    });

    it('counts array order as a difference', async () => {
      const { key, ref } = fresh();
      await post('charge', { key, body: { ref, amount: 1, tags: ['a', 'b'] } }).expect(201);
      const res = await post('charge', { key, body: { ref, amount: 1, tags: ['b', 'a'] } }).expect(422);
      expect(res.body.code).toBe('idempotency_key_reused');
    });

    it('requires the header (400 idempotency_key_required)', async () => {
      const { ref } = fresh();
      const res = await post('charge', { body: { ref, amount: 1 } }).expect(400);
      expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(res.body).toMatchObject({ status: 400, code: 'idempotency_key_required' });
      expect(runsOf(ref)).toBe(0);
    });

    it.each([
      ['empty', ''],
      ['too long', 'k'.repeat(256)],
    ])('refuses an %s key as a validation failure of the header', async (_label, key) => {
      const { ref } = fresh();
      const res = await post('charge', { key, body: { ref, amount: 1 } }).expect(400);
      expect(res.body).toMatchObject({ code: 'validation_failed', errors: [{ field: 'Idempotency-Key', message: expect.any(String) }] });
      expect(runsOf(ref)).toBe(0);
    });

    it('accepts a key of 255 printable characters', async () => {
      const { ref } = fresh();
      await post('charge', { key: `${randomUUID()} ~!`.padEnd(255, 'x'), body: { ref, amount: 1 } }).expect(201);
    });

    it('answers 401 on a route that forgot @Auth rather than sharing keys between callers', async () => {
      const { key, ref } = fresh();
      const res = await request(service.server)
        .post('/idempotency-probe/open')
        .set('idempotency-key', key)
        .send({ ref, amount: 1 })
        .expect(401);
      expect(res.body.code).toBe('unauthenticated');
      expect(runsOf(ref)).toBe(0);
    });
  });

  describe('scopes', () => {
    it('keeps keys per user', async () => {
      const { key, ref } = fresh();
      const byAlice = await post('charge', { key, body: { ref, amount: 5 } }).expect(201);
      const byBob = await post('charge', { token: bob, key, body: { ref, amount: 5 } }).expect(201);
      expect(byBob.headers['idempotent-replayed']).toBeUndefined();
      expect([byAlice.body.userId, byBob.body.userId]).toEqual(['alice', 'bob']);
      expect(runsOf(ref)).toBe(2);
    });

    it('keeps keys per operation', async () => {
      const { key, ref } = fresh();
      const here = await post('charge', { key, body: { ref, amount: 5 } }).expect(201);
      const there = await post('charge-elsewhere', { key, body: { ref, amount: 5 } }).expect(201);
      expect(there.headers['idempotent-replayed']).toBeUndefined();
      expect(there.body.chargeId).not.toBe(here.body.chargeId);
      expect(runsOf(ref)).toBe(2);
    });

    it('shares keys between instances', async () => {
      const { key, ref } = fresh();
      const first = await post('charge', { key, body: { ref, amount: 5 } }).expect(201);
      const retry = await post('charge', { key, body: { ref, amount: 5 }, on: other }).expect(201);
      expect(retry.body).toEqual(first.body);
      expect(runsOf(ref)).toBe(1);
    });
  });

  describe('concurrent retries', () => {
    it('runs the handler once and gives every retry the same answer once it is ready', async () => {
      const { key, ref } = fresh();
      const answers = await Promise.all(Array.from({ length: 10 }, () => post('charge', { key, body: { ref, amount: 9, delayMs: 400 } })));
      expect(answers.map((res) => res.status)).toEqual(Array(10).fill(201));
      // The very bytes, member order included.
      expect(new Set(answers.map((res) => res.text)).size).toBe(1);
      expect(answers.filter((res) => res.headers['idempotent-replayed'] === 'true')).toHaveLength(9);
      expect(runsOf(ref)).toBe(1);
    });

    it('answers 409 idempotency_in_progress, with Retry-After, to retries that stop waiting', async () => {
      const { key, ref } = fresh();
      const body = { ref, amount: 9, delayMs: 1500 };
      // Spread over both instances: the wait is the route's (150 ms), the key is shared.
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => post('charge-impatient', { key, body, on: i % 2 ? other : service })),
      );
      const done = answers.filter((res) => res.status === 201);
      const waiting = answers.filter((res) => res.status === 409);
      expect(done).toHaveLength(1);
      expect(waiting).toHaveLength(9);
      for (const res of waiting) {
        expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
        expect(res.headers['retry-after']).toBe('1');
        expect(res.body).toMatchObject({ status: 409, code: 'idempotency_in_progress' });
      }
      expect(runsOf(ref)).toBe(1);
      const later = await post('charge-impatient', { key, body, on: other }).expect(201);
      expect(later.body).toEqual(done[0].body);
      expect(runsOf(ref)).toBe(1);
    });
  });

  describe('failures', () => {
    it('frees the key after a validation failure, so the corrected request runs', async () => {
      const { key, ref } = fresh();
      const invalid = await post('charge', { key, body: { ref, amount: 0 } }).expect(400);
      expect(invalid.body.code).toBe('validation_failed');
      expect(await recordsOf(key)).toHaveLength(0);
      const corrected = await post('charge', { key, body: { ref, amount: 1 } }).expect(201);
      expect(corrected.headers['idempotent-replayed']).toBeUndefined();
      expect(runsOf(ref)).toBe(1);
    });

    it('replays an error of the handler identically, as problem+json', async () => {
      const { key, ref } = fresh();
      const first = await post('decline', { key, body: { ref, amount: 1 } }).expect(402);
      expect(first.body).toMatchObject({ code: 'probe_declined', status: 402, declineId: expect.any(String), outcomeKnown: true });
      const retry = await post('decline', { key, body: { ref, amount: 1 } }).expect(402);
      expect(retry.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(withoutRequestId(retry.body)).toEqual(withoutRequestId(first.body));
      expect(retry.body.requestId).toBe(retry.headers['x-request-id']);
      expect(retry.body.requestId).not.toBe(first.body.requestId);
      const [record] = await recordsOf(key);
      expect(record.responseStatus).toBe(402);
      expect(JSON.parse(record.responseBody as string)).toEqual(first.body);
      expect(runsOf(ref)).toBe(1);
    });

    it('replays an unexpected failure as the same 500, never running the handler twice', async () => {
      const { key, ref } = fresh();
      const first = await post('crash', { key, body: { ref, amount: 1 } }).expect(500);
      expect(first.body.code).toBe('internal_error');
      const retry = await post('crash', { key, body: { ref, amount: 1 } }).expect(500);
      expect(withoutRequestId(retry.body)).toEqual(withoutRequestId(first.body));
      expect(runsOf(ref)).toBe(1);
    });

    it('frees the key after an error the route declares harmless (releaseOn)', async () => {
      const { key, ref } = fresh();
      const first = await post('budget', { key, body: { ref, amount: 1 } }).expect(429);
      expect(first.body.code).toBe('provider_budget_exhausted');
      await post('budget', { key, body: { ref, amount: 1 } }).expect(429);
      expect(runsOf(ref)).toBe(2);
    });
  });

  describe('expiry', () => {
    const expire = (key: string) =>
      service.prisma.$executeRaw`UPDATE idempotency_records SET expires_at = now() - interval '1 minute' WHERE key = ${key}`;

    it('purges expired records, and an expired key can be used again', async () => {
      const { key, ref } = fresh();
      const live = fresh();
      await post('charge', { key, body: { ref, amount: 1 } }).expect(201);
      await post('charge', { key: live.key, body: { ref: live.ref, amount: 1 } }).expect(201);
      await expire(key);
      const outcome = await service.get(IdempotencyRepository).tryPurgeAsLeader();
      expect(outcome.leader).toBe(true);
      expect(outcome.purged).toBeGreaterThanOrEqual(1);
      expect(await recordsOf(key)).toHaveLength(0);
      expect(await recordsOf(live.key)).toHaveLength(1);
      const again = await post('charge', { key, body: { ref, amount: 2 } }).expect(201);
      expect(again.body.run).toBe(2);
    });

    it('lets an expired key be used again before the purge ran', async () => {
      const { key, ref } = fresh();
      const first = await post('charge', { key, body: { ref, amount: 1 } }).expect(201);
      await expire(key);
      const again = await post('charge', { key, body: { ref, amount: 1 } }).expect(201);
      expect(again.headers['idempotent-replayed']).toBeUndefined();
      expect(again.body.chargeId).not.toBe(first.body.chargeId);
      const records = await recordsOf(key);
      expect(records).toHaveLength(1);
      expect(records[0].expiresAt.getTime()).toBeGreaterThan(Date.now());
    });
  });

  describe('leases', () => {
    it('a renewal extends the lease of the request holding the record, and fails once the record is no longer in progress', async () => {
      const repository = service.get(IdempotencyRepository);
      const claim = await repository.insertOrGet({
        userId: 'lease-user',
        scope: 'lease',
        key: randomUUID(),
        requestHash: 'h',
        ttlSeconds: 60,
        leaseMs: 1,
      });
      if (!claim.created) throw new Error('a fresh key must be claimed');
      const { userId, scope, key } = claim.record;
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect((await repository.find(userId, scope, key))?.leaseLapsed).toBe(true);
      expect(await repository.renewLease(claim.record, 60_000)).toBe(true);
      expect((await repository.find(userId, scope, key))?.leaseLapsed).toBe(false);
      expect(await repository.complete(claim.record, 201, { ok: true })).toBe(true);
      expect(await repository.renewLease(claim.record, 60_000)).toBe(false);
    });
  });

  it('documents the header and the 409/422 answers in the OpenAPI document', async () => {
    const res = await request(service.server).get('/docs-json').expect(200);
    const operation = res.body.paths['/idempotency-probe/charge'].post;
    expect(operation.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: true })]),
    );
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['400', '409', '422']));
  });
});
