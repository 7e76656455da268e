import { request as httpRequest } from 'node:http';
import request from 'supertest';
import { CallbackUrlsService } from '../../src/orders/callback-urls.service';
import { OrdersRepository } from '../../src/orders/orders.repository';
import { TEST_WALLETS, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { customer, parseSse } from '../support/orders-client';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/** A stream read as it arrives: its text so far, and whether it has ended. */
interface OpenStream {
  status: number;
  text: string;
  ended: Promise<void>;
  /** Resolves once the text holds `count` events. */
  events(count: number): Promise<void>;
}

/**
 * A reconnecting client's stream: GET /v1/orders/{id}/events with Last-Event-ID, as EventSource
 * sends it after a `retry:`.
 */
describe('live streams resumed with Last-Event-ID', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let port: number;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox, {}, [], { listen: true });
    port = service.config.port;
  });
  afterAll(async () => {
    await service.close();
    await sandbox.close();
  });

  function open(token: string, orderId: string, lastEventId?: string): Promise<OpenStream> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { authorization: `Bearer ${token}` };
      if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
      httpRequest({ host: '127.0.0.1', port, path: `/v1/orders/${orderId}/events`, agent: false, headers }, (res) => {
        res.setEncoding('utf8');
        const waiters: (() => void)[] = [];
        const stream: OpenStream = {
          status: res.statusCode ?? 0,
          text: '',
          ended: new Promise((done) => res.on('close', done)),
          events: (count) =>
            new Promise((done) => {
              const check = () => (parseSse(stream.text).length >= count ? done() : waiters.push(check));
              check();
            }),
        };
        res.on('data', (chunk: string) => {
          stream.text += chunk;
          for (const waiter of waiters.splice(0)) waiter();
        });
        resolve(stream);
      })
        .on('error', reject)
        .end();
    });
  }

  /** A PROCESSING order the sandbox never calls back, its customer, its stored change ids, and a way to decide it. */
  async function processingOrder() {
    const alice = await customer(service);
    const created = await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK });
    expect(created.body.status).toBe('PROCESSING');
    const orderId = created.body.id as string;
    const history = await service.get(OrdersRepository).history(orderId);
    expect(history.map((h) => h.toStatus)).toEqual(['PENDING', 'PROCESSING']);
    const decide = async () => {
      const url = new URL(service.get(CallbackUrlsService).urlsFor(orderId).successUrl);
      expect(
        (
          await request(service.server)
            .post(url.pathname + url.search)
            .send({ status: 'SUCCESS' })
        ).status,
      ).toBe(200);
    };
    return { alice, orderId, ids: history.map((h) => String(h.id)), decide };
  }

  it('replays the events after Last-Event-ID, then continues live, none twice', async () => {
    const { alice, orderId, ids, decide } = await processingOrder();
    const stream = await open(alice.token, orderId, ids[0]);
    expect(stream.status).toBe(200);
    await stream.events(1);
    await decide();
    await stream.ended;

    const events = parseSse(stream.text);
    expect(events.map((e) => [e.id, e.data.status])).toEqual([
      [ids[1], 'PROCESSING'],
      [expect.any(String), 'SUCCEEDED'],
    ]);
    expect(BigInt(events[1].id!)).toBeGreaterThan(BigInt(ids[1]));
  });

  it('replays every event the client missed, in order, up to the final one', async () => {
    const { alice, orderId, ids, decide } = await processingOrder();
    await decide();
    const history = await service.get(OrdersRepository).history(orderId);
    const stream = await open(alice.token, orderId, ids[0]);
    await stream.ended;
    expect(parseSse(stream.text).map((e) => [e.id, e.data.status])).toEqual([
      [ids[1], 'PROCESSING'],
      [String(history[2].id), 'SUCCEEDED'],
    ]);
  });

  it('sends only live events when the client already has the latest one', async () => {
    const { alice, orderId, ids, decide } = await processingOrder();
    const stream = await open(alice.token, orderId, ids[1]);
    // The stream is open and has sent nothing: the client is up to date.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(parseSse(stream.text)).toEqual([]);
    await decide();
    await stream.ended;
    expect(parseSse(stream.text).map((e) => e.data.status)).toEqual(['SUCCEEDED']);
  });

  it('ends at once, with no event, when Last-Event-ID is the final status', async () => {
    const { alice, orderId, decide } = await processingOrder();
    await decide();
    const [, , final] = await service.get(OrdersRepository).history(orderId);
    expect(final.toStatus).toBe('SUCCEEDED');
    const stream = await open(alice.token, orderId, String(final.id));
    await stream.ended;
    expect(stream.status).toBe(200);
    expect(parseSse(stream.text)).toEqual([]);
  });

  it.each([
    ['malformed', () => 'not-an-id'],
    ['zero', () => '0'],
    ['too large for a change id', () => '99999999999999999999'],
    ['the id of another order’s event', (other: string[]) => other[1]],
  ])('starts with the current status when Last-Event-ID is %s', async (_case, lastEventId) => {
    const other = await processingOrder();
    const { alice, orderId, ids } = await processingOrder();
    const stream = await open(alice.token, orderId, lastEventId(other.ids));
    await stream.events(1);
    expect(parseSse(stream.text).map((e) => [e.id, e.data.status])).toEqual([[ids[1], 'PROCESSING']]);
  });
});
