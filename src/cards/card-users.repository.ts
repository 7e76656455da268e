import { Injectable } from '@nestjs/common';
import { keysetListStatements, type ListFilter } from '../database/list-queries';
import { namedParameters, parameterValues } from '../database/named-parameters';
import { Database } from '../database/database';
import { column, sqlStatement } from '../database/sql-statement';
import { isUniqueViolation } from '../database/unique-violation';
import type { CardUserFilter, CardUserRecord, CardUserRefresh, NewCardUser } from './card.types';
import { CARD_USER_ROW } from './cards.rows';

/** The SQL of CardUsersRepository, written out (listed in src/queries/card-users.repository.sql). */
const repository = 'card-users.repository';

const NEW_CARD_USER = namedParameters({
  ownerId: column.text,
  providerUserId: column.text,
  providerReference: column.text,
  firstName: column.text,
  lastName: column.text,
  email: column.text,
  countryCode: column.text,
  contact: column.text,
  dob: column.text,
  isBusiness: column.bool,
  billingAddress: column.text,
  billingCity: column.text,
  billingCountry: column.text,
  idNumberEncrypted: column.text,
  businessName: column.text.orNull,
  billingState: column.text,
  billingPostalCode: column.text,
});
const p = NEW_CARD_USER;

const CARD_USER_INSERT = sqlStatement(
  repository,
  'createCardUser',
  'card_users_insert',
  `
  INSERT INTO card_users AS u (id, owner_id, provider_user_id, provider_reference, first_name, last_name, email, country_code, contact,
    dob, is_business, billing_address, billing_city, billing_country, id_number_encrypted, business_name, billing_state,
    billing_postal_code, provider_card_ids, created_at, updated_at)
  VALUES (gen_random_uuid(), ${p.ownerId}, ${p.providerUserId}, ${p.providerReference}, ${p.firstName}, ${p.lastName}, ${p.email},
    ${p.countryCode}, ${p.contact}, ${p.dob}, ${p.isBusiness}, ${p.billingAddress}, ${p.billingCity}, ${p.billingCountry},
    ${p.idNumberEncrypted}, ${p.businessName}, ${p.billingState}, ${p.billingPostalCode}, '{}', now(), now())
  RETURNING ${CARD_USER_ROW.select('u')}`,
  CARD_USER_ROW.columns,
);

const CARD_USER_FIND = sqlStatement(
  repository,
  'findCardUser',
  'card_users_find',
  `
  SELECT ${CARD_USER_ROW.select('u')} FROM card_users u WHERE u.id = $1::uuid`,
  CARD_USER_ROW.columns,
);

/** What the provider said of a user, merged in: a NULL leaves the stored value. */
const CARD_USER_REFRESH = sqlStatement(
  repository,
  'refreshCardUser',
  'card_users_refresh',
  `
  UPDATE card_users AS u
  SET first_name = COALESCE($2::text, u.first_name), last_name = COALESCE($3::text, u.last_name), email = COALESCE($4::text, u.email),
    provider_card_ids = COALESCE($5::text[], u.provider_card_ids), last_synced_at = now(), updated_at = now()
  WHERE u.id = $1::uuid
  RETURNING ${CARD_USER_ROW.select('u')}`,
  CARD_USER_ROW.columns,
);

export const CARD_USER_FILTERS: readonly ListFilter<CardUserFilter>[] = [['ownerId', 'owner', (n) => `u.owner_id = $${n}::text`]];
export const CARD_USER_LIST = keysetListStatements({
  repository,
  usedBy: 'listCardUsers',
  prefix: 'card_users_page',
  from: 'card_users u',
  time: 'u.created_at',
  select: CARD_USER_ROW.select('u'),
  columns: CARD_USER_ROW.columns,
  filters: CARD_USER_FILTERS,
});

/**
 * Card users: with CardListsRepository (their list), the only place that reaches their table. Nothing
 * here ever receives a full card number; the id number arrives sealed and is never read back.
 */
@Injectable()
export class CardUsersRepository {
  constructor(private readonly database: Database) {}

  /** undefined when the provider's user_id or reference is already stored (unique violation). */
  async createCardUser(user: NewCardUser): Promise<CardUserRecord | undefined> {
    try {
      const [row] = await this.database.run(CARD_USER_INSERT, parameterValues(NEW_CARD_USER, user));
      return CARD_USER_ROW.read(row);
    } catch (error) {
      if (isUniqueViolation(error)) return undefined;
      throw error;
    }
  }

  async findCardUser(id: string): Promise<CardUserRecord | undefined> {
    const [row] = await this.database.run(CARD_USER_FIND, [id]);
    return row && CARD_USER_ROW.read(row);
  }

  /** Merges what the provider said of the user into what we store. */
  async refreshCardUser(id: string, refresh: CardUserRefresh): Promise<CardUserRecord> {
    const [row] = await this.database.run(CARD_USER_REFRESH, [
      id,
      refresh.firstName || null,
      refresh.lastName || null,
      refresh.email || null,
      refresh.providerCardIds ?? null,
    ]);
    if (!row) throw new Error(`card user ${id} vanished`);
    return CARD_USER_ROW.read(row);
  }
}
