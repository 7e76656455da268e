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
import type { OperationLink } from '../provider-operations/operation-tables';
import { operationLink } from '../provider-operations/operation-recovery';
import { runProviderOperation, type ProviderOperationRequest, type ProviderOperationType } from '../provider-operations/provider-operation';
import { canSee } from '../auth/auth.types';
import { mayOperate } from './card-mappers';
import { PROVIDER_CARD_STATUS, type CardOperationRecord, type CardRecord, type CardRefresh, type NewCardOperation } from './card.types';
import { CardProviderError, CardTerminatedError } from './cards.errors';
import { CARD_OPERATIONS_TABLE, CardOperationsRepository } from './card-operations.repository';
import { CardsRepository } from './cards.repository';

/**
 * What every card use case shares: finding the card the caller may see or operate, card operations
 * as an adapter of the provider-operation lifecycle (`type`, `run`), and reading the balances the
 * provider answers.
 */
@Injectable()
export class CardOperationRunner {
  readonly logger: Logger;

  /** Card operations as the provider-operation lifecycle drives them. */
  readonly type: ProviderOperationType<CardOperationRecord, NewCardOperation, never, 'FAILED' | 'UNKNOWN'>;

  /** The configured currencies, for the use cases' answers. */
  readonly currencies: AppConfig['currencies'];

  constructor(
    private readonly repository: CardOperationsRepository,
    private readonly cards: CardsRepository,
    private readonly idempotency: IdempotencyService,
    config: ConfigService<AppConfig, true>,
    @Inject(APP_LOGGER) logger: Logger,
  ) {
    this.currencies = config.get('currencies', { infer: true });
    this.logger = logger.child({ component: 'cards' });
    this.type = {
      name: 'card operation',
      table: CARD_OPERATIONS_TABLE,
      log: this.logger,
      describe: (operation) => ({
        operationId: operation.id,
        cardId: operation.cardId,
        cardUserId: operation.cardUserId,
        kind: operation.kind,
      }),
      store: (operation, link) => this.repository.startOperation(operation, link),
      recordFailure: (operation, outcome) => this.repository.completeOperation(operation.id, outcome),
      answerFailure: (recorded, failure) => {
        if (failure.kind === 'unexpected') throw failure.error;
        throw new CardProviderError(failure.error, recorded);
      },
    };
  }

  async findVisible(user: AuthUser, id: string): Promise<CardRecord> {
    const card = UUID_PATTERN.test(id) ? await this.cards.findCard(id) : undefined;
    if (!card || !canSee(user, card.ownerId)) throw new NotFoundError(`No card ${id}.`);
    return card;
  }

  /** Visible (else 404) and the caller's to operate: the owner or an admin (else 403). */
  async findForChange(user: AuthUser, id: string): Promise<CardRecord> {
    const card = await this.findVisible(user, id);
    if (!mayOperate(user, card.ownerId)) throw new ForbiddenError('Only the owner of the card or an admin may operate it.');
    return card;
  }

  /** The link of the operation the request in flight stores, as a resource of `type` (CARD_OPERATIONS_TABLE's recovery). */
  linkTo(type: keyof typeof CARD_OPERATIONS_TABLE.recovery): OperationLink | undefined {
    return operationLink(this.idempotency, CARD_OPERATIONS_TABLE, type);
  }

  /** The stored operation and its card, shaped by `answer`: what a retry answers when its request died (registerRecoveries). */
  async recovered<T>(operationId: string, answer: (operation: CardOperationRecord, card: CardRecord) => T): Promise<T | undefined> {
    const operation = await this.repository.findOperation(operationId);
    const card = operation?.cardId ? await this.cards.findCard(operation.cardId) : undefined;
    return operation && card && answer(operation, card);
  }

  /**
   * Runs one card operation through the provider-operation lifecycle (runProviderOperation):
   * stored PENDING (linked to `request.link`), the call, then `request.record`; on an error the
   * operation is completed first (FAILED for a refusal or a proof nothing was sent, UNKNOWN
   * otherwise), then the error is answered with the operation's id in it.
   */
  run<Answer, Result>(request: ProviderOperationRequest<CardOperationRecord, NewCardOperation, Answer, Result>): Promise<Result> {
    return runProviderOperation(this.type, request);
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

  /** What the provider's card details say, checked and normalised (warnings for what cannot be taken). */
  readCardDetails(card: CardRecord, answer: unknown): CardRefresh {
    const details = (answer && typeof answer === 'object' ? answer : {}) as Record<string, unknown>;
    const refresh: CardRefresh = {};
    const status = typeof details.status === 'string' ? PROVIDER_CARD_STATUS[details.status.toLowerCase()] : undefined;
    if (status) refresh.status = status;
    else this.logger.warn({ cardId: card.id }, 'card refresh: the provider status is not one this service knows');
    if (typeof details.currency === 'string' && details.currency.toUpperCase() !== card.currency) {
      this.logger.warn({ cardId: card.id }, 'card refresh: the provider reports another currency; balance not taken');
    } else {
      const balance = this.readBalance(card, details.balance, 'balance');
      if (balance !== null) refresh.balance = balance;
    }
    if (typeof details.expiry === 'string' && details.expiry) refresh.expiry = details.expiry;
    const digits = typeof details.card_number === 'string' ? details.card_number.replace(/\D/g, '') : '';
    if (digits && !digits.endsWith(card.last4))
      this.logger.warn({ cardId: card.id }, 'card refresh: the provider reports a number with other last four digits');
    return refresh;
  }
}

export function refuseIfTerminated(card: CardRecord): void {
  if (card.status === 'TERMINATED' || card.terminatedAt) throw new CardTerminatedError(card.id);
}
