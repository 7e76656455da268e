import { ValidationFailedError } from '../common/domain-error';
import { IdempotencyInProgressError, IdempotencyKeyRequiredError, IdempotencyKeyReusedError } from './idempotency.errors';
import type { IdempotencyRecord, IdempotencyRepository, InsertOutcome } from './idempotency.repository';
import { canonicalJson, IdempotencyService, parseIdempotencyKey, requestHash } from './idempotency.service';

describe('canonicalJson / requestHash', () => {
  it('ignores member order at every depth', () => {
    const a = { amount: '12.50', customer: { name: 'Ada', address: { city: 'Lyon', zip: '69001' } }, items: [{ sku: 'x', qty: 1 }] };
    const b = { items: [{ qty: 1, sku: 'x' }], customer: { address: { zip: '69001', city: 'Lyon' }, name: 'Ada' }, amount: '12.50' };
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(requestHash('orders.create', a)).toBe(requestHash('orders.create', b));
  });

  it('keeps array order significant', () => {
    expect(requestHash('s', { items: [1, 2] })).not.toBe(requestHash('s', { items: [2, 1] }));
  });

  it('tells values of different types apart', () => {
    expect(requestHash('s', { amount: 1500 })).not.toBe(requestHash('s', { amount: '1500' }));
    expect(requestHash('s', { note: null })).not.toBe(requestHash('s', {}));
  });

  it('drops undefined members as JSON does, and reads a missing body as null', () => {
    expect(canonicalJson({ a: 1, b: undefined })).toBe('{"a":1}');
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson([undefined])).toBe('[null]');
  });

  it('escapes member names and strings', () => {
    expect(canonicalJson({ 'a"b': 'c\nd' })).toBe('{"a\\"b":"c\\nd"}');
  });

  it('hashes the scope in: the same body on another operation is another request', () => {
    expect(requestHash('orders.create', { a: 1 })).not.toBe(requestHash('cards.create', { a: 1 }));
    expect(requestHash('orders.create', { a: 1 })).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('parseIdempotencyKey', () => {
  it('accepts 1 to 255 printable ASCII characters', () => {
    expect(parseIdempotencyKey('a')).toBe('a');
    expect(parseIdempotencyKey('order 42 / retry ~1')).toBe('order 42 / retry ~1');
    expect(parseIdempotencyKey('k'.repeat(255))).toBe('k'.repeat(255));
  });

  it('requires the header', () => {
    expect(() => parseIdempotencyKey(undefined)).toThrow(IdempotencyKeyRequiredError);
  });

  it.each([
    ['empty', ''],
    ['too long', 'k'.repeat(256)],
    ['non-ASCII', 'clé'],
    ['with a control character', 'a\tb'],
    ['repeated', ['a', 'b']],
  ])('refuses a %s key as a validation failure of the header', (_label, header) => {
    try {
      parseIdempotencyKey(header);
      throw new Error('accepted');
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationFailedError);
      expect((error as ValidationFailedError).errors).toEqual([{ field: 'Idempotency-Key', message: expect.any(String) }]);
    }
  });
});

describe('IdempotencyService.begin', () => {
  const record = (over: Partial<IdempotencyRecord>): IdempotencyRecord => ({
    id: 'r1',
    userId: 'alice',
    scope: 'probe',
    key: 'k',
    requestHash: requestHash('probe', { a: 1 }),
    state: 'in_progress',
    responseStatus: null,
    responseBody: null,
    expiresAt: new Date(Date.now() + 60_000),
    ...over,
  });

  /** A repository whose claims and reads answer from scripted lists. */
  function fakeRepository(claims: InsertOutcome[], reads: (IdempotencyRecord | undefined)[] = []) {
    const repository = {
      insertOrGet: jest.fn(async () => claims.shift() ?? { created: false, record: undefined }),
      find: jest.fn(async () => (reads.length > 1 ? reads.shift() : reads[0])),
    };
    return repository;
  }
  const serviceOf = (repository: ReturnType<typeof fakeRepository>, waitMs = 200) =>
    new IdempotencyService(repository as unknown as IdempotencyRepository, { waitMs, pollMs: 10 });

  it('starts a new request when the key is free', async () => {
    const fresh = record({});
    const outcome = await serviceOf(fakeRepository([{ created: true, record: fresh }])).begin('alice', 'probe', 'k', { a: 1 });
    expect(outcome).toEqual({ kind: 'new', record: fresh });
  });

  it('replays a completed record with the same body', async () => {
    const done = record({ state: 'completed', responseStatus: 201, responseBody: { id: 'o1' } });
    const outcome = await serviceOf(fakeRepository([{ created: false, record: done }])).begin('alice', 'probe', 'k', { a: 1 });
    expect(outcome).toEqual({ kind: 'replay', status: 201, body: { id: 'o1' } });
  });

  it('refuses another body, even while the first request runs', async () => {
    const running = record({});
    await expect(serviceOf(fakeRepository([{ created: false, record: running }])).begin('alice', 'probe', 'k', { a: 2 })).rejects.toThrow(IdempotencyKeyReusedError);
  });

  it('waits for the first request, then replays its answer', async () => {
    const done = record({ state: 'completed', responseStatus: 201, responseBody: { ok: true } });
    const repository = fakeRepository([{ created: false, record: record({}) }], [record({}), record({}), done]);
    const outcome = await serviceOf(repository).begin('alice', 'probe', 'k', { a: 1 });
    expect(outcome).toEqual({ kind: 'replay', status: 201, body: { ok: true } });
    expect(repository.find).toHaveBeenCalledTimes(3);
  });

  it('gives up with 409 idempotency_in_progress after waitMs', async () => {
    const repository = fakeRepository([{ created: false, record: record({}) }], [record({})]);
    const started = Date.now();
    await expect(serviceOf(repository, 100).begin('alice', 'probe', 'k', { a: 1 })).rejects.toThrow(IdempotencyInProgressError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
  });

  it('lets the caller shorten the wait', async () => {
    const repository = fakeRepository([{ created: false, record: record({}) }], [record({})]);
    const started = Date.now();
    await expect(serviceOf(repository, 5_000).begin('alice', 'probe', 'k', { a: 1 }, { waitMs: 0 })).rejects.toThrow(IdempotencyInProgressError);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('claims the key itself when the first request released it', async () => {
    const mine = record({ id: 'r2' });
    const repository = fakeRepository([{ created: false, record: record({}) }, { created: true, record: mine }], [undefined]);
    const outcome = await serviceOf(repository).begin('alice', 'probe', 'k', { a: 1 });
    expect(outcome).toEqual({ kind: 'new', record: mine });
    expect(repository.insertOrGet).toHaveBeenCalledTimes(2);
  });
});
