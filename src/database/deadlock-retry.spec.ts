import { DEADLOCK_RETRIES, isDeadlock, retryingDeadlock } from './deadlock-retry';

const deadlock = () => Object.assign(new Error('deadlock detected'), { code: '40P01' });

describe('retryingDeadlock', () => {
  it('sends again a statement PostgreSQL aborted to break a deadlock, and answers its result', async () => {
    let sent = 0;
    const answer = await retryingDeadlock(async () => {
      sent++;
      if (sent < 3) throw deadlock();
      return 'rows';
    });
    expect([answer, sent]).toEqual(['rows', 3]);
  });

  it('gives up after DEADLOCK_RETRIES more sends, with the deadlock', async () => {
    let sent = 0;
    await expect(
      retryingDeadlock(() => {
        sent++;
        return Promise.reject(deadlock());
      }),
    ).rejects.toMatchObject({ code: '40P01' });
    expect(sent).toBe(DEADLOCK_RETRIES + 1);
  });

  it('never sends again after any other error', async () => {
    let sent = 0;
    const unique = Object.assign(new Error('duplicate key'), { code: '23505' });
    await expect(
      retryingDeadlock(() => {
        sent++;
        return Promise.reject(unique);
      }),
    ).rejects.toBe(unique);
    expect(sent).toBe(1);
    expect(isDeadlock(unique)).toBe(false);
  });
});
