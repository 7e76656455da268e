/** Domain shapes of the events and their deliveries as the events API reads them; Prisma's types stay inside the repository. */
import type { StoredEvent } from './event-body';

/** The database enum WebhookDeliveryStatus, value for value (proven in events.repository.ts). */
export const WEBHOOK_DELIVERY_STATUSES = ['PENDING', 'DELIVERED', 'FAILED'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** An event as stored, with what its lists and detail show of it. */
export interface EventRecord extends StoredEvent {
  resourceId: string;
}

/** One attempt of a delivery: what was answered (its first 1 KiB), how long it took, what failed. */
export interface WebhookAttemptRecord {
  /** ISO 8601, as PostgreSQL wrote it in the format of Date#toISOString. */
  at: string;
  httpStatus: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string | null;
}

/** One delivery of an event to one endpoint, with its attempts, oldest first. */
export interface WebhookDeliveryRecord {
  id: string;
  endpointId: string;
  endpointUrl: string;
  status: WebhookDeliveryStatus;
  attemptCount: number;
  /** ISO 8601 (format of Date#toISOString). */
  nextAttemptAt: string;
  createdAt: string;
  completedAt: string | null;
  attempts: WebhookAttemptRecord[];
}

export interface EventDetailRecord {
  event: EventRecord;
  deliveries: WebhookDeliveryRecord[];
}

export interface EventFilter {
  type?: string;
  resourceId?: string;
  from?: Date;
  to?: Date;
}

/** What a redelivery found: the event and the endpoint asked for must exist, the endpoint be enabled. */
export type RedeliveryResult =
  | { kind: 'redelivered'; deliveries: WebhookDeliveryRecord[] }
  | { kind: 'no_event' }
  | { kind: 'no_endpoint' }
  | { kind: 'endpoint_disabled' };
