import { formatStoredAmount } from '../common/money';
import type { AppConfig } from '../config/app-config';
import type { OrderRecord } from './order.types';
import type { OrderDto } from './orders.dto';

/** What the answer of an order is made from: a record, or a list row whose times are already ISO text (OrderListRow). */
export type OrderDtoSource = Omit<OrderRecord, 'customerId' | 'submittedAt' | 'processingSince' | 'createdAt' | 'updatedAt'> & {
  createdAt: Date | string;
  updatedAt: Date | string;
};

/** An order as the API answers it (GET /v1/orders/{id}, the lists, the webhook events). */
export function toOrderDto(order: OrderDtoSource, currencies: AppConfig['currencies']): OrderDto {
  return {
    id: order.id,
    reference: order.reference,
    status: order.status,
    amount: formatStoredAmount(order.amount, order.currency, currencies),
    currency: order.currency,
    service: order.service,
    wallet: order.wallet,
    description: order.description,
    payer: order.payer,
    payerEmail: order.payerEmail,
    providerReference: order.providerReference,
    providerTransactionReference: order.providerTransactionReference,
    failureReason: order.failureReason,
    needsReview: order.needsReview,
    createdAt: isoText(order.createdAt),
    updatedAt: isoText(order.updatedAt),
  };
}

/** A time of a row: a Date, or already ISO text when PostgreSQL wrote it (lists). */
function isoText(time: Date | string): string {
  return typeof time === 'string' ? time : time.toISOString();
}
