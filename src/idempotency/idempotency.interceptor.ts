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
import { parseIdempotencyKey } from './idempotency-key-header';
import { IdempotencyService, type InFlightRequest } from './idempotency.service';
import type { RequestFingerprint } from './request-fingerprint';
import type { IdempotencyClaim } from './idempotency.repository';
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

    const requestId = String(request.id ?? '');
    const user = request.user;
    if (route.claimInResourceStatement) {
      const inFlight: InFlightRequest = {
        claim: this.idempotency.newClaim(user.id, fingerprint, key),
        status,
        answerInline: !route.storeBody,
        answerStored: false,
      };
      return defer(async () => {
        try {
          return await this.execute(next, inFlight, route, requestId, { claimedBefore: false });
        } catch (error) {
          if (!(error instanceof IdempotencyInProgressError)) throw error;
          // The resource's statement found the key held by another request and stored nothing: as any idempotent route from here.
          const answer = await this.claimThenRun(next, user, fingerprint, key, route, status, requestId, reply);
          return lastValueFrom(answer, { defaultValue: undefined });
        }
      });
    }
    return this.claimThenRun(next, user, fingerprint, key, route, status, requestId, reply);
  }

  /** Claims the key first (or replays, waits, recovers), then runs the handler holding it. */
  private async claimThenRun(
    next: CallHandler,
    user: AuthUser,
    fingerprint: RequestFingerprint,
    key: string,
    route: IdempotentRoute,
    status: number,
    requestId: string,
    reply: FastifyReply,
  ): Promise<Observable<unknown>> {
    let started = await this.idempotency.begin(user.id, fingerprint, key, { waitMs: route.waitMs });
    if (started.kind === 'recover') {
      reply.header(IDEMPOTENT_REPLAYED_HEADER, 'true');
      const body = await this.idempotency.recover(started.resource, user);
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
    const inFlight: InFlightRequest = {
      claim: this.idempotency.claimOf(started.record),
      status,
      answerInline: !route.storeBody,
      answerStored: false,
    };
    return defer(() => this.execute(next, inFlight, route, requestId, { claimedBefore: true }));
  }

  /** Runs the handler holding the record, its lease renewed meanwhile, and stores its answer. */
  private async execute(
    next: CallHandler,
    inFlight: InFlightRequest,
    route: IdempotentRoute,
    requestId: string,
    { claimedBefore }: { claimedBefore: boolean },
  ): Promise<unknown> {
    const record = inFlight.claim;
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
      body = await this.idempotency.runHolding(inFlight, () => lastValueFrom(next.handle(), { defaultValue: undefined }));
    } catch (error) {
      running = false;
      clearInterval(renewal);
      // Not claimed by the resource's statement: another request holds the key, and this one wrote nothing.
      if (!claimedBefore && error instanceof IdempotencyInProgressError) throw error;
      await this.settleFailure(record, route, error, requestId, claimedBefore);
      throw error;
    }
    running = false;
    clearInterval(renewal);
    if (!inFlight.answerStored) await this.store(record, inFlight.status, () => (route.storeBody ? route.storeBody(body) : body), true);
    return body;
  }

  private async settleFailure(
    record: IdempotencyClaim,
    route: IdempotentRoute,
    error: unknown,
    requestId: string,
    claimedBefore: boolean,
  ): Promise<void> {
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
    // A handler that failed before its resource's statement claimed the key leaves nothing to answer: a retry runs anew.
    await this.store(record, problem.status, () => problem, claimedBefore);
  }

  /**
   * A failure to store must not turn a done operation into an error for the client: the record
   * stays in progress; once its lease lapses, a retry answers the resource the request linked
   * (or runs anew if it linked none), never a second execution of what was done.
   */
  private async store(record: IdempotencyClaim, status: number, body: () => unknown, claimed: boolean): Promise<void> {
    try {
      const stored = await this.idempotency.complete(record, status, body());
      if (!stored && claimed)
        this.logger.warn({ scope: record.scope, recordId: record.id }, 'idempotency record expired before its answer was stored');
    } catch (error) {
      this.logger.error({ err: error, scope: record.scope, recordId: record.id }, 'could not store an idempotent answer');
    }
  }
}
