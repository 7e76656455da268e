import { Injectable } from '@nestjs/common';
import type { PageRequest } from '../common/pagination';
import { keysetListStatementFor, keysetListValues } from '../database/list-queries';
import { ReplicaReads, type ListReader } from '../database/replica-reads.service';
import type { CardFilter, CardOperationFilter, CardOperationRecord, CardRecord, CardUserFilter, CardUserRecord } from './card.types';
import { OPERATION_FILTERS, OPERATION_LIST } from './card-operations.repository';
import { CARD_USER_FILTERS, CARD_USER_LIST } from './card-users.repository';
import { CARD_FILTERS, CARD_LIST, CARDS_OF_USER } from './cards.repository';
import { CARD_ROW, CARD_USER_ROW, OPERATION_ROW } from './cards.rows';

/**
 * The lists of card users, cards and card operations: finance's (and admin's) on the replica while
 * it is fresh, a customer's own on the primary (ReplicaReads). The statements are those of CardUsersRepository, CardsRepository and CardOperationsRepository.
 */
@Injectable()
export class CardListsRepository {
  constructor(private readonly reads: ReplicaReads) {}

  async listCardUsers(reader: ListReader, filter: CardUserFilter, page: PageRequest): Promise<CardUserRecord[]> {
    const statement = keysetListStatementFor(CARD_USER_LIST, CARD_USER_FILTERS, filter);
    return (await this.reads.runFor(reader, statement, keysetListValues(CARD_USER_FILTERS, filter, page))).map(CARD_USER_ROW.read);
  }

  /** The cards of one card user of a list, read where the list was. */
  async cardsOfUser(reader: ListReader, cardUserId: string): Promise<CardRecord[]> {
    return (await this.reads.runFor(reader, CARDS_OF_USER, [cardUserId])).map(CARD_ROW.read);
  }

  async listCards(reader: ListReader, filter: CardFilter, page: PageRequest): Promise<CardRecord[]> {
    const statement = keysetListStatementFor(CARD_LIST, CARD_FILTERS, filter);
    return (await this.reads.runFor(reader, statement, keysetListValues(CARD_FILTERS, filter, page))).map(CARD_ROW.read);
  }

  async listOperations(reader: ListReader, filter: CardOperationFilter, page: PageRequest): Promise<CardOperationRecord[]> {
    const statement = keysetListStatementFor(OPERATION_LIST, OPERATION_FILTERS, filter);
    return (await this.reads.runFor(reader, statement, keysetListValues(OPERATION_FILTERS, filter, page))).map(OPERATION_ROW.read);
  }
}
