import type { BudgetShareRow } from '../provider/agent-budget-take';
import pino from 'pino';
import { ConfigService } from '@nestjs/config';
import type { AuthUser } from '../auth/auth.types';
import type { AppConfig } from '../config/app-config';
import type { PayinClient } from '../provider/clients/payin.client';
import {
  AgentBudgetExhaustedError,
  ProviderRejectedError,
  ProviderServerError,
  ProviderTimeoutError,
  ProviderUnreachableError,
} from '../provider/provider.errors';
import type { PayinEnvelope } from '../provider/provider.types';
import type { AgentBudgetService } from '../provider/agent-budget.service';
import type { IdempotencyService } from '../idempotency/idempotency.service';
import type { MetricsService } from '../metrics/metrics.service';
import type { CallbackUrlsService } from './callback-urls.service';
import type { OrderEventsService } from './order-events.service';
import type { OrderStreams } from './order-streams';
import type { NewOrder, OrderRecord, OrderStatusEvent, SubmissionOutcome } from './order.types';
import type { CreateOrderDto } from './orders.dto';
import type { OrdersRepository } from './orders.repository';
import type { OrderListsRepository } from './order-lists.repository';
import { OrdersService } from './orders.service';
import { provesNotSent } from '../provider/provider.errors';

const alice: AuthUser = { id: 'alice', roles: ['customer'] };
const dto = {
  amount: '1500',
  currency: 'XAF',
  wallet: '237600000001',
  service: 1,
  description: 'Order #1',
  payer: 'Awa',
  payerEmail: 'awa@example.com',
} as CreateOrderDto;

/** The repository as the service sees it: the order is stored, then the provider's answer recorded (PENDING moves only). */
class FakeOrders {
  readonly stored: OrderRecord[] = [];
  readonly recorded: SubmissionOutcome[] = [];
  linkedTo: (string | undefined)[] = [];

  create(
    order: NewOrder,
    claim: { id: string } | undefined,
    _slot: unknown,
  ): Promise<{ order: OrderRecord; event: OrderStatusEvent; budgetTaken: boolean; share: BudgetShareRow }> {
    const recordId = claim?.id;
    const now = new Date();
    const row: OrderRecord = {
      ...order,
      id: `order-${this.stored.length + 1}`,
      status: 'PENDING',
      providerReference: null,
      providerTransactionReference: null,
      failureReason: null,
      needsReview: false,
      submittedAt: now,
      processingSince: null,
      createdAt: now,
      updatedAt: now,
    };
    this.stored.push(row);
    this.linkedTo.push(recordId);
    const share = { customerRefused: false, customerLimit: null, customerUsed: 0, customerFreesInMs: 0 };
    return Promise.resolve({ order: row, event: this.event(row, null, 'created'), budgetTaken: false, share });
  }

  recordSubmission(
    order: OrderRecord,
    outcome: SubmissionOutcome,
  ): Promise<{ order: OrderRecord; event?: OrderStatusEvent; answerStored: boolean }> {
    this.recorded.push(outcome);
    const row = this.stored.find((o) => o.id === order.id)!;
    Object.assign(row, {
      status: outcome.status,
      failureReason: outcome.status === 'FAILED' ? outcome.failureReason : null,
      providerReference: 'providerReference' in outcome ? (outcome.providerReference ?? null) : null,
    });
    return Promise.resolve({ order: row, event: this.event(row, 'PENDING', 'submitted'), answerStored: false });
  }

  private event(row: OrderRecord, fromStatus: OrderStatusEvent['fromStatus'], reason: string): OrderStatusEvent {
    return { orderId: row.id, changeId: '1', fromStatus, status: row.status, reason, at: new Date().toISOString() };
  }
}

function serviceAnswering(answer: () => Promise<PayinEnvelope>) {
  const orders = new FakeOrders();
  const published: OrderStatusEvent[] = [];
  const config = new ConfigService<AppConfig, true>({ currencies: { XAF: { code: 'XAF', decimals: 0, maxAmount: '1000000' } } });
  const service = new OrdersService(
    orders as unknown as OrdersRepository,
    {} as OrderListsRepository,
    { collect: answer } as unknown as PayinClient,
    { urlsFor: () => ({ successUrl: 'https://bff/s', failureUrl: 'https://bff/f' }) } as unknown as CallbackUrlsService,
    { publishLocal: (event: OrderStatusEvent) => published.push(event) } as unknown as OrderEventsService,
    {} as OrderStreams,
    config,
    pino({ level: 'silent' }),
    {} as MetricsService,
    { pendingClaim: () => ({ id: 'record-1' }), inlineAnswer: () => undefined } as unknown as IdempotencyService,
    {
      hourlyLimit: 600,
      withSlotTaken: <T>(work: () => Promise<T>) => work(),
      slotRequest: () => null,
      showShare: () => undefined,
    } as unknown as AgentBudgetService,
  );
  return { service, orders, published };
}

const rejected = () =>
  new ProviderRejectedError('payin_failure_envelope', {
    providerStatus: 400,
    providerMessage: 'Insufficient balance',
    body: { success: false, status: 'FAILURE', data: { reference: 'SP1' } },
  });

describe('OrdersService.create: the pay-in submission outcome', () => {
  it('accepted: PROCESSING with the provider references; the order was stored (and linked) before the call', async () => {
    let storedBeforeCall = false;
    const { service, orders, published } = serviceAnswering(() => {
      storedBeforeCall = orders.stored.length === 1 && orders.linkedTo[0] === 'record-1';
      return Promise.resolve({
        success: true,
        status: 'PROCESSING',
        message: 'ok',
        data: { reference: 'SP42', transaction_reference: 'TR7' },
      } as PayinEnvelope);
    });
    const order = await service.create(alice, dto);
    expect(storedBeforeCall).toBe(true);
    expect(order).toMatchObject({ status: 'PROCESSING', providerReference: 'SP42', failureReason: null });
    expect(orders.recorded).toEqual([
      { status: 'PROCESSING', providerReference: 'SP42', providerTransactionReference: 'TR7', detail: 'ok' },
    ]);
    expect(published.map((e) => e.reason)).toEqual(['created', 'submitted']);
  });

  it("rejected: FAILED with the provider's message; the order is answered (201), the key is kept", async () => {
    const { service, orders } = serviceAnswering(() => Promise.reject(rejected()));
    const order = await service.create(alice, dto);
    expect(order).toMatchObject({ status: 'FAILED', failureReason: 'Insufficient balance', providerReference: 'SP1' });
    expect(orders.recorded[0]).toMatchObject({ status: 'FAILED', failureReason: 'Insufficient balance' });
    expect(provesNotSent(rejected())).toBe(false);
  });

  it.each([
    ['a timeout', () => new ProviderTimeoutError('no answer')],
    ['a 5xx', () => new ProviderServerError('HTTP 502')],
  ])('%s: UNKNOWN, never FAILED (the money may have moved); answered, the key kept', async (_name, error) => {
    const { service, orders } = serviceAnswering(() => Promise.reject(error()));
    const order = await service.create(alice, dto);
    expect(order).toMatchObject({ status: 'UNKNOWN', failureReason: null });
    expect(orders.recorded[0].status).toBe('UNKNOWN');
    expect(provesNotSent(error())).toBe(false);
  });

  it.each([
    ['the provider unreachable', () => new ProviderUnreachableError('refused'), 'provider_unreachable'],
    ['the budget spent', () => new AgentBudgetExhaustedError(60), 'provider_budget_exhausted'],
  ])('%s: FAILED (not sent), the error thrown, and the key released', async (_name, error, code) => {
    const { service, orders } = serviceAnswering(() => Promise.reject(error()));
    const thrown = await service.create(alice, dto).catch((e: unknown) => e);
    expect(thrown).toMatchObject({ code });
    expect(orders.recorded).toEqual([
      { status: 'FAILED', failureReason: `Not sent to the payment provider (${code})`, providerReference: null },
    ]);
    expect(orders.stored[0].status).toBe('FAILED');
    // The route's @Idempotent releaseOn: a retry with the same key runs anew.
    expect(provesNotSent(thrown)).toBe(true);
  });

  it('an unexpected error after the call may have gone out: UNKNOWN, answered', async () => {
    const { service, orders } = serviceAnswering(() => Promise.reject(new TypeError('boom')));
    await expect(service.create(alice, dto)).resolves.toMatchObject({ status: 'UNKNOWN' });
    expect(orders.recorded[0]).toMatchObject({ status: 'UNKNOWN' });
    expect(provesNotSent(new TypeError('boom'))).toBe(false);
  });
});
