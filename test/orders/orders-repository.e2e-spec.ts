import { randomUUID } from 'node:crypto';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { OrdersRepository } from '../../src/orders/orders.repository';
import type { NewOrder, SubmissionOutcome } from '../../src/orders/order.types';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/**
 * The two writes of a pay-in answer only what the database decided, and build the rest of the
 * order from what they were given: what they answer must be the order as a read finds it.
 */
describe('the order the pay-in writes answer', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let orders: OrdersRepository;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox);
    orders = service.get(OrdersRepository);
  });
  afterAll(async () => {
    await service.close();
    await sandbox.close();
  });

  const newOrder = (amount: string, currency: string): NewOrder => ({
    reference: `ord_${randomUUID().replace(/-/g, '')}`,
    customerId: 'repository-reader',
    amount,
    currency,
    service: 7,
    wallet: '237650000000',
    description: 'Two tickets',
    payer: 'Awa Ndiaye',
    payerEmail: 'awa@example.com',
  });

  const outcomes: SubmissionOutcome[] = [
    { status: 'PROCESSING', providerReference: 'ref-1', providerTransactionReference: 'txn-1', detail: 'Accepted by the provider' },
    { status: 'FAILED', failureReason: 'Insufficient funds', providerReference: 'ref-2' },
    { status: 'UNKNOWN', detail: 'The provider’s answer was lost' },
  ];

  it.each(outcomes.map((outcome) => [outcome.status, outcome]))(
    'create, then the %s outcome: each answers the order exactly as stored',
    async (_status, outcome) => {
      // '12.50' is stored as numeric 12.5000: the answer carries the stored text, as a read does.
      const created = await orders.create(newOrder('12.50', 'EUR'), undefined, null);
      expect(created.order).toEqual(await orders.findById(created.order.id));
      expect(created.order.amount).toBe('12.5');

      const recorded = await orders.recordSubmission(created.order, outcome);
      expect(recorded.order).toEqual(await orders.findById(created.order.id));
      expect(recorded.order.status).toBe(outcome.status);
      expect(recorded.event?.status).toBe(outcome.status);
    },
  );

  it('an order a callback decided first: the outcome answers the decided order, not the submitted one', async () => {
    const created = await orders.create(newOrder('1500', 'XAF'), undefined, null);
    await orders.recordSubmission(created.order, outcomes[2]);
    // The order is UNKNOWN now: a second outcome does not move it, and answers it as stored.
    const again = await orders.recordSubmission(created.order, outcomes[0]);
    expect(again.event).toBeUndefined();
    expect(again.order).toEqual(await orders.findById(created.order.id));
    expect(again.order.status).toBe('UNKNOWN');
    expect(again.order.providerReference).toBe('ref-1');
  });
});
