import { Inject, Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { HTTP_CODE_METADATA } from '@nestjs/common/constants';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { defer, lastValueFrom, of, type Observable } from 'rxjs';
import type { AuthUser } from '../auth/auth.types';
import { UnauthenticatedError, ValidationFailedError } from '../common/domain-error';
import { ProblemDetailsFilter, type ProblemDetails } from '../http/problem-details.filter';
import { APP_LOGGER } from '../logging/logging.module';
import { IDEMPOTENT_REPLAYED_HEADER, IdempotencyInProgressError, ReplayedProblemError } from './idempotency.errors';
import type { IdempotencyRecord } from './idempotency.repository';
import { IdempotencyService, parseIdempotencyKey } from './idempotency.service';
import { IDEMPOTENT_METADATA, type IdempotentRoute } from './idempotent-route';

/**
 * The HTTP side of `@Idempotent(scope)`. Runs after the guard (the caller is known) and before
 * the pipes: the hash covers the body as the client sent it, and a validation failure surfaces
 * here as an error of the handler call, which frees the key.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private readonly logger: Logger;
  // The very translation the global filter applies, so a stored error answer is the one the client got.
  private readonly problems: ProblemDetailsFilter;

  constructor(
    private readonly idempotency: IdempotencyService,
    private readonly reflector: Reflector,
    @Inject(APP_LOGGER) logger: Logger,
  ) {
    this.logger = logger.child({ component: 'idempotency' });
    this.problems = new ProblemDetailsFilter(logger);
  }

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const route = this.reflector.get<IdempotentRoute | undefined>(IDEMPOTENT_METADATA, context.getHandler());
    if (!route) throw new Error('IdempotencyInterceptor is applied through @Idempotent(scope) only');
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest & { user?: AuthUser }>();
    const reply = http.getResponse<FastifyReply>();
    // Fail closed on a route that forgot @Auth: keys are per user.
    if (!request.user) throw new UnauthenticatedError('Missing bearer token');
    const key = parseIdempotencyKey(request.headers['idempotency-key']);
    const fingerprint = {
      scope: route.scope,
      method: request.method,
      route: request.routeOptions?.url ?? request.url.split('?')[0],
      params: request.params,
      body: request.body,
    };
    // Nest applies the route's status only when it sends the answer; the metadata is the source of truth.
    const status =
      this.reflector.get<number | undefined>(HTTP_CODE_METADATA, context.getHandler()) ?? (request.method === 'POST' ? 201 : 200);

    let started = await this.idempotency.begin(request.user.id, fingerprint, key, { waitMs: route.waitMs });
    if (started.kind === 'recover') {
      reply.header(IDEMPOTENT_REPLAYED_HEADER, 'true');
      const body = await this.idempotency.recover(started.resource, request.user);
      if (body !== undefined) {
        this.logger.info(
          { scope: route.scope, resourceType: started.resource.type, resourceId: started.resource.id },
          'answered a retry with the resource of a request that died',
        );
        reply.status(status);
        return of(body);
      }
      // The resource was removed (it provably never reached the provider): nothing was created, run anew.
      const claimed = await this.idempotency.claimAfterVanishedResource(started.record);
      if (!claimed) throw new IdempotencyInProgressError();
      reply.removeHeader(IDEMPOTENT_REPLAYED_HEADER);
      started = { kind: 'new', record: claimed };
    }
    if (started.kind === 'replay') {
      if (started.status >= 400) throw new ReplayedProblemError(started.body as ProblemDetails);
      reply.status(started.status).header(IDEMPOTENT_REPLAYED_HEADER, 'true');
      return of(started.body);
    }
    const record = started.record;
    return defer(() => this.execute(next, record, route, status, String(request.id ?? '')));
  }

  /** Runs the handler holding the record, its lease renewed meanwhile, and stores its answer. */
  private async execute(
    next: CallHandler,
    record: IdempotencyRecord,
    route: IdempotentRoute,
    status: number,
    requestId: string,
  ): Promise<unknown> {
    let running = true;
    const renewal = setInterval(
      () => {
        this.idempotency.renewLease(record).then(
          (held) =>
            held ||
            !running ||
            this.logger.warn({ scope: record.scope, recordId: record.id }, 'idempotency record no longer held while its request runs'),
          (error: unknown) =>
            this.logger.warn({ err: error, scope: record.scope, recordId: record.id }, 'could not renew an idempotency lease'),
        );
      },
      Math.max(1, Math.floor(this.idempotency.leaseMs / 3)),
    );
    renewal.unref();
    let body: unknown;
    try {
      body = await this.idempotency.runHolding(record, () => lastValueFrom(next.handle(), { defaultValue: undefined }));
    } catch (error) {
      running = false;
      clearInterval(renewal);
      await this.settleFailure(record, route, error, requestId);
      throw error;
    }
    running = false;
    clearInterval(renewal);
    await this.store(record, status, () => (route.storeBody ? route.storeBody(body) : body));
    return body;
  }

  private async settleFailure(record: IdempotencyRecord, route: IdempotentRoute, error: unknown, requestId: string): Promise<void> {
    if (error instanceof ValidationFailedError || route.releaseOn?.(error)) {
      try {
        await this.idempotency.abandon(record);
      } catch (releaseError) {
        // The key stays taken until it expires: retries get 409 instead of a second execution.
        this.logger.error({ err: releaseError, scope: route.scope }, 'could not release an idempotency key');
      }
      return;
    }
    // Anything else may have happened after money moved: retries get this same answer, never a second run.
    const { problem } = this.problems.toProblem(error, requestId);
    await this.store(record, problem.status, () => problem);
  }

  /**
   * A failure to store must not turn a done operation into an error for the client: the record
   * stays in progress; once its lease lapses, a retry answers the resource the request linked
   * (or runs anew if it linked none), never a second execution of what was done.
   */
  private async store(record: IdempotencyRecord, status: number, body: () => unknown): Promise<void> {
    try {
      const stored = await this.idempotency.complete(record, status, body());
      if (!stored)
        this.logger.warn({ scope: record.scope, recordId: record.id }, 'idempotency record expired before its answer was stored');
    } catch (error) {
      this.logger.error({ err: error, scope: record.scope, recordId: record.id }, 'could not store an idempotent answer');
    }
  }
}
