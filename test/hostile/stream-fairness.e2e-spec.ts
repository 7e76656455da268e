import { TEST_WALLETS, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { customer } from '../support/orders-client';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { until } from '../support/until';
import { openSseClient, type SseClient } from './live-streams-sse-client';

/**
 * Live streams are counted per user (SSE_MAX_STREAMS_PER_USER): one user holding all it may hold,
 * and asking for more, takes nothing from another user, who still opens a stream and receives its
 * order's status at once.
 */
describe('one user at its live-stream limit keeps no other user from streaming', () => {
  const PER_USER = 3;
  let sandbox: RunningSandbox;
  let service: TestService;
  const streams: SseClient[] = [];

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox, { SSE_MAX_STREAMS_PER_USER: String(PER_USER) }, [], { listen: true });
  });
  afterAll(async () => {
    for (const stream of streams) stream.close();
    await service.close();
    await sandbox.close();
  });

  it('the saturating user is refused 429 past its limit; another user opens a stream and gets its status within 1 s', async () => {
    const port = service.config.port;
    const mallory = await customer(service);
    const malloryOrder = (await mallory.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK })).body.id as string;
    const alice = await customer(service);
    const aliceOrder = (await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK })).body.id as string;

    for (let i = 0; i < PER_USER; i++) streams.push(await openSseClient(port, mallory.token, malloryOrder));
    expect(streams.map((s) => s.status)).toEqual([200, 200, 200]);
    // Mallory keeps asking: refused each time, holding what it holds.
    for (let i = 0; i < 5; i++) {
      const refused = await openSseClient(port, mallory.token, malloryOrder);
      expect([refused.status, refused.headers['content-type']]).toEqual([429, expect.stringContaining('application/problem+json')]);
      refused.close();
    }

    const started = performance.now();
    const stream = await openSseClient(port, alice.token, aliceOrder);
    streams.push(stream);
    expect(stream.status).toBe(200);
    await until("alice's first status event", () => stream.body.includes('event: status'), 1_000, 10);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(streams.slice(0, PER_USER).every((s) => !s.ended)).toBe(true);
  });
});
