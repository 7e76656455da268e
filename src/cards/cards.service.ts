import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Logger } from 'pino';
import { canSee, listReaderOf, visibleOwnerOf, type AuthUser } from '../auth/auth.types';
import { ForbiddenError, NotFoundError, ValidationFailedError } from '../common/domain-error';
import { Money } from '../common/money';
import { validateAmountForCurrency } from '../common/money.validator';
import type { AppConfig } from '../config/app-config';
import { APP_LOGGER } from '../logging/logging.module';
import { redact } from '../logging/redaction';
import { CardsClient } from '../provider/clients/cards.client';
import { ProviderBadResponseError, ProviderError } from '../provider/provider.errors';
import { mayOperate, toCardDto, toOperationDto } from './card-mappers';
import { CardUsersService } from './card-users.service';
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
import type { CardDetailDto, CardPageDto, CreateCardDto, CreatedCardDto, ListCardsQueryDto } from './cards.dto';
import type { CardOperationDto, CardOperationPageDto, ListCardOperationsQueryDto } from './card-operations.dto';
import type { CardTransactionDto, CardTransactionPageDto } from './card-transactions.dto';
import { isZeroAmount } from './cards.dto';
import { CardCreationIncompleteError, CardProviderError } from './cards.errors';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { CardOperationsRepository } from './card-operations.repository';
import { CardsRepository } from './cards.repository';
import { CardListsRepository } from './card-lists.repository';
import { CardOperationRunner } from './card-operation-runner';
import { CARD_OPERATIONS_TABLE } from './card-operations.table';
import { cardOperationResult } from './move-card-money.use-case';
import { syncResult } from './sync-card.use-case';
import { registerRecoveries } from '../provider-operations/operation-recovery';

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

/**
 * Card creation and the reads of cards and their operations (top-ups and withdrawals are
 * MoveCardMoneyUseCase, freeze/unfreeze/terminate ChangeCardStateUseCase). Every operation asked
 * of the provider is stored PENDING first and completed after the answer: SUCCEEDED, FAILED (a
 * refusal, or a proof nothing was sent) or UNKNOWN (the answer was lost: the provider may have
 * acted, so it is never retried by itself). The full card number and the CVV exist only in the
 * answer to the creation request.
 */
@Injectable()
export class CardsService implements OnModuleInit {
  private readonly logger: Logger;

  private readonly currencies: AppConfig['currencies'];

  constructor(
    private readonly repository: CardOperationsRepository,
    private readonly cards: CardsRepository,
    private readonly lists: CardListsRepository,
    private readonly cardUsers: CardUsersService,
    private readonly provider: CardsClient,
    config: ConfigService<AppConfig, true>,
    @Inject(APP_LOGGER) logger: Logger,
    private readonly idempotency: IdempotencyService,
    private readonly runner: CardOperationRunner,
  ) {
    this.currencies = config.get('currencies', { infer: true });
    this.logger = logger.child({ component: 'cards' });
  }

  /** What a retry answers when the card request it repeats died after storing its operation: the operation as it now is. */
  onModuleInit() {
    registerRecoveries(this.idempotency, CARD_OPERATIONS_TABLE, {
      card_creation: (id) => this.recoveredCreation(id),
      card_operation: (id) => this.runner.recovered(id, (operation, card) => cardOperationResult(operation, card, this.currencies)),
      card_sync: (id) => this.runner.recovered(id, (operation, card) => syncResult(operation, card, this.currencies)),
    });
  }

  /** The card, as a replay shows it (no number, no CVV); a creation that left no card is answered as such. */
  private async recoveredCreation(operationId: string): Promise<unknown> {
    const operation = await this.repository.findOperation(operationId);
    if (!operation) return undefined;
    const card = operation.cardId ? await this.cards.findCard(operation.cardId) : undefined;
    if (!card) throw new CardCreationIncompleteError(operation);
    return withoutCardSecrets({ ...toCardDto(card, this.currencies), operationId: operation.id });
  }

  // ------------------------------------------------------------------ creation

  async create(user: AuthUser, cardUserId: string, dto: CreateCardDto): Promise<CreatedCardDto> {
    const cardUser = await this.cardUsers.findVisible(user, cardUserId);
    if (!mayOperate(user, cardUser.ownerId)) throw new ForbiddenError('Only the owner of the card user or an admin may create its cards.');
    const balance = this.openingBalance(dto);

    return this.runner.run({
      input: {
        cardUserId: cardUser.id,
        cardId: null,
        requestedBy: user.id,
        kind: 'CREATE',
        amount: balance.toString(),
        currency: balance.currency,
      },
      link: this.runner.linkTo('card_creation'),
      call: () => this.provider.createCard(cardUser.providerUserId, { balance: balance.toString(), currency: balance.currency }),
      record: async (operation, answer): Promise<CreatedCardDto> => {
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
          ...toCardDto(card, this.currencies),
          cardNumber: digits,
          cvv,
          secretsShownOnce: true,
          note: FIRST_ANSWER_NOTE,
          operationId: done.id,
        };
      },
    });
  }

  // ------------------------------------------------------------------ reads

  /**
   * The card refreshed from the provider (status, balance, expiry). A terminated card is answered
   * from storage: it cannot change any more and is never asked about again. When the provider
   * cannot be asked, the stored copy is answered with `refreshed: false`.
   */
  async get(user: AuthUser, id: string): Promise<CardDetailDto> {
    let card = await this.runner.findVisible(user, id);
    let refreshed = false;
    if (card.status !== 'TERMINATED') {
      try {
        const details = await this.provider.getCard(card.providerCardId);
        card = await this.cards.refreshCard(card.id, this.runner.readCardDetails(card, details));
        refreshed = true;
      } catch (error) {
        if (!(error instanceof ProviderError)) throw error;
        this.logger.warn({ cardId: card.id, code: error.code }, 'card refresh failed; answering the stored copy');
      }
    }
    return { ...toCardDto(card, this.currencies), refreshed };
  }

  async list(user: AuthUser, query: ListCardsQueryDto): Promise<CardPageDto> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.lists.listCards(
      listReaderOf(user),
      { ownerId: visibleOwnerOf(user), cardUserId: query.cardUserId, status: query.status },
      { limit: limit + 1, after: afterCursor(query.cursor) },
    );
    return toPage(rows, limit, positionOf, (c) => toCardDto(c, this.currencies));
  }

  async operations(user: AuthUser, id: string, query: ListCardOperationsQueryDto): Promise<CardOperationPageDto> {
    const card = await this.runner.findVisible(user, id);
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.lists.listOperations(
      listReaderOf(user),
      { cardId: card.id, kind: query.kind, status: query.status },
      { limit: limit + 1, after: afterCursor(query.cursor) },
    );
    return toPage(rows, limit, positionOf, (o) => toOperationDto(o, this.currencies));
  }

  async operation(user: AuthUser, operationId: string): Promise<CardOperationDto> {
    const operation = UUID_PATTERN.test(operationId) ? await this.repository.findOperation(operationId) : undefined;
    if (!operation || !canSee(user, operation.ownerId)) throw new NotFoundError(`No card operation ${operationId}.`);
    return toOperationDto(operation, this.currencies);
  }

  /**
   * The provider's history of the card, a page at a time (the provider gives it whole). Still
   * possible on a terminated card: it changes nothing. Stored as a TRANSACTIONS operation (who
   * read it and when; the answer is kept as a count, not the entries).
   */
  async transactions(user: AuthUser, id: string, query: PageQueryDto): Promise<CardTransactionPageDto> {
    const card = await this.runner.findVisible(user, id);
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const offset = query.cursor ? decodeOffsetCursor(query.cursor) : 0;
    // The client reads every envelope the provider may use; an unknown one is an empty list (and a warning).
    const { operation, list } = await this.runner.run({
      input: { cardUserId: card.cardUserId, cardId: card.id, requestedBy: user.id, kind: 'TRANSACTIONS' },
      call: () => this.provider.transactions(card.providerCardId),
      record: async (stored, answer) => ({
        operation: await this.repository.completeOperation(stored.id, {
          status: 'SUCCEEDED',
          providerResponse: { transactions: answer.length },
        }),
        list: answer,
      }),
    });
    const items = list.slice(offset, offset + limit).map(toTransactionDto);
    return {
      cardId: card.id,
      operationId: operation.id,
      items,
      nextCursor: offset + limit < list.length ? encodeOffsetCursor(offset + limit) : null,
    };
  }

  // ------------------------------------------------------------------ helpers

  private openingBalance(dto: CreateCardDto): Money {
    if (isZeroAmount(dto.balance)) {
      const known = Object.prototype.hasOwnProperty.call(this.currencies, dto.currency);
      if (!known)
        throw new ValidationFailedError([
          { field: 'currency', message: `currency must be one of ${Object.keys(this.currencies).join(', ')}` },
        ]);
      return Money.zero(this.currencies[dto.currency]);
    }
    const checked = validateAmountForCurrency(dto.balance, dto.currency, this.currencies, { amount: 'balance' });
    if ('errors' in checked) throw new ValidationFailedError(checked.errors);
    return checked.money;
  }
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
