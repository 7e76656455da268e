import pino from 'pino';
import type { Database } from '../database/database';
import { CALL_LOG_FLUSH_DELAY_MS, ProviderCallLog } from './provider-call-log';
import type { ProviderCallRecord, ProviderCallRepository, StorableCall } from './provider-call.repository';

const call = (endpoint: string, extra: Partial<ProviderCallRecord> = {}): ProviderCallRecord => ({
  area: 'payin',
  method: 'POST',
  endpoint,
  url: 'https://provider/api',
  outcome: 'answered',
  durationMs: 12,
  ...extra,
});

function logWith(recordMany: (rows: readonly StorableCall[]) => Promise<void>) {
  const drains: (() => Promise<void>)[] = [];
  const prisma = { beforeDisconnect: (drain: () => Promise<void>) => drains.push(drain) } as unknown as Database;
  const log = new ProviderCallLog({ recordMany } as unknown as ProviderCallRepository, pino({ level: 'silent' }), prisma);
  return { log, drains };
}

describe('ProviderCallLog', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('writes the calls of a short while in one batch, off the caller, each with the time of its call', async () => {
    const batches: (readonly StorableCall[])[] = [];
    const { log } = logWith((rows) => Promise.resolve(void batches.push(rows)));
    log.record(call('a'));
    jest.advanceTimersByTime(5);
    log.record(call('b'));
    expect(batches).toHaveLength(0);
    jest.advanceTimersByTime(CALL_LOG_FLUSH_DELAY_MS);
    await log.flush();
    expect(batches.map((rows) => rows.map((row) => row.endpoint))).toEqual([['a', 'b']]);
    expect(batches[0][1].createdAt.getTime() - batches[0][0].createdAt.getTime()).toBe(5);
  });

  it('is drained before the database disconnects', async () => {
    const written: string[] = [];
    const { log, drains } = logWith((rows) => Promise.resolve(void written.push(...rows.map((row) => row.endpoint))));
    log.record(call('queued at shutdown'));
    expect(drains).toHaveLength(1);
    await drains[0]();
    expect(written).toEqual(['queued at shutdown']);
  });

  it('drops only a call JSON cannot hold, and never throws to its caller', async () => {
    const written: string[] = [];
    const { log } = logWith((rows) => Promise.resolve(void written.push(...rows.map((row) => row.endpoint))));
    expect(() => log.record(call('bigint', { requestBody: { amount: 1n } }))).not.toThrow();
    log.record(call('fine'));
    await log.flush();
    expect(written).toEqual(['fine']);
  });

  it('a failed write is logged, not thrown, and the next batch is still written', async () => {
    let failures = 1;
    const written: string[] = [];
    const { log } = logWith((rows) =>
      failures-- > 0 ? Promise.reject(new Error('database down')) : Promise.resolve(void written.push(...rows.map((row) => row.endpoint))),
    );
    log.record(call('lost'));
    await expect(log.flush()).resolves.toBeUndefined();
    log.record(call('kept'));
    await log.flush();
    expect(written).toEqual(['kept']);
  });
});
