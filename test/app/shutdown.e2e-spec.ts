import { Agent, request as httpRequest } from 'node:http';
import { TEST_WALLETS, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { customer } from '../support/orders-client';
import { orderRequest } from '../support/provider-factories';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/**
 * Graceful shutdown: in-flight requests finish, open event streams end instead of holding the
 * server open, new connections are refused, and the process is left with nothing running.
 */
describe('graceful shutdown', () => {
  let sandbox: RunningSandbox;
  let service: TestService;

  // Each test closes its own instance.
  beforeEach(async () => {
    sandbox = await startTestSandbox({ hangMs: 60_000 });
    service = await startTestService(sandbox, { PROVIDER_TIMEOUT_MS: '1500' }, [], { listen: true });
  });
  afterEach(async () => {
    await sandbox.close();
  });

  /** Closes the instance once the request just sent has reached the provider; how long the close took, in ms. */
  async function closeOnceInFlight(): Promise<number> {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    await service.close();
    return Date.now() - started;
  }

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
    expect(await closeOnceInFlight()).toBeLessThan(10_000);

    const finished = await inFlight;
    expect(finished.status).toBe(201);
    expect(finished.body.status).toBe('UNKNOWN');
    expect(await stream).toContain('event: status');
    await expect(fetch(`${base}/health/live`)).rejects.toThrow();
  });

  /**
   * A browser, a load balancer or undici keeps its connection open after an answer. The close used
   * to wait for a connection whose request was in flight when it began until Fastify's
   * keepAliveTimeout (72 s) ended it.
   */
  it('closes the connection of a request in flight once it is answered, without waiting for the keep-alive timeout', async () => {
    const alice = await customer(service);
    const agent = new Agent({ keepAlive: true, keepAliveMsecs: 60_000 });
    const inFlight = new Promise<{ status: number; connection: string | undefined; body: string }>((resolve, reject) => {
      const req = httpRequest(
        `http://127.0.0.1:${service.config.port}/v1/orders`,
        {
          method: 'POST',
          agent,
          headers: {
            authorization: `Bearer ${alice.token}`,
            'content-type': 'application/json',
            'idempotency-key': `keep-alive-${Date.now()}`,
          },
        },
        (res) => {
          let body = '';
          res.on('data', (chunk) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(orderRequest({ wallet: TEST_WALLETS.TIMEOUT })));
    });
    expect(await closeOnceInFlight()).toBeLessThan(10_000);
    const finished = await inFlight;
    expect(finished.status).toBe(201);
    expect(finished.connection).toBe('close');
    agent.destroy();
  });
});
