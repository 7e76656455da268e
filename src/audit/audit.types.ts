/** Domain shapes of the audit trail; Prisma's types stay inside the repository. */

/** What people did that the trail keeps: every manual decision, every distribution, every export. */
export const AUDIT_ACTIONS = [
  'order.resolved',
  'order.review_cleared',
  'card_operation.resolved',
  'distribution.resolved',
  'distribution.created',
  'orders.exported',
  'webhook_endpoint.created',
  'webhook_endpoint.updated',
  'webhook_endpoint.deleted',
  'webhook_endpoint.secret_rotated',
  'event.redelivered',
  'customer.erased',
  'customer_limit.set',
  'customer_limit.cleared',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AUDIT_RESOURCE_TYPES = [
  'order',
  'card_operation',
  'distribution',
  'orders_export',
  'webhook_endpoint',
  'event',
  'customer',
] as const;
export type AuditResourceType = (typeof AUDIT_RESOURCE_TYPES)[number];

export interface NewAuditEvent {
  /** The token's `sub` of whoever acted. */
  actor: string;
  action: AuditAction;
  resourceType: AuditResourceType;
  /** The resource acted on; null for an export, which concerns a filtered set. */
  resourceId: string | null;
  requestId: string | null;
  note: string | null;
  /** What else the action needs to be understood: the statuses of a decision, the filters of an export. */
  details: Record<string, unknown> | null;
}

export interface AuditEventRecord extends NewAuditEvent {
  id: string;
  at: Date;
}

export interface AuditFilter {
  actor?: string;
  action?: AuditAction;
  resourceId?: string;
  from?: Date;
  to?: Date;
}
