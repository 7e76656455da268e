import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../auth/auth.types';
import { redact } from '../logging/redaction';
import { CardsClient } from '../provider/clients/cards.client';
import { CardOperationRunner, refuseIfTerminated } from './card-operation-runner';
import { PROVIDER_CARD_STATUS, type CardStatus } from './card.types';
import type { CardOperationResultDto } from './card-operations.dto';
import { CardOperationsRepository } from './card-operations.repository';
import { cardOperationResult } from './move-card-money.use-case';

type StateChange = {
  kind: 'FREEZE' | 'UNFREEZE' | 'TERMINATE';
  target: CardStatus;
  call: (providerCardId: string) => Promise<Record<string, unknown>>;
};

/**
 * Freeze, unfreeze, terminate. Each request is sent and recorded, so asking twice is harmless:
 * the card ends in the asked state both times. A terminated card refuses them all, unsent.
 */
@Injectable()
export class ChangeCardStateUseCase {
  constructor(
    private readonly repository: CardOperationsRepository,
    private readonly provider: CardsClient,
    private readonly runner: CardOperationRunner,
  ) {}

  freeze(user: AuthUser, id: string): Promise<CardOperationResultDto> {
    return this.changeState(user, id, { kind: 'FREEZE', target: 'FROZEN', call: (cardId) => this.provider.disable(cardId) });
  }

  unfreeze(user: AuthUser, id: string): Promise<CardOperationResultDto> {
    return this.changeState(user, id, { kind: 'UNFREEZE', target: 'ACTIVE', call: (cardId) => this.provider.enable(cardId) });
  }

  terminate(user: AuthUser, id: string): Promise<CardOperationResultDto> {
    return this.changeState(user, id, { kind: 'TERMINATE', target: 'TERMINATED', call: (cardId) => this.provider.terminate(cardId) });
  }

  private async changeState(user: AuthUser, id: string, change: StateChange): Promise<CardOperationResultDto> {
    const card = await this.runner.findForChange(user, id);
    refuseIfTerminated(card);
    const done = await this.runner.run({
      input: { cardUserId: card.cardUserId, cardId: card.id, requestedBy: user.id, kind: change.kind },
      call: () => change.call(card.providerCardId),
      record: (operation, answer) => {
        const reported = typeof answer?.status === 'string' ? PROVIDER_CARD_STATUS[answer.status.toLowerCase()] : undefined;
        if (reported && reported !== change.target) {
          this.runner.logger.warn(
            { cardId: card.id, operationId: operation.id, reported, expected: change.target },
            'card state change: the provider reports another status',
          );
        }
        return this.repository.completeCardOperation(
          operation.id,
          card.id,
          { status: 'SUCCEEDED', providerResponse: redact(answer) },
          { status: reported ?? change.target },
        );
      },
    });
    this.runner.logger.info(
      { cardId: card.id, operationId: done.operation.id, kind: change.kind, status: done.card.status },
      'card operation succeeded',
    );
    return cardOperationResult(done.operation, done.card, this.runner.currencies);
  }
}
