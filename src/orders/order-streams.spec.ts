import type { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../config/app-config';
import type { MetricsService } from '../metrics/metrics.service';
import { statusEventOf, type OrderEventsService, type OrderWatcher } from './order-events.service';
import { OrderStreams, parseLastEventId, type OrderStreamClient, type OrderStreamMessage } from './order-streams';
import type { OrderRecord, OrderStatus, StatusChangeRecord } from './order.types';
import type { OrdersRepository } from './orders.repository';

const ORDER_ID = '5f0c9a2e-3b1d-4c6e-9a7f-1d2e3f4a5b6c';

function change(id: number, fromStatus: OrderStatus | null, toStatus: OrderStatus): StatusChangeRecord {
  return {
    id: BigInt(id),
    orderId: ORDER_ID,
    fromStatus,
    toStatus,
    reason: 'test',
    detail: null,
    callbackId: null,
    actor: null,
    note: null,
    at: new Date('2026-01-01T00:00:00Z'),
  };
}

/** The stored history of the order: created PENDING (id 11), PROCESSING (id 14), then SUCCEEDED (id 20) when decided. */
const CREATED = change(11, null, 'PENDING');
const SUBMITTED = change(14, 'PENDING', 'PROCESSING');
const DECIDED = change(20, 'PROCESSING', 'SUCCEEDED');

/** A client that records what it is sent, as the HTTP layer would write it. */
class RecordingClient implements OrderStreamClient {
  readonly messages: OrderStreamMessage[] = [];
  ended = false;
  private readonly closeListeners: (() => void)[] = [];
  get closed() {
    return this.ended;
  }
  onClose(listener: () => void) {
    this.closeListeners.push(listener);
  }
  send(message: OrderStreamMessage) {
    if (!this.ended) this.messages.push(message);
  }
  end() {
    this.ended = true;
    for (const listener of this.closeListeners) listener();
  }
  /** The change ids of the status events sent, in order. */
  get statusIds(): string[] {
    return this.messages.flatMap((m) => (m.kind === 'status' ? [m.event.changeId] : []));
  }
}

/** OrderStreams on fakes: a history read the test releases when it wants, and the watchers it registered. */
function setUp(history: StatusChangeRecord[]) {
  const watchers: OrderWatcher[] = [];
  let releaseHistory: () => void = () => undefined;
  const historyRead = new Promise<void>((resolve) => (releaseHistory = resolve));
  const events = {
    watch: (_orderId: string, watcher: OrderWatcher) => {
      watchers.push(watcher);
      return () => watchers.splice(watchers.indexOf(watcher), 1);
    },
  } as unknown as OrderEventsService;
  const orders = { history: () => historyRead.then(() => history) } as unknown as OrdersRepository;
  const metrics = { gaugeCollectedOnScrape: () => undefined } as unknown as MetricsService;
  const config = { get: () => ({ maxStreamsPerUser: 5, maxStreams: 10, keepAliveSeconds: 15 }) } as unknown as ConfigService<
    AppConfig,
    true
  >;
  const streams = new OrderStreams(events, orders, metrics, config);
  const order = { id: ORDER_ID, status: history[history.length - 1].toStatus, updatedAt: new Date() } as OrderRecord;
  const open = (lastEventId?: bigint) => {
    const client = new RecordingClient();
    const following = streams.follow(order, streams.reserve('cust_1'), client, lastEventId);
    return { client, following };
  };
  return { streams, watchers, releaseHistory, open };
}

describe('OrderStreams.follow with Last-Event-ID', () => {
  it('sends the changes after the named one, then the live ones, each once and in order', async () => {
    const { watchers, releaseHistory, open } = setUp([CREATED, SUBMITTED]);
    const { client, following } = open(CREATED.id);
    // Notified while the history is read: already in the history (14), and one after it (20).
    watchers[0].deliver(statusEventOf(SUBMITTED));
    watchers[0].deliver(statusEventOf(DECIDED));
    releaseHistory();
    await following;

    expect(client.statusIds).toEqual(['14', '20']);
    expect(client.ended).toBe(true);
  });

  it('sends nothing before the live changes when the client has the latest one', async () => {
    const { watchers, releaseHistory, open } = setUp([CREATED, SUBMITTED]);
    const { client, following } = open(SUBMITTED.id);
    const watcher = watchers[0];
    releaseHistory();
    await following;
    expect(client.messages).toEqual([]);
    expect(client.ended).toBe(false);

    // The catch-up and the notification may both deliver it: it is sent once.
    watcher.deliver(statusEventOf(DECIDED));
    watcher.deliver(statusEventOf(DECIDED));
    expect(client.statusIds).toEqual(['20']);
    expect(client.ended).toBe(true);
  });

  it('ends at once, sending nothing, when the client already has the final status', async () => {
    const { streams, releaseHistory, open } = setUp([CREATED, SUBMITTED, DECIDED]);
    const { client, following } = open(DECIDED.id);
    releaseHistory();
    await following;
    expect(client.messages).toEqual([]);
    expect(client.ended).toBe(true);
    expect(streams.openStreams()).toBe(0);
  });

  it.each([
    ['absent', undefined],
    ['not one of this order’s changes', 12n],
    ['beyond every change', 21n],
  ])('starts with the current status when the id is %s', async (_case, lastEventId) => {
    const { releaseHistory, open } = setUp([CREATED, SUBMITTED]);
    const { client, following } = open(lastEventId);
    releaseHistory();
    await following;
    expect(client.statusIds).toEqual(['14']);
  });
});

describe('OrderStreams at shutdown', () => {
  it('tells the client when to reconnect, then ends the stream and frees its place', async () => {
    const { streams, watchers, releaseHistory, open } = setUp([CREATED, SUBMITTED]);
    const { client, following } = open();
    releaseHistory();
    await following;
    watchers[0].end();

    expect(client.messages.map((m) => m.kind)).toEqual(['status', 'reconnect']);
    const reconnect = client.messages[1] as Extract<OrderStreamMessage, { kind: 'reconnect' }>;
    expect(reconnect.retryMs).toBeGreaterThanOrEqual(1_000);
    expect(reconnect.retryMs).toBeLessThan(3_000);
    expect(client.ended).toBe(true);
    expect(streams.openStreams()).toBe(0);
  });

  it('says nothing more to a stream that has already ended', async () => {
    const { watchers, releaseHistory, open } = setUp([CREATED, SUBMITTED]);
    const { client, following } = open();
    const watcher = watchers[0];
    releaseHistory();
    await following;
    client.end();
    watcher.end();
    expect(client.messages.map((m) => m.kind)).toEqual(['status']);
  });
});

describe('parseLastEventId', () => {
  it('reads a change id: a positive decimal integer that fits a bigint', () => {
    expect(parseLastEventId('1')).toBe(1n);
    expect(parseLastEventId('9223372036854775807')).toBe(9223372036854775807n);
  });

  it.each([undefined, '', '0', '-1', '007', '1.5', ' 12', '12 ', '1e3', '0x1f', 'abc', '9223372036854775808', '12345678901234567890'])(
    'ignores %p',
    (header) => {
      expect(parseLastEventId(header)).toBeUndefined();
    },
  );
});
