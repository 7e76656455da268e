import { Injectable } from '@nestjs/common';
import { auditEventOf } from '../audit/audit.service';
import type { AuthUser } from '../auth/auth.types';
import type { CardOperationDto } from '../cards/card-operations.dto';
import { CARD_OPERATIONS_TABLE, CardOperationsRepository } from '../cards/card-operations.repository';
import { CardsService } from '../cards/cards.service';
import { NotFoundError } from '../common/domain-error';
import { UUID_PATTERN } from '../common/pagination';
import type { ResolveCardOperationDto } from './resolutions.dto';
import { CARD_STATUS_AFTER, CardOperationNotResolvableError } from './resolution-rules';

/**
 * `POST /v1/card-operations/{id}/resolution`: a person decides an UNKNOWN card operation, through
 * the provider-operation lifecycle's resolution (resolveProviderOperation, in
 * CardOperationsRepository.resolveUnknownOperation: guarded, audited in the same transaction). A freeze,
 * unfreeze or termination declared SUCCEEDED changes the card's status with it; a money operation
 * or a sync leaves the stored balance alone (see CARD_STATUS_AFTER).
 */
@Injectable()
export class ResolveCardOperationUseCase {
  constructor(
    private readonly cards: CardOperationsRepository,
    private readonly cardsService: CardsService,
  ) {}

  async execute(user: AuthUser, id: string, dto: ResolveCardOperationDto): Promise<CardOperationDto> {
    const operation = UUID_PATTERN.test(id) ? await this.cards.findOperation(id) : undefined;
    if (!operation) throw new NotFoundError(`No card operation ${id}.`);
    if (operation.status !== 'UNKNOWN') throw new CardOperationNotResolvableError(id, operation.status);
    const resolved = await this.cards.resolveUnknownOperation(
      id,
      {
        status: dto.status,
        actor: user.id,
        note: dto.note,
        cardStatus: dto.status === 'SUCCEEDED' ? CARD_STATUS_AFTER[operation.kind] : undefined,
      },
      auditEventOf(
        user,
        CARD_OPERATIONS_TABLE.resolutionAudit.action,
        { type: CARD_OPERATIONS_TABLE.resolutionAudit.resourceType, id },
        { note: dto.note, details: { kind: operation.kind, cardId: operation.cardId } },
      ),
    );
    if (!resolved) {
      const now = await this.cards.findOperation(id);
      throw new CardOperationNotResolvableError(id, now?.status ?? operation.status);
    }
    return this.cardsService.operation(user, id);
  }
}
