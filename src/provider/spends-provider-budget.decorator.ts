import {
  applyDecorators,
  Injectable,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Observable } from 'rxjs';
import type { AuthenticatedRequest } from '../auth/auth.guard';
import { canReadAll, type AuthUser } from '../auth/auth.types';
import { customerShareScope } from './customer-share';

/** Response headers as OpenAPI documents them. */
type DocumentedHeaders = Record<string, { description: string; schema: { type: 'string' | 'integer'; example?: string } }>;

/** The reply the interceptor writes the share on (Fastify's, structurally). */
interface ShareReply {
  header(name: string, value: string): unknown;
}

/**
 * The customer a request is counted for: its token's `sub` when the token is a customer's only.
 * A finance or admin token acts for the merchant (it may link any email, distribute): its calls
 * count against the merchant-wide budget alone, like the service's own background jobs.
 */
export function countedCustomerOf(user: AuthUser | undefined): string | null {
  return user && !canReadAll(user) ? user.id : null;
}

/**
 * Runs the handler with its customer in scope (customerShareScope), so that every provider call
 * it causes takes a slot of that customer's share, and the share comes back on the reply.
 */
@Injectable()
export class CustomerShareInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const customer = countedCustomerOf(http.getRequest<AuthenticatedRequest>().user);
    if (customer === null) return next.handle();
    const reply = http.getResponse<ShareReply>();
    const sink = {
      customer,
      write: (headers: Record<string, string>) => {
        for (const [name, value] of Object.entries(headers)) reply.header(name, value);
      },
    };
    // next.handle() binds the handler to the context it is called in: both run inside the scope.
    return new Observable((subscriber) => customerShareScope.run(sink, () => next.handle().subscribe(subscriber)));
  }
}

/** The RateLimit fields, as OpenAPI documents them on a response of a route that spends the budget. */
export const CUSTOMER_SHARE_HEADERS: DocumentedHeaders = {
  'RateLimit-Policy': {
    description:
      'The customer’s share of the provider budget (customer tokens only): `"customer";q=<calls per hour>;w=3600` (IETF draft-ietf-httpapi-ratelimit-headers)',
    schema: { type: 'string', example: '"customer";q=30;w=3600' },
  },
  RateLimit: {
    description:
      'What is left of that share: `"customer";r=<calls left>;t=<seconds until the oldest counted call leaves the rolling hour>` (customer tokens only)',
    schema: { type: 'string', example: '"customer";r=12;t=1800' },
  },
};

/** Retry-After with the RateLimit fields, on a 429 of such a route. */
export const CUSTOMER_REFUSAL_HEADERS: DocumentedHeaders = {
  'Retry-After': {
    description: 'Seconds until a call fits again (the customer’s share or the merchant-wide budget)',
    schema: { type: 'integer' },
  },
  ...CUSTOMER_SHARE_HEADERS,
};

/**
 * Marks a route whose provider calls to /api/agent/* are counted against the caller's share when
 * the caller is a customer (countedCustomerOf), and answered with that share (RateLimit fields).
 */
export function SpendsProviderBudget(): MethodDecorator {
  return applyDecorators(UseInterceptors(CustomerShareInterceptor));
}
