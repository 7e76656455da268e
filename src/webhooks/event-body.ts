import type { AppConfig } from '../config/app-config';
import { toOperationDto } from '../cards/card-mappers';
import { CARD_OPERATION_KINDS, CARD_OPERATION_STATUSES } from '../cards/card.types';
import { toDistributionDto } from '../distributions/distribution-mappers';
import { DISTRIBUTION_KINDS, DISTRIBUTION_STATUSES, type ShareRecord } from '../distributions/distribution.types';
import { toOrderDto } from '../orders/order-mappers';
import { ORDER_STATUSES } from '../orders/order.types';

/**
 * An event as the events table holds it. `snapshot` is the row right after the change, snake_case,
 * every number as its exact text (the trigger's `to_jsonb(NEW)`); for a distribution it also carries
 * `shares` (its distribution_shares rows, the same way), which the statements that read events add
 * (events.repository.ts, `eventSnapshotSql`): a distribution's shares are rows of their own.
 */
export interface StoredEvent {
  id: string;
  type: string;
  resourceType: string;
  previousStatus: string | null;
  snapshot: unknown;
  createdAt: Date;
}

/** The resource types the triggers write events for. */
export const EVENT_RESOURCE_TYPES = ['order', 'card_operation', 'distribution'] as const;
export type EventResourceType = (typeof EVENT_RESOURCE_TYPES)[number];

/** Every event type of the contract (docs/api/events-and-webhooks.md). */
export const EVENT_TYPES = [
  'order.processing',
  'order.succeeded',
  'order.failed',
  'order.unknown',
  'order.expired',
  'order.review_needed',
  'card_operation.succeeded',
  'card_operation.failed',
  'card_operation.unknown',
  'distribution.accepted',
  'distribution.rejected',
  'distribution.unknown',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** A stored event that cannot be shown as the contract says: corrupt data, never guessed around. */
export class EventSnapshotError extends Error {
  constructor(eventId: string, problem: string) {
    super(`Event ${eventId}: ${problem}`);
    this.name = 'EventSnapshotError';
  }
}

/** The event's `data`: the resource as its GET answers it right after the transition, plus `previousStatus`. */
export function eventData(event: StoredEvent, currencies: AppConfig['currencies']): Record<string, unknown> {
  const row = new SnapshotReader(event.id, event.snapshot);
  return { ...resourceOf(event, row, currencies), previousStatus: event.previousStatus };
}

/** The JSON text delivered to webhook endpoints (and answered by GET /v1/events/{id}): `{ id, type, timestamp, data }`. */
export function renderEventBody(event: StoredEvent, currencies: AppConfig['currencies']): string {
  return JSON.stringify({ id: event.id, type: event.type, timestamp: event.createdAt.toISOString(), data: eventData(event, currencies) });
}

function resourceOf(event: StoredEvent, row: SnapshotReader, currencies: AppConfig['currencies']): object {
  switch (event.resourceType) {
    case 'order':
      return toOrderDto(
        {
          id: row.text('id'),
          reference: row.text('reference'),
          status: row.oneOf('status', ORDER_STATUSES),
          amount: row.decimal('amount'),
          currency: row.text('currency'),
          service: row.integer('service'),
          wallet: row.text('wallet'),
          description: row.text('description'),
          payer: row.text('payer'),
          payerEmail: row.text('payer_email'),
          providerReference: row.textOrNull('provider_reference'),
          providerTransactionReference: row.textOrNull('provider_transaction_reference'),
          failureReason: row.textOrNull('failure_reason'),
          needsReview: row.boolean('needs_review'),
          createdAt: row.time('created_at'),
          updatedAt: row.time('updated_at'),
        },
        currencies,
      );
    case 'card_operation':
      return toOperationDto(
        {
          id: row.text('id'),
          cardUserId: row.text('card_user_id'),
          cardId: row.textOrNull('card_id'),
          requestedBy: row.text('requested_by'),
          kind: row.oneOf('kind', CARD_OPERATION_KINDS),
          amount: row.decimalOrNull('amount'),
          currency: row.textOrNull('currency'),
          status: row.oneOf('status', CARD_OPERATION_STATUSES),
          providerTransactionId: row.textOrNull('provider_transaction_id'),
          newBalance: row.decimalOrNull('new_balance'),
          failureReason: row.textOrNull('failure_reason'),
          createdAt: row.time('created_at'),
          completedAt: row.timeOrNull('completed_at'),
        },
        currencies,
      );
    case 'distribution':
      return toDistributionDto(
        {
          id: row.text('id'),
          kind: row.oneOf('kind', DISTRIBUTION_KINDS),
          createdBy: row.text('created_by'),
          paymentReceiver: row.textOrNull('payment_receiver'),
          paymentId: row.textOrNull('payment_id'),
          payer: row.textOrNull('payer'),
          amount: row.decimal('amount'),
          currency: row.text('currency'),
          status: row.oneOf('status', DISTRIBUTION_STATUSES),
          providerMessage: row.textOrNull('provider_message'),
          failureReason: row.textOrNull('failure_reason'),
          receiverShareMinor: row.bigintOrNull('receiver_share_minor'),
          createdAt: row.time('created_at'),
          completedAt: row.timeOrNull('completed_at'),
          shares: row.list('shares').map((share): ShareRecord => ({
            position: share.integer('position'),
            matricule: share.text('matricule'),
            rate: share.decimal('rate'),
            shareMinor: share.bigint('share_minor'),
          })),
        },
        currencies,
      );
    default:
      throw new EventSnapshotError(event.id, `unknown resource type ${JSON.stringify(event.resourceType)}`);
  }
}

const DECIMAL = /^-?\d+(\.\d+)?$/;
const INTEGER = /^-?\d+$/;

/** Reads a snapshot's fields, each checked for its type: an unreadable snapshot throws. */
class SnapshotReader {
  private readonly fields: Record<string, unknown>;

  constructor(
    private readonly eventId: string,
    value: unknown,
    private readonly path = 'snapshot',
  ) {
    if (!isRecord(value)) throw new EventSnapshotError(eventId, `${path} is not an object`);
    this.fields = value;
  }

  text(key: string): string {
    const value = this.fields[key];
    if (typeof value !== 'string') throw this.unreadable(key, 'a string');
    return value;
  }

  textOrNull(key: string): string | null {
    return this.fields[key] === null ? null : this.text(key);
  }

  boolean(key: string): boolean {
    const value = this.fields[key];
    if (typeof value !== 'boolean') throw this.unreadable(key, 'a boolean');
    return value;
  }

  oneOf<T extends string>(key: string, values: readonly T[]): T {
    const value = this.fields[key];
    const found = values.find((allowed) => allowed === value);
    if (found === undefined) throw this.unreadable(key, `one of ${values.join(', ')}`);
    return found;
  }

  /** A number the trigger wrote as its exact text. */
  decimal(key: string): string {
    const value = this.fields[key];
    if (typeof value !== 'string' || !DECIMAL.test(value)) throw this.unreadable(key, 'a decimal as text');
    return value;
  }

  decimalOrNull(key: string): string | null {
    return this.fields[key] === null ? null : this.decimal(key);
  }

  integer(key: string): number {
    const value = this.fields[key];
    const number = typeof value === 'string' && INTEGER.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(number)) throw this.unreadable(key, 'an integer as text');
    return number;
  }

  bigint(key: string): bigint {
    const value = this.fields[key];
    if (typeof value !== 'string' || !INTEGER.test(value)) throw this.unreadable(key, 'an integer as text');
    return BigInt(value);
  }

  bigintOrNull(key: string): bigint | null {
    return this.fields[key] === null ? null : this.bigint(key);
  }

  time(key: string): Date {
    const value = this.fields[key];
    const time = typeof value === 'string' ? new Date(value) : undefined;
    if (!time || Number.isNaN(time.getTime())) throw this.unreadable(key, 'a time');
    return time;
  }

  timeOrNull(key: string): Date | null {
    return this.fields[key] === null ? null : this.time(key);
  }

  list(key: string): SnapshotReader[] {
    const value = this.fields[key];
    if (!Array.isArray(value)) throw this.unreadable(key, 'a list');
    return value.map((entry: unknown, i) => new SnapshotReader(this.eventId, entry, `${this.path}.${key}[${i}]`));
  }

  private unreadable(key: string, expected: string): EventSnapshotError {
    const found = key in this.fields ? typeof this.fields[key] : 'missing';
    return new EventSnapshotError(this.eventId, `${this.path}.${key} is not ${expected} (${found})`);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
