import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Logger } from 'pino';
import { canSee, listReaderOf, visibleOwnerOf, type AuthUser } from '../auth/auth.types';
import { NotFoundError } from '../common/domain-error';
import { ERASED_MARK } from '../common/erased-mark';
import { SecretBox } from '../common/secret-box';
import { unsafeTextReason } from '../common/validation';
import type { AppConfig } from '../config/app-config';
import { APP_LOGGER } from '../logging/logging.module';
import { CardsClient } from '../provider/clients/cards.client';
import { ProviderBadResponseError, ProviderError } from '../provider/provider.errors';
import type { CardUserBody } from '../provider/provider.types';
import { toCardUserDto, toOperationDto } from './card-mappers';
import type { CardUserRecord, CardUserRefresh } from './card.types';
import { afterCursor, DEFAULT_PAGE_SIZE, positionOf, toPage, UUID_PATTERN, type PageQueryDto } from '../common/pagination';
import type { CardUserDetailDto, CardUserDto, CardUserPageDto, CreateCardUserDto } from './card-users.dto';
import type { CardOperationPageDto, ListCardOperationsQueryDto } from './card-operations.dto';
import { CardUsersRepository } from './card-users.repository';
import { CardsRepository } from './cards.repository';
import { CardListsRepository } from './card-lists.repository';

/** Purpose bound to the sealed id number: a value sealed for another column does not open here. */
export const ID_NUMBER_PURPOSE = 'card_users.id_number';
const MAX_PROVIDER_IDENTIFIER_LENGTH = 255;

@Injectable()
export class CardUsersService {
  private readonly secretBox: SecretBox;
  private readonly logger: Logger;

  private readonly currencies: AppConfig['currencies'];

  constructor(
    private readonly repository: CardUsersRepository,
    private readonly cards: CardsRepository,
    private readonly lists: CardListsRepository,
    private readonly provider: CardsClient,
    config: ConfigService<AppConfig, true>,
    @Inject(APP_LOGGER) logger: Logger,
  ) {
    this.currencies = config.get('currencies', { infer: true });
    this.secretBox = new SecretBox(
      config.get('dataEncryptionKey', { infer: true }),
      config.get('dataEncryptionPreviousKeys', { infer: true }),
    );
    this.logger = logger.child({ component: 'cards' });
  }

  /**
   * Creates the user at the provider, then stores it with the provider's user_id and reference
   * (the id number sealed). Errors of the provider are answered as they are; an unknown outcome
   * (timeout, 5xx) is logged: the provider may hold a user we do not know, which costs no money.
   */
  async create(user: AuthUser, dto: CreateCardUserDto): Promise<CardUserDto> {
    const isBusiness = dto.isBusiness === true;
    const body: CardUserBody = {
      first_name: dto.firstName,
      last_name: dto.lastName,
      email: dto.email,
      country_code: dto.countryCode,
      contact: dto.contact,
      dob: dto.dob,
      is_business: isBusiness,
      billing_adress: dto.billingAddress,
      billing_city: dto.billingCity,
      billing_country: dto.billingCountry,
      id_number: dto.idNumber,
      business_name: dto.businessName ?? '',
      billing_state: dto.billingState,
      billing_postal_code: dto.billingPostalCode,
    };
    let created: { user_id?: unknown; reference?: unknown };
    try {
      created = await this.provider.createUser(body);
    } catch (error) {
      if (error instanceof ProviderError && !error.outcomeKnown) {
        this.logger.warn(
          { ownerId: user.id, code: error.code },
          'card user creation: outcome unknown, the provider may hold a user this service does not know',
        );
      }
      throw error;
    }
    // Checked before the insert: what the insert could refuse must be refused here, not after the
    // provider holds a user we then fail to store.
    if (!storableIdentifier(created?.user_id) || !storableIdentifier(created?.reference)) {
      this.logger.warn({ ownerId: user.id }, 'card user creation: the provider answered without a usable user_id or reference');
      throw new ProviderBadResponseError('The payment provider created the card user but did not say its user_id and reference.');
    }
    const stored = await this.repository.createCardUser({
      ownerId: user.id,
      providerUserId: created.user_id,
      providerReference: created.reference,
      firstName: dto.firstName,
      lastName: dto.lastName,
      email: dto.email,
      countryCode: dto.countryCode,
      contact: dto.contact,
      dob: dto.dob,
      isBusiness,
      billingAddress: dto.billingAddress,
      billingCity: dto.billingCity,
      billingCountry: dto.billingCountry,
      idNumberEncrypted: this.secretBox.encrypt(dto.idNumber, ID_NUMBER_PURPOSE),
      businessName: dto.businessName ? dto.businessName : null,
      billingState: dto.billingState,
      billingPostalCode: dto.billingPostalCode,
    });
    if (!stored) {
      this.logger.error(
        { ownerId: user.id, providerUserId: created.user_id },
        'card user creation: the provider answered with the user_id or reference of a card user already stored',
      );
      throw new ProviderBadResponseError('The payment provider answered with the identifiers of a card user this service already holds.');
    }
    this.logger.info({ cardUserId: stored.id, providerUserId: stored.providerUserId }, 'card user created');
    return toCardUserDto(stored, []);
  }

  /**
   * The stored user refreshed from the provider (by reference): names, email and the provider's
   * card ids are merged in. When the provider cannot be asked, the stored copy is answered with
   * `refreshed: false` rather than an error: it is a read.
   */
  async get(user: AuthUser, id: string): Promise<CardUserDetailDto> {
    let cardUser = await this.findVisible(user, id);
    let refreshed = false;
    // An erased card user (ERASED_MARK) is not asked for: the provider's answer would bring back, and log, what was erased.
    if (cardUser.email === ERASED_MARK) return { ...toCardUserDto(cardUser, await this.cards.cardsOfUser(cardUser.id)), refreshed };
    try {
      const details = await this.provider.getUser(cardUser.providerReference);
      cardUser = await this.repository.refreshCardUser(cardUser.id, readUserDetails(details));
      refreshed = true;
      if (nonEmptyString(details?.user_id) && details.user_id !== cardUser.providerUserId) {
        this.logger.warn({ cardUserId: cardUser.id }, 'card user refresh: the provider answered with another user_id');
      }
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      this.logger.warn({ cardUserId: cardUser.id, code: error.code }, 'card user refresh failed; answering the stored copy');
    }
    const cards = await this.cards.cardsOfUser(cardUser.id);
    return { ...toCardUserDto(cardUser, cards), refreshed };
  }

  /** Own card users (customer) or all (finance, admin), newest first. */
  async list(user: AuthUser, query: PageQueryDto): Promise<CardUserPageDto> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.lists.listCardUsers(
      listReaderOf(user),
      { ownerId: visibleOwnerOf(user) },
      { limit: limit + 1, after: afterCursor(query.cursor) },
    );
    const page = toPage(rows, limit, positionOf, (u) => u);
    const cards = await Promise.all(page.items.map((u) => this.lists.cardsOfUser(listReaderOf(user), u.id)));
    return { items: page.items.map((u, i) => toCardUserDto(u, cards[i])), nextCursor: page.nextCursor };
  }

  /** Every operation of this user's cards, card creations included (also those that produced no card). */
  async operations(user: AuthUser, id: string, query: ListCardOperationsQueryDto): Promise<CardOperationPageDto> {
    const cardUser = await this.findVisible(user, id);
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.lists.listOperations(
      listReaderOf(user),
      { cardUserId: cardUser.id, kind: query.kind, status: query.status },
      { limit: limit + 1, after: afterCursor(query.cursor) },
    );
    return toPage(rows, limit, positionOf, (o) => toOperationDto(o, this.currencies));
  }

  /** Existing and visible to this user, or 404: another customer's card user does not exist for them. */
  async findVisible(user: AuthUser, id: string): Promise<CardUserRecord> {
    const cardUser = UUID_PATTERN.test(id) ? await this.repository.findCardUser(id) : undefined;
    if (!cardUser || !canSee(user, cardUser.ownerId)) throw new NotFoundError(`No card user ${id}.`);
    return cardUser;
  }
}

function nonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

/** An identifier of the provider that can be stored and shown: non-empty text, no NUL, valid Unicode, bounded. */
function storableIdentifier(value: unknown): value is string {
  return storableText(value) && value.length <= MAX_PROVIDER_IDENTIFIER_LENGTH;
}

/** What the provider says of a user, keeping only what can be stored (its texts are not trusted to be valid Unicode). */
function readUserDetails(details: Record<string, unknown> | undefined): CardUserRefresh {
  const cards = Array.isArray(details?.cards) ? [...new Set(details.cards.filter(storableIdentifier))] : undefined;
  return {
    firstName: storableText(details?.first_name) ? details.first_name : undefined,
    lastName: storableText(details?.last_name) ? details.last_name : undefined,
    email: storableText(details?.email) ? details.email : undefined,
    providerCardIds: cards,
  };
}

/**
 * Text of the provider worth keeping. The provider boundary (scrubProviderBody) already replaced
 * what PostgreSQL cannot hold (NUL, unpaired surrogates) with U+FFFD, so that mark means the value
 * was not valid text at the provider: an identifier or a name carrying it is not taken.
 */
function storableText(value: unknown): value is string {
  return nonEmptyString(value) && unsafeTextReason(value) === undefined && !value.includes(REPLACEMENT_CHARACTER);
}

const REPLACEMENT_CHARACTER = '\uFFFD';
