import type { ListReader } from '../database/replica-reads.service';

/** The roles of the merchant API contract ("Authentication and roles"). */
export const ROLES = ['customer', 'finance', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** Roles a token gets when it carries no `roles` claim: the least privileged one. */
export const DEFAULT_ROLES: readonly Role[] = ['customer'];

/** The caller of a request, taken from a verified bearer token. */
export interface AuthUser {
  /** The JWT `sub`: the user id every owned resource is scoped to. */
  id: string;
  roles: Role[];
  /** The token's `email` claim, when it has one. */
  email?: string;
  /** The identity provider vouches for `email` (`email_verified: true`); false when it does not say so. */
  emailVerified?: boolean;
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/**
 * Literal membership: the user carries one of `roles`. Admin is deliberately not implied here, so
 * that `hasRole(user, 'customer')` can decide "scope to own resources" without catching admins.
 */
export function hasRole(user: AuthUser, ...roles: Role[]): boolean {
  return roles.some((role) => user.roles.includes(role));
}

/** Finance and admin read every user's resources; a customer only its own. */
export function canReadAll(user: AuthUser): boolean {
  return hasRole(user, 'finance', 'admin');
}

/** Who sees a resource: its owner, finance and admin. To anyone else it does not exist (404, never 403). */
export function canSee(user: AuthUser, ownerId: string): boolean {
  return canReadAll(user) || ownerId === user.id;
}

/** Who a list is read for, by the same rule: finance and admin read on the finance replica (when there is one), a customer on the primary. */
export function listReaderOf(user: AuthUser): ListReader {
  return canReadAll(user) ? 'finance' : 'customer';
}

/** The owner a list is limited to by the same rule: the caller for a customer, nobody in particular for finance and admin. */
export function visibleOwnerOf(user: AuthUser): string | undefined {
  return canReadAll(user) ? undefined : user.id;
}

/** Route access rule: no requirement means any authenticated user, and admin may do everything. */
export function satisfiesRoles(user: AuthUser, required: readonly Role[]): boolean {
  return required.length === 0 || hasRole(user, 'admin', ...required);
}
