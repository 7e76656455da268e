import { Injectable } from '@nestjs/common';
import { keysetListStatements, type ListFilter } from '../database/list-queries';
import { namedParameters, parameterValues } from '../database/named-parameters';
import { Database } from '../database/database';
import { column, sqlStatement } from '../database/sql-statement';
import type { CardFilter, CardRecord, CardRefresh } from './card.types';
import { CARD_CHANGE_PARAMETERS, CARD_ROW, cardChangeSet } from './cards.rows';

/** The SQL of CardsRepository, written out (listed in src/queries/cards.repository.sql). */
const repository = 'cards.repository';

const CARD_FIND = sqlStatement(
  repository,
  'findCard',
  'cards_find',
  `
  SELECT ${CARD_ROW.select('c')} FROM cards c WHERE c.id = $1::uuid`,
  CARD_ROW.columns,
);

export const CARDS_OF_USER = sqlStatement(
  repository,
  'cardsOfUser',
  'cards_of_user',
  `
  SELECT ${CARD_ROW.select('c')} FROM cards c WHERE c.card_user_id = $1::uuid ORDER BY c.created_at, c.id`,
  CARD_ROW.columns,
);

export const CARD_FILTERS: readonly ListFilter<CardFilter>[] = [
  ['ownerId', 'owner', (n) => `c.owner_id = $${n}::text`],
  ['cardUserId', 'user', (n) => `c.card_user_id = $${n}::uuid`],
  ['status', 'status', (n) => `c.status = $${n}::"CardStatus"`],
];
export const CARD_LIST = keysetListStatements({
  repository,
  usedBy: 'listCards',
  prefix: 'cards_page',
  from: 'cards c',
  time: 'c.created_at',
  select: CARD_ROW.select('c'),
  columns: CARD_ROW.columns,
  filters: CARD_FILTERS,
});

const REFRESH = namedParameters({ cardId: column.uuid, ...CARD_CHANGE_PARAMETERS });

/** What the provider's card details said (a NULL leaves the stored value). */
const CARD_REFRESH = sqlStatement(
  repository,
  'refreshCard',
  'cards_refresh',
  `
  UPDATE cards AS c SET ${cardChangeSet(REFRESH)}
  WHERE c.id = ${REFRESH.cardId}
  RETURNING ${CARD_ROW.select('c')}`,
  CARD_ROW.columns,
);

/**
 * Cards: with CardListsRepository (their list) and CardOperationsRepository (what an operation's
 * completion does to a card), the only places that reach their table. A card is stored with its
 * last four digits only.
 */
@Injectable()
export class CardsRepository {
  constructor(private readonly database: Database) {}

  async findCard(id: string): Promise<CardRecord | undefined> {
    const [row] = await this.database.run(CARD_FIND, [id]);
    return row && CARD_ROW.read(row);
  }

  async cardsOfUser(cardUserId: string): Promise<CardRecord[]> {
    return (await this.database.run(CARDS_OF_USER, [cardUserId])).map(CARD_ROW.read);
  }

  /**
   * What the provider's card details said. A terminated card stays terminated whatever comes
   * back (termination cannot be undone); a card the provider reports terminated becomes so here.
   */
  async refreshCard(id: string, refresh: CardRefresh): Promise<CardRecord> {
    const values = parameterValues(REFRESH, {
      cardId: id,
      cardStatus: refresh.status ?? null,
      balance: refresh.balance ?? null,
      expiry: refresh.expiry || null,
    });
    const [row] = await this.database.run(CARD_REFRESH, values);
    if (!row) throw new Error(`card ${id} vanished`);
    return CARD_ROW.read(row);
  }
}
