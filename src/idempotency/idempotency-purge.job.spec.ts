import pino from 'pino';
import { IdempotencyPurgeJob } from './idempotency-purge.job';
import type { IdempotencyRepository } from './idempotency.repository';

describe('IdempotencyPurgeJob', () => {
  const silent = pino({ level: 'silent' });

  it('never runs two purges at once in one instance', async () => {
    let finish: (value: { leader: boolean; purged: number }) => void = () => undefined;
    const repository = {
      tryPurgeAsLeader: jest.fn(() => new Promise<{ leader: boolean; purged: number }>((resolve) => (finish = resolve))),
    };
    const scheduler = new IdempotencyPurgeJob(repository as unknown as IdempotencyRepository, silent);
    const first = scheduler.runOnce();
    const second = scheduler.runOnce();
    finish({ leader: true, purged: 3 });
    await Promise.all([first, second]);
    expect(repository.tryPurgeAsLeader).toHaveBeenCalledTimes(1);
    const third = scheduler.runOnce();
    finish({ leader: true, purged: 0 });
    await third;
    expect(repository.tryPurgeAsLeader).toHaveBeenCalledTimes(2);
  });

  it('survives a failed purge', async () => {
    const repository = { tryPurgeAsLeader: jest.fn(async () => Promise.reject(new Error('connection refused'))) };
    const scheduler = new IdempotencyPurgeJob(repository as unknown as IdempotencyRepository, silent);
    await expect(scheduler.runOnce()).resolves.toBeUndefined();
  });

  it('purges on its timer and stops on shutdown', async () => {
    jest.useFakeTimers();
    try {
      const repository = { tryPurgeAsLeader: jest.fn(async () => ({ leader: true, purged: 0 })) };
      const scheduler = new IdempotencyPurgeJob(repository as unknown as IdempotencyRepository, silent);
      scheduler.onApplicationBootstrap();
      await jest.advanceTimersByTimeAsync(10 * 60 * 1000);
      expect(repository.tryPurgeAsLeader).toHaveBeenCalledTimes(2);
      await scheduler.onModuleDestroy();
      await jest.advanceTimersByTimeAsync(60 * 60 * 1000);
      expect(repository.tryPurgeAsLeader).toHaveBeenCalledTimes(2);
      expect(jest.getTimerCount()).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });
});
