import pino from 'pino';
import type { CallbacksRepository } from './callbacks.repository';
import { RejectedCallbackPurgeJob } from './rejected-callback-purge.job';

describe('RejectedCallbackPurgeJob', () => {
  const silent = pino({ level: 'silent' });
  const schedulerWith = (tryPurgeRejectedAsLeader: jest.Mock) =>
    new RejectedCallbackPurgeJob({ tryPurgeRejectedAsLeader } as unknown as CallbacksRepository, silent);

  it('purges a backlog in batches of 30-day-old records until a batch comes back short', async () => {
    const batches = [5_000, 5_000, 12];
    const purge = jest.fn(async () => ({ leader: true, purged: batches.shift() ?? 0 }));
    await expect(schedulerWith(purge).runOnce()).resolves.toBe(10_012);
    expect(purge).toHaveBeenCalledTimes(3);
    expect(purge).toHaveBeenCalledWith(30, 5_000);
  });

  it('stops at once when another instance holds the lock, and survives a failure', async () => {
    const follower = jest.fn(async () => ({ leader: false, purged: 0 }));
    await expect(schedulerWith(follower).runOnce()).resolves.toBe(0);
    expect(follower).toHaveBeenCalledTimes(1);
    const failing = jest.fn(async () => Promise.reject(new Error('connection refused')));
    await expect(schedulerWith(failing).runOnce()).resolves.toBe(0);
  });

  it('runs on its timer and stops on shutdown', async () => {
    jest.useFakeTimers();
    try {
      const purge = jest.fn(async () => ({ leader: true, purged: 0 }));
      const scheduler = schedulerWith(purge);
      scheduler.onApplicationBootstrap();
      await jest.advanceTimersByTimeAsync(60 * 60 * 1000);
      expect(purge).toHaveBeenCalledTimes(2);
      await scheduler.onModuleDestroy();
      await jest.advanceTimersByTimeAsync(5 * 60 * 60 * 1000);
      expect(purge).toHaveBeenCalledTimes(2);
      expect(jest.getTimerCount()).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });
});
