import { existsSync, readFileSync } from 'node:fs';

/** Linux: the CPU time of the thread that reads it, in nanoseconds, as the first of its fields. */
const THREAD_SCHEDSTAT = '/proc/thread-self/schedstat';

/**
 * The CPU time the calling thread (the event loop's) has spent, in milliseconds. That thread only:
 * V8's garbage-collection helpers and libuv's pool work beside the loop without holding it, and
 * `process.cpuUsage()` counts them too (with a second process loading both cores, one request read
 * 43 ms by it and 23 ms on the loop's thread). The clock would also count the time the thread
 * waited for a core on a busy machine.
 */
export const loopThreadCpuMs: () => number = existsSync(THREAD_SCHEDSTAT)
  ? () => Number(readFileSync(THREAD_SCHEDSTAT, 'latin1').split(' ', 1)[0]) / 1e6
  : () => {
      const { user, system } = typeof process.threadCpuUsage === 'function' ? process.threadCpuUsage() : process.cpuUsage();
      return (user + system) / 1000;
    };

/**
 * Runs `work` and answers with the longest the event loop was held while it ran, as the CPU its
 * thread spent in that hold (loopThreadCpuMs): a 1 ms interval timer notes the CPU spent between
 * its ticks, the time from the start to the first tick and from the last tick to the end included.
 * (perf_hooks' monitorEventLoopDelay misses a hold that starts before its first tick, and counts
 * the clock.)
 */
export async function withLongestLoopHold<T>(work: () => Promise<T>): Promise<{ result: T; holdCpuMs: number }> {
  let last = loopThreadCpuMs();
  let longest = 0;
  const sampler = setInterval(() => {
    const now = loopThreadCpuMs();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  try {
    const result = await work();
    return { result, holdCpuMs: Math.max(longest, loopThreadCpuMs() - last) };
  } finally {
    clearInterval(sampler);
  }
}
