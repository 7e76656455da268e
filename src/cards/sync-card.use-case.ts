import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../auth/auth.types';
import { readStoredAmount } from '../common/money';
import type { AppConfig } from '../config/app-config';
import { redact } from '../logging/redaction';
import { CardsClient } from '../provider/clients/cards.client';
import { toOperationDto } from './card-mappers';
import { CardOperationRunner, refuseIfTerminated } from './card-operation-runner';
import type { CardOperationRecord, CardRecord } from './card.types';
import type { CardSyncResultDto } from './card-operations.dto';
import { CardOperationsRepository } from './card-operations.repository';

/**
 * `POST /v1/cards/{id}/sync`: the card re-read from the provider (its card details, the call of
 * GET /v1/cards/{id}), recorded as a SYNC operation through the provider-operation lifecycle:
 * stored PENDING (linked to the request's idempotency record) before the call; the answer updates
 * the card (status, expiry, balance) and records on the operation the provider's balance
 * (`newBalance`) and the change from the balance stored until then (`amount`, new − previous); a
 * lost answer leaves it UNKNOWN, a refusal or a proof nothing was sent FAILED. A terminated card
 * is refused before anything is stored or sent.
 */
@Injectable()
export class SyncCardUseCase {
  constructor(
    private readonly repository: CardOperationsRepository,
    private readonly provider: CardsClient,
    private readonly runner: CardOperationRunner,
  ) {}

  async sync(user: AuthUser, id: string): Promise<CardSyncResultDto> {
    const card = await this.runner.findForChange(user, id);
    refuseIfTerminated(card);
    const done = await this.runner.run({
      input: { cardUserId: card.cardUserId, cardId: card.id, requestedBy: user.id, kind: 'SYNC', currency: card.currency },
      link: this.runner.linkTo('card_sync'),
      call: () => this.provider.getCard(card.providerCardId),
      // redact() masks the number the card details carry: the stored answer never holds it.
      record: (operation, answer) =>
        this.repository.completeSync(operation.id, card.id, this.runner.readCardDetails(card, answer), redact(answer)),
    });
    this.runner.logger.info(
      { cardId: card.id, operationId: done.operation.id, kind: 'SYNC', change: done.operation.amount, status: done.card.status },
      'card operation succeeded',
    );
    return syncResult(done.operation, done.card, this.runner.currencies);
  }
}

/** The sync as its route answers it (also what a retry of it answers): the operation, the card status, and the balance stored before the sync (new − change, when both are known). */
export function syncResult(operation: CardOperationRecord, card: CardRecord, currencies: AppConfig['currencies']): CardSyncResultDto {
  const rule = operation.currency === null ? undefined : currencies[operation.currency];
  const previousBalance =
    rule && operation.newBalance !== null && operation.amount !== null
      ? readStoredAmount(operation.newBalance, rule).minus(readStoredAmount(operation.amount, rule)).toString()
      : null;
  return { ...toOperationDto(operation, currencies), cardStatus: card.status, previousBalance };
}
