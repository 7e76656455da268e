import { applyDecorators, createParamDecorator, SetMetadata, UseGuards, type ExecutionContext } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiBearerAuth, ApiExtension, ApiForbiddenResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { UnauthenticatedError } from '../common/domain-error';
import { AUTH_ROLES_KEY, AUTH_ROUTE_CONFIG_KEY, AuthGuard, type AuthenticatedRequest } from './auth.guard';
import { ROLES, satisfiesRoles, type AuthUser, type Role } from './auth.types';

/** Name of the security scheme; main.ts registers it with `addBearerAuth(..., 'bearer')`. */
export const BEARER_SECURITY_NAME = 'bearer';

/**
 * The OpenAPI extension that lists, on every `@Auth` operation, the roles whose token it accepts
 * (admin always among them). The documents are derived from it: `/docs/finance` holds the operations
 * that list `finance`, and `/docs` marks those that list only `admin`.
 */
export const ALLOWED_ROLES_EXTENSION = 'x-allowed-roles';

/** The roles a route with `@Auth(...required)` lets through, by the rule the guard applies. */
export function rolesAllowedBy(required: readonly Role[]): Role[] {
  return ROLES.filter((role) => satisfiesRoles({ id: role, roles: [role] }, required));
}

/**
 * Requires a valid bearer token and, when roles are given, one of them (admin passes every
 * requirement). No roles: any authenticated user. Works on a controller or a handler; the
 * handler's roles win over the controller's.
 *
 * The roles are also put in each handler's Fastify route config (AUTH_ROUTE_CONFIG_KEY), where
 * the HTTP layer reads them to authenticate and authorise in `onRequest`, before the body is read.
 */
export function Auth(...roles: Role[]): MethodDecorator & ClassDecorator {
  const documented = guardedAndDocumented(roles);
  const routeConfig = RouteConfig({ [AUTH_ROUTE_CONFIG_KEY]: roles });
  return ((target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (key !== undefined && descriptor) {
      documented(target, key, descriptor);
      routeConfig(target, key, descriptor);
      return descriptor;
    }
    documented(target as () => unknown);
    // Member decorators run before the class's: a handler with an @Auth of its own already has its roles.
    const prototype = (target as { prototype: object }).prototype;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const method = Object.getOwnPropertyDescriptor(prototype, name);
      const handler: unknown = method?.value;
      if (name === 'constructor' || typeof handler !== 'function') continue;
      if (Reflect.getMetadata(AUTH_ROLES_KEY, handler) === undefined) routeConfig(prototype, name, method!);
    }
  }) as MethodDecorator & ClassDecorator;
}

function guardedAndDocumented(roles: Role[]) {
  const decorators = [
    SetMetadata(AUTH_ROLES_KEY, roles),
    UseGuards(AuthGuard),
    ApiBearerAuth(BEARER_SECURITY_NAME),
    ApiExtension(ALLOWED_ROLES_EXTENSION, rolesAllowedBy(roles)),
    ApiUnauthorizedResponse({ description: 'Missing, invalid or expired bearer token' }),
  ];
  if (roles.length > 0) {
    decorators.push(ApiForbiddenResponse({ description: `Requires one of the roles: ${[...new Set([...roles, 'admin'])].join(', ')}` }));
  }
  return applyDecorators(...decorators);
}

/** The authenticated caller of an `@Auth(...)` route. */
export const CurrentUser = createParamDecorator((_data: unknown, context: ExecutionContext): AuthUser => {
  const user = context.switchToHttp().getRequest<AuthenticatedRequest>().user;
  // Only reachable on a route that forgot @Auth: fail closed instead of handing out undefined.
  if (!user) throw new UnauthenticatedError('Missing bearer token');
  return user;
});
