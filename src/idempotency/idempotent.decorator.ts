import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { ApiBadRequestResponse, ApiConflictResponse, ApiHeader, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import { IDEMPOTENCY_KEY_HEADER } from './idempotency.errors';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IDEMPOTENT_METADATA, type IdempotentOptions, type IdempotentRoute } from './idempotent-route';

export { IDEMPOTENT_METADATA, type IdempotentOptions } from './idempotent-route';

/**
 * Makes a POST safe to retry: requires the `Idempotency-Key` header, runs the handler once per
 * (user, scope, key) and replays its answer (status and body, or the problem) to every retry of
 * the same request (method, route, path parameters, body) for 24 h. `scope` names the operation
 * (e.g. 'orders.create'): the same key on another operation is another request. Needs
 * `@Auth(...)` on the route: keys are per user. A handler whose service links what it creates
 * (IdempotencyService.registerRecovery) also recovers from its own death: see IdempotencyService.
 */
export function Idempotent(scope: string, options: IdempotentOptions = {}): MethodDecorator {
  const route: IdempotentRoute = { scope, ...options };
  return applyDecorators(
    SetMetadata(IDEMPOTENT_METADATA, route),
    UseInterceptors(IdempotencyInterceptor),
    ApiHeader({
      name: IDEMPOTENCY_KEY_HEADER,
      required: true,
      description:
        'Unique per operation, 1 to 255 printable ASCII characters (a UUID is a good choice). A retry with the same key and the same request (method, route, path parameters, body) gets the first answer again (header `Idempotent-Replayed: true`); keys are kept 24 h, per user. If the first request died (crash, lost database), a retry after its lease lapses answers the resource it created as it is now, or runs anew when it created nothing.',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    }),
    ApiBadRequestResponse({
      description: '`idempotency_key_required`: no Idempotency-Key header; `validation_failed`: invalid key or body',
    }),
    ApiConflictResponse({
      description:
        '`idempotency_in_progress`: the first request with this key is still running (or holds its lease); retry after the Retry-After delay',
    }),
    ApiUnprocessableEntityResponse({
      description:
        '`idempotency_key_reused`: this key was already used with another request (another body, or another resource such as another card)',
    }),
  );
}
