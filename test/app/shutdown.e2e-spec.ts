import { request as httpRequest } from 'node:http';
import { TEST_WALLETS, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { customer } from '../support/orders-client';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/**
 * Graceful shutdown: in-flight requests finish, open event streams end instead of holding the
 * server open, new connections are refused, and the process is left with nothing running.
 */
describe('graceful shutdown', () => {
  let sandbox: RunningSandbox;
  let service: TestService;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ hangMs: 60_000 });
    service = await startTestService(sandbox, { PROVIDER_TIMEOUT_MS: '1500' }, [], { listen: true });
  });
  afterAll(async () => {
    await sandbox.close();
  });

  it('finishes the request in flight, ends the event streams, refuses new connections', async () => {
    const alice = await customer(service);
    const quiet = (await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK })).body;
    const base = `http://127.0.0.1:${service.config.port}`;

    // An open SSE stream, and an order whose provider call takes until the timeout.
    const stream = new Promise<string>((resolve, reject) => {
      httpRequest(`${base}/v1/orders/${quiet.id}/events`, { headers: { authorization: `Bearer ${alice.token}` } }, (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve(text));
      })
        .on('error', reject)
        .end();
    });
    // supertest sends on `then`: start it now, so that it is in flight when the close begins.
    const inFlight = alice.createOrder({ wallet: TEST_WALLETS.TIMEOUT }).then((res) => res);
    await new Promise((resolve) => setTimeout(resolve, 300));

    const started = Date.now();
    await service.close();
    expect(Date.now() - started).toBeLessThan(10_000);

    const finished = await inFlight;
    expect(finished.status).toBe(201);
    expect(finished.body.status).toBe('UNKNOWN');
    expect(await stream).toContain('event: status');
    await expect(fetch(`${base}/health/live`)).rejects.toThrow();
  });
});
