import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DomainError, ForbiddenError, UnauthenticatedError } from '../common/domain-error';
import { satisfiesRoles, type AuthUser, type Role } from './auth.types';
import { JwtVerifier } from './jwt-verifier.service';

/** Metadata key of the roles a route requires; set by `@Auth(...roles)`. */
export const AUTH_ROLES_KEY = 'auth:roles';
/** Key of the same roles in the route's Fastify config (`request.routeOptions.config`); set by `@Auth(...roles)`. */
export const AUTH_ROUTE_CONFIG_KEY = 'authRoles';

/** The part of the (Fastify) request the guard reads and writes; kept structural on purpose. */
export interface AuthenticatedRequest {
  headers: Record<string, string | string[] | undefined>;
  /** Node's request: `rawHeaders` lists every header line as sent, duplicates included. */
  raw?: { rawHeaders?: string[] };
  user?: AuthUser;
}

export class DuplicateAuthorizationError extends DomainError {
  readonly status = 400;
  readonly code = 'duplicate_authorization_header';
  readonly title = 'More than one Authorization header';
}

/**
 * Callers authenticated by the HTTP layer's `onRequest` hook (authenticateRequest,
 * authorizeRequestSoon), before the body was read. Kept here rather than trusted from
 * `request.user`, which anything may set.
 */
const authenticatedAtEdge = new WeakMap<object, AuthUser>();

/**
 * Refuses two Authorization headers and verifies the bearer token; on success the caller is
 * remembered for the request, and AuthGuard does not verify it again.
 */
export async function authenticateRequest(verifier: JwtVerifier, request: AuthenticatedRequest & object): Promise<AuthUser> {
  refuseDuplicateAuthorization(request);
  const user = await verifier.verify(readBearerToken(request.headers.authorization));
  authenticatedAtEdge.set(request, user);
  return user;
}

/**
 * The HTTP layer's `onRequest` check of an `@Auth` route (its roles from the route config):
 * authenticates, then checks the roles, so that a client without a valid token or role is answered
 * 401 or 403 before its body is read (a stalled or large body costs it nothing then).
 */
export async function authorizeRequest(
  verifier: JwtVerifier,
  request: AuthenticatedRequest & object,
  required: readonly Role[],
): Promise<void> {
  refuseMissingRoles(await authenticateRequest(verifier, request), required);
}

/**
 * authorizeRequest without a promise when the bearer was verified lately (JwtVerifier.remembered),
 * as it is for a client that sends its token again: undefined once the caller is authenticated and
 * authorised, a promise when the token must be verified first. A refusal is thrown, or is that
 * promise's rejection; the checks and their order are authorizeRequest's.
 */
export function authorizeRequestSoon(
  verifier: JwtVerifier,
  request: AuthenticatedRequest & object,
  required: readonly Role[],
): Promise<void> | undefined {
  refuseDuplicateAuthorization(request);
  const token = readBearerToken(request.headers.authorization);
  const user = token === undefined ? undefined : verifier.remembered(token);
  if (!user) return authorizeRequest(verifier, request, required);
  authenticatedAtEdge.set(request, user);
  refuseMissingRoles(user, required);
  return undefined;
}

function refuseMissingRoles(user: AuthUser, required: readonly Role[]): void {
  if (!satisfiesRoles(user, required)) throw new ForbiddenError(`This operation requires one of the roles: ${required.join(', ')}`);
}

/**
 * Attaches the caller as `request.user` (authenticated by the HTTP layer, or here when the
 * request did not pass through it), then enforces the route's roles. Used through `@Auth(...)`,
 * never alone, so that Swagger shows the security too.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly verifier: JwtVerifier,
  ) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const user = authenticatedAtEdge.get(request);
    // Authenticated at the edge (every request that came over HTTP): no promise to wait for.
    if (user) return this.admit(request, user, context);
    return authenticateRequest(this.verifier, request).then((verified) => this.admit(request, verified, context));
  }

  private admit(request: AuthenticatedRequest, user: AuthUser, context: ExecutionContext): boolean {
    request.user = user;
    const required = this.reflector.getAllAndOverride<Role[] | undefined>(AUTH_ROLES_KEY, [context.getHandler(), context.getClass()]) ?? [];
    refuseMissingRoles(user, required);
    return true;
  }
}

/**
 * Two Authorization headers are ambiguous: refuse rather than pick one. Node keeps only the first
 * in `headers` (it discards duplicates of this header), so the raw header lines are what tell.
 */
const AUTHORIZATION = 'authorization';

function refuseDuplicateAuthorization(request: AuthenticatedRequest): void {
  const rawHeaders = request.raw?.rawHeaders ?? [];
  let count = Array.isArray(request.headers.authorization) ? request.headers.authorization.length : 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    // Only a name of the right length is lower-cased (most are not).
    if (rawHeaders[i].length === AUTHORIZATION.length && rawHeaders[i].toLowerCase() === AUTHORIZATION) count++;
  }
  if (count > 1) throw new DuplicateAuthorizationError('Send exactly one Authorization header.');
}

function readBearerToken(header: string | string[] | undefined): string | undefined {
  if (Array.isArray(header)) throw new DuplicateAuthorizationError('Send exactly one Authorization header.');
  if (header === undefined || header.trim() === '') return undefined;
  const match = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(header);
  if (!match) throw new UnauthenticatedError('The Authorization header must be "Bearer <token>"');
  return match[1];
}
