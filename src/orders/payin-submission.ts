import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { AuthUser } from '../auth/auth.types';
import { ValidationFailedError } from '../common/domain-error';
import { MoneyError } from '../common/money';
import { validateAmountForCurrency } from '../common/money.validator';
import type { AppConfig } from '../config/app-config';
import type { IdempotencyService } from '../idempotency/idempotency.service';
import { jsonTextAround } from '../idempotency/json-text-around';
import type { AgentBudgetService } from '../provider/agent-budget.service';
import type { PayinClient } from '../provider/clients/payin.client';
import type { PayinEnvelope } from '../provider/provider.types';
import { operationLink } from '../provider-operations/operation-recovery';
import { runProviderOperation, type FailureRecord, type ProviderOperationType } from '../provider-operations/provider-operation';
import type { CallbackUrlsService } from './callback-urls.service';
import type { OrderEventsService } from './order-events.service';
import { toOrderDto } from './order-mappers';
import type { NewOrder, OrderRecord, SubmissionOutcome } from './order.types';
import type { CreateOrderDto, OrderDto } from './orders.dto';
import { type OrdersRepository, submittedOrder } from './orders.repository';
import { ORDER_RESOURCE, PAYIN_ORDERS_TABLE } from './payin-orders.table';

/** What a pay-in asks: the order to store, and what the provider call needs besides. */
interface PayinOrderInput {
  order: NewOrder;
  /** The amount as the provider's JSON number (exact: checked before anything is stored). */
  providerAmount: number;
  otp?: string;
}

/** A stored order, as the lifecycle carries it between its steps. */
interface StoredOrder {
  id: string;
  order: OrderRecord;
  /** Whether the store statement took the pay-in's slot of the /api/agent budget. */
  budgetTaken: boolean;
}

/** What a pay-in submission works with (OrdersService's, which builds it). */
export interface PayinSubmissionDeps {
  orders: OrdersRepository;
  payin: PayinClient;
  callbackUrls: CallbackUrlsService;
  events: OrderEventsService;
  idempotency: IdempotencyService;
  budget: AgentBudgetService;
  currencies: AppConfig['currencies'];
  log: Logger;
}

/**
 * `POST /v1/orders`: a pay-in order as an operation on the provider (the lifecycle of
 * src/provider-operations, its outcome map declared with PAYIN_ORDERS_TABLE). Two round trips: the
 * order with its key's claim and budget slots before the call, its outcome (with the idempotent
 * answer) after.
 */
export class PayinSubmission {
  private readonly type: ProviderOperationType<StoredOrder, PayinOrderInput, OrderDto, 'FAILED' | 'UNKNOWN'>;

  constructor(private readonly deps: PayinSubmissionDeps) {
    this.type = {
      name: 'pay-in order',
      table: PAYIN_ORDERS_TABLE,
      log: deps.log,
      describe: (stored) => ({ orderId: stored.id }),
      // One round trip: the order, its history entry and event, the request's key claim linked to it, the budget slots.
      store: async (input, link) => {
        const created = await deps.orders.create(input.order, link?.claim, deps.budget.slotRequest());
        deps.budget.showShare(created.share);
        deps.events.publishLocal(created.event);
        return { id: created.order.id, order: created.order, budgetTaken: created.budgetTaken };
      },
      // When nothing was sent the error is the answer: no idempotent answer is stored with the outcome.
      recordFailure: (stored, outcome, failure) => this.recordSubmission(stored, submissionOutcomeOf(outcome), failure.kind !== 'not_sent'),
      answerFailure: (recorded, failure) => {
        if (failure.kind === 'not_sent') throw failure.error;
        return this.answerOf(recorded);
      },
    };
  }

  /**
   * Stores the order, then asks the provider. The provider's answer decides PROCESSING, FAILED
   * (a refusal) or UNKNOWN (timeout, 5xx, lost or unreadable answer: the money may have moved,
   * so the order is never resubmitted under a new reference). An error proving the request was
   * never sent (budget spent, provider unreachable, our credentials refused) fails the order and
   * is returned to the caller as that error; a customer's spent share stores no order at all.
   */
  async create(user: AuthUser, dto: CreateOrderDto): Promise<OrderDto> {
    const checked = validateAmountForCurrency(dto.amount, dto.currency, this.deps.currencies);
    if ('errors' in checked) throw new ValidationFailedError(checked.errors);
    let providerAmount: number;
    try {
      providerAmount = checked.money.toProviderNumber();
    } catch (error) {
      if (error instanceof MoneyError)
        throw new ValidationFailedError([{ field: 'amount', message: 'amount cannot be sent to the provider exactly' }]);
      throw error;
    }

    const input: PayinOrderInput = {
      order: {
        reference: `ord_${randomUUID().replace(/-/g, '')}`,
        customerId: user.id,
        amount: checked.money.toString(),
        currency: dto.currency,
        service: dto.service,
        wallet: dto.wallet,
        description: dto.description,
        payer: dto.payer,
        payerEmail: dto.payerEmail,
      },
      providerAmount,
      otp: dto.otp,
    };
    return runProviderOperation(this.type, {
      input,
      link: operationLink(this.deps.idempotency, PAYIN_ORDERS_TABLE, ORDER_RESOURCE),
      call: (stored) => {
        const collect = () =>
          this.deps.payin.collect(
            {
              wallet: stored.order.wallet,
              amount: input.providerAmount,
              currency: stored.order.currency,
              order_id: stored.order.reference,
              description: stored.order.description,
              payer: stored.order.payer,
              payerEmail: stored.order.payerEmail,
              ...this.deps.callbackUrls.urlsFor(stored.id),
            },
            { service: stored.order.service, ...(input.otp ? { otp: input.otp } : {}) },
          );
        return stored.budgetTaken ? this.deps.budget.withSlotTaken(collect) : collect();
      },
      record: async (stored, envelope) => this.answerOf(await this.recordSubmission(stored, acceptedOutcome(envelope), true)),
    });
  }

  /**
   * One round trip: the outcome, its history entry and event, and (`answerInline`) the request's
   * idempotent answer, which is the order as this write leaves it.
   */
  private async recordSubmission(stored: StoredOrder, outcome: SubmissionOutcome, answerInline: boolean): Promise<StoredOrder> {
    const { idempotency, orders, events } = this.deps;
    const inline = answerInline ? idempotency.inlineAnswer() : undefined;
    const expected = inline && jsonTextAround(this.toDto(submittedOrder(stored.order, outcome)), 'updatedAt');
    const recorded = await orders.recordSubmission(
      stored.order,
      outcome,
      inline && expected && { ...inline, textBeforeUpdatedAt: expected.before, textAfterUpdatedAt: expected.after },
    );
    events.publishLocal(recorded.event);
    if (recorded.answerStored) idempotency.answerStoredInline();
    return { ...stored, order: recorded.order };
  }

  private answerOf(stored: StoredOrder): OrderDto {
    return this.toDto(stored.order);
  }

  private toDto(order: OrderRecord): OrderDto {
    return toOrderDto(order, this.deps.currencies);
  }
}

function acceptedOutcome(envelope: PayinEnvelope): SubmissionOutcome {
  if (envelope?.success === true && envelope.status === 'PROCESSING' && typeof envelope.data?.reference === 'string') {
    return {
      status: 'PROCESSING',
      providerReference: envelope.data.reference,
      providerTransactionReference: envelope.data.transaction_reference ?? null,
      detail: envelope.message ?? 'Accepted by the provider',
    };
  }
  // A success status we do not recognise: the provider may be processing it.
  return { status: 'UNKNOWN', detail: `Unrecognised provider answer (status ${String(envelope?.status)})` };
}

/** A failure as the orders' statements write it: an UNKNOWN order keeps its reason as the history's detail. */
function submissionOutcomeOf(outcome: FailureRecord<'FAILED' | 'UNKNOWN'>): SubmissionOutcome {
  return outcome.status === 'UNKNOWN'
    ? { status: 'UNKNOWN', detail: outcome.failureReason }
    : { status: 'FAILED', failureReason: outcome.failureReason, providerReference: outcome.providerReference };
}
