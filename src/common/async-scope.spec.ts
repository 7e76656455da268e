import { outsideScopes, ScopedValue } from './async-scope';

describe('ScopedValue', () => {
  const requestId = new ScopedValue<string>('requestId');
  const slot = new ScopedValue<{ available: boolean }>('slot');

  it('follows a call through its awaits, and is unset outside it', async () => {
    expect(requestId.get()).toBeUndefined();
    const seen = await requestId.run('r1', async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      await Promise.resolve();
      return requestId.get();
    });
    expect(seen).toBe('r1');
    expect(requestId.get()).toBeUndefined();
  });

  it('keeps the other values in scope when one is run inside another, and restores them after', async () => {
    await requestId.run('r1', async () => {
      const inner = await slot.run({ available: true }, async () => {
        await Promise.resolve();
        return [requestId.get(), slot.get()?.available];
      });
      expect(inner).toEqual(['r1', true]);
      expect(slot.get()).toBeUndefined();
      await requestId.run('r2', async () => {
        await Promise.resolve();
        expect(requestId.get()).toBe('r2');
      });
      expect(requestId.get()).toBe('r1');
    });
  });

  it('never lets concurrent calls see each other’s values', async () => {
    const seen = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        requestId.run(`r${i}`, async () => {
          await new Promise((resolve) => setTimeout(resolve, (i * 7) % 5));
          return requestId.get();
        }),
      ),
    );
    expect(seen).toEqual(Array.from({ length: 50 }, (_, i) => `r${i}`));
  });

  it('outsideScopes: what is scheduled there carries no value of the call that scheduled it', async () => {
    const seen = await requestId.run('r1', () =>
      slot.run({ available: true }, () =>
        outsideScopes(() => new Promise<unknown[]>((resolve) => setTimeout(() => resolve([requestId.get(), slot.get()]), 1))),
      ),
    );
    expect(seen).toEqual([undefined, undefined]);
  });
});
