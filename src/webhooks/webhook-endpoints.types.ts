/** Domain shapes of the webhook endpoints; Prisma's types stay inside the repository. */

import { EVENT_TYPES, type EventType } from './event-body';

/** Every event type an endpoint may subscribe to (`events`): the event types the triggers write. */
export const WEBHOOK_EVENT_TYPES = EVENT_TYPES;
export type WebhookEventType = EventType;

/** The database enum WebhookEndpointStatus, value for value (proven in the repository). */
export const WEBHOOK_ENDPOINT_STATUSES = ['ENABLED', 'DISABLED'] as const;
export type WebhookEndpointStatus = (typeof WEBHOOK_ENDPOINT_STATUSES)[number];

/** How long the previous secret keeps signing after a rotation (database clock). */
export const PREVIOUS_SECRET_LIFETIME_HOURS = 24;

/** An endpoint as the API shows it: never its secrets, not even sealed. */
export interface WebhookEndpointRecord {
  id: string;
  url: string;
  /** The subscribed event types; empty: every type, those added later included. */
  events: string[];
  description: string | null;
  status: WebhookEndpointStatus;
  disabledReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** What a delivery needs of an endpoint: where, whether, and the sealed secrets that sign now. */
export interface WebhookEndpointSealedSecrets {
  id: string;
  url: string;
  status: WebhookEndpointStatus;
  /** `SecretBox` text of the current secret. */
  secretEncrypted: string;
  /** `SecretBox` text of the previous secret while it still signs (`previous_secret_until > now()`), else null. */
  previousSecretEncrypted: string | null;
}

/** The same with the secrets opened: the current one first, then the previous one while it signs. */
export interface WebhookSigningTarget {
  id: string;
  url: string;
  status: WebhookEndpointStatus;
  secrets: string[];
}

/** What a PATCH changes; an absent member is left as it is (`description: null` clears it). */
export interface WebhookEndpointChange {
  url?: string;
  events?: string[];
  description?: string | null;
  status?: WebhookEndpointStatus;
}

/** Associated data of a sealed secret: binds the ciphertext to its endpoint (no swapping between rows). */
export function webhookSecretPurpose(endpointId: string): string {
  return `webhook-endpoint-secret:${endpointId}`;
}
