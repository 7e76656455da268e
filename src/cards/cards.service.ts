import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import { canSee, visibleOwnerOf, type AuthUser } from '../auth/auth.types';
import { ForbiddenError, NotFoundError, ValidationFailedError } from '../common/domain-error';
import { Money, MoneyError, parseStoredDecimal } from '../common/money';
import { validateAmountForCurrency } from '../common/money.validator';
import type { AppConfig } from '../config/app-config';
import { InjectConfig } from '../config/config.module';
import { APP_LOGGER } from '../logging/logging.module';
import { redact } from '../logging/redaction';
import { CardsClient } from '../provider/clients/cards.client';
import { ProviderBadResponseError, ProviderError, ProviderRejectedError, provesNotSent } from '../provider/provider.errors';
import { mayOperate, toCardDto, toOperationDto } from './card-mappers';
import { CardUsersService } from './card-users.service';
import {
  PROVIDER_CARD_STATUS,
  type CardOperationRecord,
  type CardRecord,
  type CardRefresh,
  type CardStatus,
  type OperationOutcome,
} from './card.types';
import {
  afterCursor,
  decodeOffsetCursor,
  DEFAULT_PAGE_SIZE,
  encodeOffsetCursor,
  positionOf,
  toPage,
  UUID_PATTERN,
  type PageQueryDto,
} from '../common/pagination';
import type { CardAmountDto, CardDetailDto, CardPageDto, CreateCardDto, CreatedCardDto, ListCardsQueryDto } from './cards.dto';
import type { CardOperationDto, CardOperationPageDto, CardOperationResultDto, ListCardOperationsQueryDto } from './card-operations.dto';
import type { CardTransactionDto, CardTransactionPageDto } from './card-transactions.dto';
import { isZeroAmount } from './cards.dto';
import { CardCreationIncompleteError, CardFrozenError, CardProviderError, CardTerminatedError, maskCardNumbersIn } from './cards.errors';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { CardsRepository } from './cards.repository';

export const FIRST_ANSWER_NOTE = 'cardNumber and cvv are shown only in this first answer: they are not stored and cannot be shown again';
export const REPLAY_NOTE = 'cardNumber and cvv are shown only in the first answer';

/**
 * What an idempotent replay of a card creation gets: the stored answer, which never held the
 * number nor the CVV, saying so.
 */
export function withoutCardSecrets(body: unknown): unknown {
  if (!body || typeof body !== 'object') return body;
  const { cardNumber: _number, cvv: _cvv, ...rest } = body as Record<string, unknown>;
  return { ...rest, secretsShownOnce: true, note: REPLAY_NOTE };
}

/** Resource types on idempotency records: a card creation answers the card, a top-up or withdrawal the operation. */
const CARD_CREATION_RESOURCE = 'card_creation';
const CARD_OPERATION_RESOURCE = 'card_operation';

type StateChange = {
  kind: 'FREEZE' | 'UNFREEZE' | 'TERMINATE';
  target: CardStatus;
  call: (providerCardId: string) => Promise<Record<string, unknown>>;
};

/**
 * Cards and their operations. Every operation asked of the provider is stored PENDING first and
 * completed after the answer: SUCCEEDED, FAILED (a refusal, or a proof nothing was sent) or
 * UNKNOWN (the answer was lost: the provider may have acted, so it is never retried by itself).
 * The full card number and the CVV exist only in the answer to the creation request.
 */
@Injectable()
export class CardsService implements OnModuleInit {
  private readonly logger: Logger;

  constructor(
    private readonly repository: CardsRepository,
    private readonly cardUsers: CardUsersService,
    private readonly provider: CardsClient,
    @InjectConfig() private readonly config: AppConfig,
    @Inject(APP_LOGGER) logger: Logger,
    private readonly idempotency: IdempotencyService,
  ) {
    this.logger = logger.child({ component: 'cards' });
  }

  /** What a retry answers when the request it repeats died after storing its operation. */
  onModuleInit() {
    this.idempotency.registerRecovery({
      type: CARD_CREATION_RESOURCE,
      scopes: ['cards.create'],
      answer: (id) => this.recoveredCreation(id),
    });
    this.idempotency.registerRecovery({
      type: CARD_OPERATION_RESOURCE,
      scopes: ['cards.topup', 'cards.withdraw'],
      answer: (id) => this.recoveredOperation(id),
    });
  }

  /** The card, as a replay shows it (no number, no CVV); a creation that left no card is answered as such. */
  private async recoveredCreation(operationId: string): Promise<unknown> {
    const operation = await this.repository.findOperation(operationId);
    if (!operation) return undefined;
    const card = operation.cardId ? await this.repository.findCard(operation.cardId) : undefined;
    if (!card) throw new CardCreationIncompleteError(operation);
    return withoutCardSecrets({ ...toCardDto(card, this.config.currencies), operationId: operation.id });
  }

  /** The operation with its stored outcome (UNKNOWN once swept), shaped as the route's answer. */
  private async recoveredOperation(operationId: string): Promise<CardOperationResultDto | undefined> {
    const operation = await this.repository.findOperation(operationId);
    const card = operation?.cardId ? await this.repository.findCard(operation.cardId) : undefined;
    return operation && card && { ...toOperationDto(operation, this.config.currencies), cardStatus: card.status };
  }

  // ------------------------------------------------------------------ creation

  async create(user: AuthUser, cardUserId: string, dto: CreateCardDto): Promise<CreatedCardDto> {
    const cardUser = await this.cardUsers.findVisible(user, cardUserId);
    if (!mayOperate(user, cardUser.ownerId)) throw new ForbiddenError('Only the owner of the card user or an admin may create its cards.');
    const balance = this.openingBalance(dto);

    const operation = await this.repository.startOperation(
      {
        cardUserId: cardUser.id,
        cardId: null,
        requestedBy: user.id,
        kind: 'CREATE',
        amount: balance.toString(),
        currency: balance.currency,
      },
      this.linkTo(CARD_CREATION_RESOURCE),
    );
    const answer = await this.call(operation, () =>
      this.provider.createCard(cardUser.providerUserId, { balance: balance.toString(), currency: balance.currency }),
    );

    const cardId = typeof answer?.card_id === 'string' ? answer.card_id.trim() : '';
    const digits = typeof answer?.card_number === 'string' ? answer.card_number.replace(/[\s-]/g, '') : '';
    const cvv = typeof answer?.cvv === 'string' ? answer.cvv : '';
    if (!cardId || !/^\d{12,19}$/.test(digits) || !cvv) {
      // A 2xx without the card: it may exist at the provider. Nothing of the answer is kept but its shape.
      const recorded = await this.repository.completeOperation(operation.id, {
        status: 'UNKNOWN',
        failureReason: 'The provider answered the card creation without a readable card',
        providerResponse: redact(answer),
      });
      throw new CardProviderError(
        new ProviderBadResponseError('The payment provider answered the card creation without a readable card.'),
        recorded,
      );
    }
    const { card, operation: done } = await this.repository.completeCardCreation(
      operation.id,
      {
        cardUserId: cardUser.id,
        ownerId: cardUser.ownerId,
        providerCardId: cardId,
        last4: digits.slice(-4),
        expiry: typeof answer.expiry === 'string' ? answer.expiry : '',
        currency: balance.currency,
        status: 'ACTIVE',
        balance: balance.toString(),
      },
      // redact() masks the number and blanks the CVV: the stored answer holds neither.
      { status: 'SUCCEEDED', providerResponse: redact(answer) },
    );
    this.logger.info({ cardId: card.id, cardUserId: cardUser.id, operationId: done.id, last4: card.last4 }, 'card created');
    return {
      ...toCardDto(card, this.config.currencies),
      cardNumber: digits,
      cvv,
      secretsShownOnce: true,
      note: FIRST_ANSWER_NOTE,
      operationId: done.id,
    };
  }

  // ------------------------------------------------------------------ reads

  /**
   * The card refreshed from the provider (status, balance, expiry). A terminated card is answered
   * from storage: it cannot change any more and is never asked about again. When the provider
   * cannot be asked, the stored copy is answered with `refreshed: false`.
   */
  async get(user: AuthUser, id: string): Promise<CardDetailDto> {
    let card = await this.findVisible(user, id);
    let refreshed = false;
    if (card.status !== 'TERMINATED') {
      try {
        const details = await this.provider.getCard(card.providerCardId);
        card = await this.repository.refreshCard(card.id, this.readCardDetails(card, details));
        refreshed = true;
      } catch (error) {
        if (!(error instanceof ProviderError)) throw error;
        this.logger.warn({ cardId: card.id, code: error.code }, 'card refresh failed; answering the stored copy');
      }
    }
    return { ...toCardDto(card, this.config.currencies), refreshed };
  }

  async list(user: AuthUser, query: ListCardsQueryDto): Promise<CardPageDto> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.repository.listCards(
      { ownerId: visibleOwnerOf(user), cardUserId: query.cardUserId, status: query.status },
      { limit: limit + 1, after: afterCursor(query.cursor) },
    );
    return toPage(rows, limit, positionOf, (c) => toCardDto(c, this.config.currencies));
  }

  async operations(user: AuthUser, id: string, query: ListCardOperationsQueryDto): Promise<CardOperationPageDto> {
    const card = await this.findVisible(user, id);
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.repository.listOperations(
      { cardId: card.id, kind: query.kind, status: query.status },
      { limit: limit + 1, after: afterCursor(query.cursor) },
    );
    return toPage(rows, limit, positionOf, (o) => toOperationDto(o, this.config.currencies));
  }

  async operation(user: AuthUser, operationId: string): Promise<CardOperationDto> {
    const operation = UUID_PATTERN.test(operationId) ? await this.repository.findOperation(operationId) : undefined;
    if (!operation || !canSee(user, operation.ownerId)) throw new NotFoundError(`No card operation ${operationId}.`);
    return toOperationDto(operation, this.config.currencies);
  }

  /**
   * The provider's history of the card, a page at a time (the provider gives it whole). Still
   * possible on a terminated card: it changes nothing. Stored as a TRANSACTIONS operation (who
   * read it and when; the answer is kept as a count, not the entries).
   */
  async transactions(user: AuthUser, id: string, query: PageQueryDto): Promise<CardTransactionPageDto> {
    const card = await this.findVisible(user, id);
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const offset = query.cursor ? decodeOffsetCursor(query.cursor) : 0;
    const operation = await this.repository.startOperation({
      cardUserId: card.cardUserId,
      cardId: card.id,
      requestedBy: user.id,
      kind: 'TRANSACTIONS',
    });
    // The client reads every envelope the provider may use; an unknown one is an empty list (and a warning).
    const list = await this.call(operation, () => this.provider.transactions(card.providerCardId));
    await this.repository.completeOperation(operation.id, { status: 'SUCCEEDED', providerResponse: { transactions: list.length } });
    const items = list.slice(offset, offset + limit).map(toTransactionDto);
    return {
      cardId: card.id,
      operationId: operation.id,
      items,
      nextCursor: offset + limit < list.length ? encodeOffsetCursor(offset + limit) : null,
    };
  }

  // ------------------------------------------------------------------ operations

  topUp(user: AuthUser, id: string, dto: CardAmountDto): Promise<CardOperationResultDto> {
    return this.moveMoney(user, id, dto, 'TOPUP');
  }

  withdraw(user: AuthUser, id: string, dto: CardAmountDto): Promise<CardOperationResultDto> {
    return this.moveMoney(user, id, dto, 'WITHDRAW');
  }

  freeze(user: AuthUser, id: string): Promise<CardOperationResultDto> {
    return this.changeState(user, id, { kind: 'FREEZE', target: 'FROZEN', call: (cardId) => this.provider.disable(cardId) });
  }

  unfreeze(user: AuthUser, id: string): Promise<CardOperationResultDto> {
    return this.changeState(user, id, { kind: 'UNFREEZE', target: 'ACTIVE', call: (cardId) => this.provider.enable(cardId) });
  }

  terminate(user: AuthUser, id: string): Promise<CardOperationResultDto> {
    return this.changeState(user, id, { kind: 'TERMINATE', target: 'TERMINATED', call: (cardId) => this.provider.terminate(cardId) });
  }

  private async moveMoney(user: AuthUser, id: string, dto: CardAmountDto, kind: 'TOPUP' | 'WITHDRAW'): Promise<CardOperationResultDto> {
    const card = await this.findForChange(user, id);
    const checked = validateAmountForCurrency(dto.amount, card.currency, this.config.currencies);
    if ('errors' in checked) throw new ValidationFailedError(checked.errors);
    refuseIfTerminated(card);
    if (card.status === 'FROZEN') throw new CardFrozenError(card.id);
    const amount = checked.money.toString();

    const operation = await this.repository.startOperation(
      { cardUserId: card.cardUserId, cardId: card.id, requestedBy: user.id, kind, amount, currency: card.currency },
      this.linkTo(CARD_OPERATION_RESOURCE),
    );
    const answer = await this.call(operation, () =>
      kind === 'TOPUP'
        ? this.provider.topUp(card.providerCardId, amount, card.currency)
        : this.provider.withdraw(card.providerCardId, amount, card.currency),
    );
    const newBalance = this.readBalance(card, answer?.new_balance, 'new_balance');
    const transactionId = typeof answer?.transaction_id === 'string' && answer.transaction_id ? answer.transaction_id : null;
    if (!transactionId)
      this.logger.warn(
        { cardId: card.id, operationId: operation.id },
        `card ${kind.toLowerCase()}: the provider answered without transaction_id`,
      );
    const done = await this.repository.completeCardOperation(
      operation.id,
      card.id,
      { status: 'SUCCEEDED', providerResponse: redact(answer), providerTransactionId: transactionId, newBalance },
      { balance: newBalance },
    );
    this.logger.info(
      { cardId: card.id, operationId: done.operation.id, kind, amount, currency: card.currency },
      'card operation succeeded',
    );
    return { ...toOperationDto(done.operation, this.config.currencies), cardStatus: done.card.status };
  }

  /**
   * Freeze, unfreeze, terminate. Each request is sent and recorded, so asking twice is harmless:
   * the card ends in the asked state both times. A terminated card refuses them all, unsent.
   */
  private async changeState(user: AuthUser, id: string, change: StateChange): Promise<CardOperationResultDto> {
    const card = await this.findForChange(user, id);
    refuseIfTerminated(card);
    const operation = await this.repository.startOperation({
      cardUserId: card.cardUserId,
      cardId: card.id,
      requestedBy: user.id,
      kind: change.kind,
    });
    const answer = await this.call(operation, () => change.call(card.providerCardId));
    const reported = typeof answer?.status === 'string' ? PROVIDER_CARD_STATUS[answer.status.toLowerCase()] : undefined;
    if (reported && reported !== change.target) {
      this.logger.warn(
        { cardId: card.id, operationId: operation.id, reported, expected: change.target },
        'card state change: the provider reports another status',
      );
    }
    const done = await this.repository.completeCardOperation(
      operation.id,
      card.id,
      { status: 'SUCCEEDED', providerResponse: redact(answer) },
      { status: reported ?? change.target },
    );
    this.logger.info(
      { cardId: card.id, operationId: done.operation.id, kind: change.kind, status: done.card.status },
      'card operation succeeded',
    );
    return { ...toOperationDto(done.operation, this.config.currencies), cardStatus: done.card.status };
  }

  // ------------------------------------------------------------------ helpers

  /** The idempotency record of the request in flight, to link to the operation it stores. */
  private linkTo(type: string): { recordId: string; type: string } | undefined {
    const recordId = this.idempotency.recoveryPoint();
    return recordId ? { recordId, type } : undefined;
  }

  /**
   * Asks the provider for a stored PENDING operation. On an error the operation is completed
   * first (FAILED for a refusal or a proof nothing was sent, UNKNOWN otherwise), then the error
   * is answered with the operation's id in it.
   */
  private async call<T>(operation: CardOperationRecord, ask: () => Promise<T>): Promise<T> {
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

  private openingBalance(dto: CreateCardDto): Money {
    if (isZeroAmount(dto.balance)) {
      const known = Object.prototype.hasOwnProperty.call(this.config.currencies, dto.currency);
      if (!known)
        throw new ValidationFailedError([
          { field: 'currency', message: `currency must be one of ${Object.keys(this.config.currencies).join(', ')}` },
        ]);
      return Money.zero(this.config.currencies[dto.currency]);
    }
    const checked = validateAmountForCurrency(dto.balance, dto.currency, this.config.currencies, { amount: 'balance' });
    if ('errors' in checked) throw new ValidationFailedError(checked.errors);
    return checked.money;
  }

  /** A provider balance in the card's currency, canonical; null (and a warning) when unreadable. */
  private readBalance(card: CardRecord, value: unknown, field: string): string | null {
    if (typeof value !== 'string' && typeof value !== 'number') {
      this.logger.warn({ cardId: card.id }, `the provider answered without ${field}`);
      return null;
    }
    const rule = this.config.currencies[card.currency];
    if (!rule) return null;
    try {
      return parseStoredDecimal(String(value), rule).toString();
    } catch (error) {
      if (!(error instanceof MoneyError)) throw error;
      this.logger.warn({ cardId: card.id, reason: error.reason }, `the provider's ${field} is not an amount in ${card.currency}`);
      return null;
    }
  }

  private readCardDetails(card: CardRecord, answer: unknown): CardRefresh {
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

  private async findVisible(user: AuthUser, id: string): Promise<CardRecord> {
    const card = UUID_PATTERN.test(id) ? await this.repository.findCard(id) : undefined;
    if (!card || !canSee(user, card.ownerId)) throw new NotFoundError(`No card ${id}.`);
    return card;
  }

  /** Visible (else 404) and the caller's to operate: the owner or an admin (else 403). */
  private async findForChange(user: AuthUser, id: string): Promise<CardRecord> {
    const card = await this.findVisible(user, id);
    if (!mayOperate(user, card.ownerId)) throw new ForbiddenError('Only the owner of the card or an admin may operate it.');
    return card;
  }
}

function refuseIfTerminated(card: CardRecord): void {
  if (card.status === 'TERMINATED' || card.terminatedAt) throw new CardTerminatedError(card.id);
}

function failureOutcome(error: unknown): OperationOutcome {
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

const KNOWN_TRANSACTION_FIELDS = new Set(['transaction_id', 'type', 'amount', 'currency', 'balance_after', 'created_at']);

function toTransactionDto(entry: unknown): CardTransactionDto {
  const item = (entry && typeof entry === 'object' ? redact(entry) : {}) as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === 'string' ? value : typeof value === 'number' ? String(value) : null);
  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(item)) {
    if (!KNOWN_TRANSACTION_FIELDS.has(key)) extra[key.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase())] = value;
  }
  return {
    transactionId: text(item.transaction_id),
    type: text(item.type),
    amount: text(item.amount),
    currency: text(item.currency),
    balanceAfter: text(item.balance_after),
    createdAt: text(item.created_at),
    ...(Object.keys(extra).length ? { extra } : {}),
  };
}
