import { DEFAULT_ROLES, isRole, type Role } from './auth.types';

/**
 * The value at a dotted claim path (AUTH_ROLES_CLAIM): `roles` (Entra ID), `realm_access.roles`
 * (Keycloak). Each step must be an object's own property; anything else (a missing step, a list or
 * a text on the way) is absent. Own properties only, so `__proto__` or `constructor` read nothing.
 */
export function claimAtPath(payload: Readonly<Record<string, unknown>>, path: string): unknown {
  let value: unknown = payload;
  for (const name of path.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, name)) return undefined;
    value = (value as Record<string, unknown>)[name];
  }
  return value;
}

/**
 * What to do with a role name the service does not know: `refuse` the token (its own tokens: a
 * misspelt "admn" is a mistake to surface, not to drop) or `ignore` the name (an identity
 * provider's list also holds other applications' roles: Keycloak's `offline_access`,
 * `default-roles-<realm>`).
 */
export type UnknownRoles = 'refuse' | 'ignore';

/**
 * The caller's roles read at `path`. Absent, null or an empty list (or, when ignoring unknown
 * names, no known name at all): the least privileged role. Undefined when the claim is malformed
 * (not a list of texts, or an unknown name that is refused): the token is refused then.
 */
export function rolesAt(payload: Readonly<Record<string, unknown>>, path: string, unknown: UnknownRoles): Role[] | undefined {
  const claim = claimAtPath(payload, path);
  if (claim === undefined || claim === null) return [...DEFAULT_ROLES];
  if (!Array.isArray(claim) || !claim.every((name) => typeof name === 'string')) return undefined;
  if (unknown === 'refuse' && !claim.every(isRole)) return undefined;
  const roles = [...new Set(claim.filter(isRole))];
  return roles.length ? roles : [...DEFAULT_ROLES];
}
