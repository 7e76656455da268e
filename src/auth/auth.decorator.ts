import { applyDecorators, createParamDecorator, SetMetadata, UseGuards, type ExecutionContext } from '@nestjs/common';
import { ApiBearerAuth, ApiForbiddenResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { UnauthenticatedError } from '../common/domain-error';
import { AUTH_ROLES_KEY, AuthGuard, type AuthenticatedRequest } from './auth.guard';
import type { AuthUser, Role } from './auth.types';

/** Name of the security scheme; main.ts registers it with `addBearerAuth(..., 'bearer')`. */
export const BEARER_SECURITY_NAME = 'bearer';

/**
 * Requires a valid bearer token and, when roles are given, one of them (admin passes every
 * requirement). No roles: any authenticated user. Works on a controller or a handler; the
 * handler's roles win over the controller's.
 */
export function Auth(...roles: Role[]): MethodDecorator & ClassDecorator {
  const decorators = [
    SetMetadata(AUTH_ROLES_KEY, roles),
    UseGuards(AuthGuard),
    ApiBearerAuth(BEARER_SECURITY_NAME),
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
