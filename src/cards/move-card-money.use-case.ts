import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../auth/auth.types';
import { ValidationFailedError } from '../common/domain-error';
import { validateAmountForCurrency } from '../common/money.validator';
import type { AppConfig } from '../config/app-config';
import { redact } from '../logging/redaction';
import { CardsClient } from '../provider/clients/cards.client';
import { toOperationDto } from './card-mappers';
import { CardOperationRunner, refuseIfTerminated } from './card-operation-runner';
import type { CardOperationRecord, CardRecord } from './card.types';
import type { CardAmountDto } from './cards.dto';
import type { CardOperationResultDto } from './card-operations.dto';
import { CardFrozenError } from './cards.errors';
import { CardOperationsRepository } from './card-operations.repository';

/**
 * Top-ups and withdrawals. The operation is stored PENDING (linked to the request's idempotency
 * record) before the provider is asked; the provider's answer makes it SUCCEEDED with the new
 * balance, a refusal or a proof nothing was sent FAILED, a lost answer UNKNOWN (never retried by
 * itself). Money does not move on a frozen or terminated card: refused before anything is stored.
 */
@Injectable()
export class MoveCardMoneyUseCase {
  constructor(
    private readonly repository: CardOperationsRepository,
    private readonly provider: CardsClient,
    private readonly runner: CardOperationRunner,
  ) {}

  topUp(user: AuthUser, id: string, dto: CardAmountDto): Promise<CardOperationResultDto> {
    return this.moveMoney(user, id, dto, 'TOPUP');
  }

  withdraw(user: AuthUser, id: string, dto: CardAmountDto): Promise<CardOperationResultDto> {
    return this.moveMoney(user, id, dto, 'WITHDRAW');
  }

  private async moveMoney(user: AuthUser, id: string, dto: CardAmountDto, kind: 'TOPUP' | 'WITHDRAW'): Promise<CardOperationResultDto> {
    const card = await this.runner.findForChange(user, id);
    const checked = validateAmountForCurrency(dto.amount, card.currency, this.runner.currencies);
    if ('errors' in checked) throw new ValidationFailedError(checked.errors);
    refuseIfTerminated(card);
    if (card.status === 'FROZEN') throw new CardFrozenError(card.id);
    const amount = checked.money.toString();

    const done = await this.runner.run({
      input: { cardUserId: card.cardUserId, cardId: card.id, requestedBy: user.id, kind, amount, currency: card.currency },
      link: this.runner.linkTo('card_operation'),
      call: () =>
        kind === 'TOPUP'
          ? this.provider.topUp(card.providerCardId, amount, card.currency)
          : this.provider.withdraw(card.providerCardId, amount, card.currency),
      record: (operation, answer) => {
        const newBalance = this.runner.readBalance(card, answer?.new_balance, 'new_balance');
        const transactionId = typeof answer?.transaction_id === 'string' && answer.transaction_id ? answer.transaction_id : null;
        if (!transactionId)
          this.runner.logger.warn(
            { cardId: card.id, operationId: operation.id },
            `card ${kind.toLowerCase()}: the provider answered without transaction_id`,
          );
        return this.repository.completeCardOperation(
          operation.id,
          card.id,
          { status: 'SUCCEEDED', providerResponse: redact(answer), providerTransactionId: transactionId, newBalance },
          { balance: newBalance },
        );
      },
    });
    this.runner.logger.info(
      { cardId: card.id, operationId: done.operation.id, kind, amount, currency: card.currency },
      'card operation succeeded',
    );
    return cardOperationResult(done.operation, done.card, this.runner.currencies);
  }
}

/** A card operation as its route answers it, with the card's status after it (also what a retry of it answers). */
export function cardOperationResult(
  operation: CardOperationRecord,
  card: CardRecord,
  currencies: AppConfig['currencies'],
): CardOperationResultDto {
  return { ...toOperationDto(operation, currencies), cardStatus: card.status };
}
