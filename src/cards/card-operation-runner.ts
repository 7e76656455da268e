import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Logger } from 'pino';
import type { AuthUser } from '../auth/auth.types';
import { ForbiddenError, NotFoundError } from '../common/domain-error';
import { MoneyError, parseStoredDecimal } from '../common/money';
import { UUID_PATTERN } from '../common/pagination';
import type { AppConfig } from '../config/app-config';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { APP_LOGGER } from '../logging/logging.module';
import { redact } from '../logging/redaction';
import { ProviderError, ProviderRejectedError, provesNotSent } from '../provider/provider.errors';
import { canSee } from '../auth/auth.types';
import { mayOperate } from './card-mappers';
import type { CardOperationRecord, CardRecord, OperationOutcome } from './card.types';
import { CardProviderError, CardTerminatedError, maskCardNumbersIn } from './cards.errors';
import { CardsRepository } from './cards.repository';

/**
 * What every card use case shares: finding the card the caller may see or operate, asking the
 * provider for a stored PENDING operation (and recording how the asking failed), and reading the
 * balances the provider answers.
 */
@Injectable()
export class CardOperationRunner {
  readonly logger: Logger;

  private readonly currencies: AppConfig['currencies'];

  constructor(
    private readonly repository: CardsRepository,
    private readonly idempotency: IdempotencyService,
    config: ConfigService<AppConfig, true>,
    @Inject(APP_LOGGER) logger: Logger,
  ) {
    this.currencies = config.get('currencies', { infer: true });
    this.logger = logger.child({ component: 'cards' });
  }

  async findVisible(user: AuthUser, id: string): Promise<CardRecord> {
    const card = UUID_PATTERN.test(id) ? await this.repository.findCard(id) : undefined;
    if (!card || !canSee(user, card.ownerId)) throw new NotFoundError(`No card ${id}.`);
    return card;
  }

  /** Visible (else 404) and the caller's to operate: the owner or an admin (else 403). */
  async findForChange(user: AuthUser, id: string): Promise<CardRecord> {
    const card = await this.findVisible(user, id);
    if (!mayOperate(user, card.ownerId)) throw new ForbiddenError('Only the owner of the card or an admin may operate it.');
    return card;
  }

  /** The idempotency record of the request in flight, to link to the operation it stores. */
  linkTo(type: string): { recordId: string; type: string } | undefined {
    const recordId = this.idempotency.recoveryPoint();
    return recordId ? { recordId, type } : undefined;
  }

  /**
   * Asks the provider for a stored PENDING operation. On an error the operation is completed
   * first (FAILED for a refusal or a proof nothing was sent, UNKNOWN otherwise), then the error
   * is answered with the operation's id in it.
   */
  async run<T>(operation: CardOperationRecord, ask: () => Promise<T>): Promise<T> {
    try {
      return await ask();
    } catch (error) {
      const recorded = await this.repository.completeOperation(operation.id, failureOutcome(error));
      const context = { operationId: operation.id, cardId: operation.cardId, cardUserId: operation.cardUserId, kind: operation.kind };
      if (error instanceof ProviderError) {
        if (recorded.status === 'UNKNOWN')
          this.logger.warn({ ...context, code: error.code }, 'card operation outcome unknown: the provider may have acted');
        else this.logger.info({ ...context, code: error.code }, 'card operation failed');
        throw new CardProviderError(error, recorded);
      }
      this.logger.error({ ...context, err: error }, 'card operation failed unexpectedly after it may have been sent');
      throw error;
    }
  }

  /** A provider balance in the card's currency, canonical; null (and a warning) when unreadable. */
  readBalance(card: CardRecord, value: unknown, field: string): string | null {
    if (typeof value !== 'string' && typeof value !== 'number') {
      this.logger.warn({ cardId: card.id }, `the provider answered without ${field}`);
      return null;
    }
    const rule = this.currencies[card.currency];
    if (!rule) return null;
    try {
      return parseStoredDecimal(String(value), rule).toString();
    } catch (error) {
      if (!(error instanceof MoneyError)) throw error;
      this.logger.warn({ cardId: card.id, reason: error.reason }, `the provider's ${field} is not an amount in ${card.currency}`);
      return null;
    }
  }
}

export function refuseIfTerminated(card: CardRecord): void {
  if (card.status === 'TERMINATED' || card.terminatedAt) throw new CardTerminatedError(card.id);
}

/** How a provider call that threw ends its operation: FAILED when nothing can have happened, else UNKNOWN. */
export function failureOutcome(error: unknown): OperationOutcome {
  if (error instanceof ProviderRejectedError) {
    return {
      status: 'FAILED',
      failureReason: maskCardNumbersIn(error.providerMessage ?? 'Refused by the payment provider'),
      providerResponse: error.body === undefined ? { httpStatus: error.providerStatus } : redact(error.body),
    };
  }
  if (provesNotSent(error))
    return { status: 'FAILED', failureReason: `Not sent to the payment provider (${(error as ProviderError).code})` };
  if (error instanceof ProviderError) {
    return {
      status: 'UNKNOWN',
      failureReason: maskCardNumbersIn(error.detail),
      providerResponse: {
        code: error.code,
        ...(error.providerStatus ? { httpStatus: error.providerStatus } : {}),
        ...(error.providerMessage ? { message: maskCardNumbersIn(error.providerMessage) } : {}),
      },
    };
  }
  return { status: 'UNKNOWN', failureReason: 'The operation failed unexpectedly after it may have been sent' };
}
