import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Logger } from 'pino';
import { canSee, hasRole, visibleOwnerOf, type AuthUser } from '../auth/auth.types';
import { NotFoundError } from '../common/domain-error';
import { afterCursor, DEFAULT_PAGE_SIZE, positionOf, toPage, UUID_PATTERN } from '../common/pagination';
import { SecretBox } from '../common/secret-box';
import type { AppConfig } from '../config/app-config';
import { APP_LOGGER } from '../logging/logging.module';
import { registerSecretValue } from '../logging/redaction';
import { WalletLinkClient } from '../provider/clients/wallet-link.client';
import { ProviderBadResponseError } from '../provider/provider.errors';
import { apikeyPurpose, type WalletLinkRecord } from './wallet-link.types';
import type { CreateWalletLinkDto, ListWalletLinksQueryDto, WalletLinkDto, WalletLinkPageDto } from './wallet-links.dto';
import { WalletLinkEmailNotVerifiedError, WalletLinkExistsError, WalletLinkInProgressError } from './wallet-links.errors';
import { WalletLinksRepository } from './wallet-links.repository';

/** Retry-After of `wallet_link_in_progress`: a link is one provider call, usually well under a second. */
const IN_PROGRESS_RETRY_AFTER_SECONDS = 2;

@Injectable()
export class WalletLinksService {
  private readonly box: SecretBox;
  /**
   * A claim outlives the longest provider exchange it covers (token request, call, token renewal,
   * retry: each bounded by the timeout); past it, a claim whose holder died is taken over.
   */
  private readonly claimLeaseMs: number;

  constructor(
    private readonly links: WalletLinksRepository,
    private readonly client: WalletLinkClient,
    config: ConfigService<AppConfig, true>,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {
    this.box = new SecretBox(config.get('dataEncryptionKey', { infer: true }), config.get('dataEncryptionPreviousKeys', { infer: true }));
    this.claimLeaseMs = 4 * config.get('provider', { infer: true }).timeoutMs + 10_000;
  }

  /**
   * Links the caller's wallet user at the provider (`link/new`) and keeps the matricule, with the
   * provider's apikey encrypted. An email that already has a link here is refused before any
   * provider call (409 `wallet_link_exists`): the provider refuses a second link of an email
   * anyway, and the refusal would spend a call of the hourly budget. The email is claimed in the
   * database before the provider is asked, so concurrent requests for one email, on any instance,
   * make one provider call: the others are answered 409 `wallet_link_in_progress` (Retry-After).
   */
  async create(user: AuthUser, dto: CreateWalletLinkDto): Promise<WalletLinkDto> {
    refuseUnlessOwnEmail(user, dto.email);
    await this.refuseIfLinked(user, dto.email);
    const claimId = await this.links.claim(
      { ownerId: user.id, email: dto.email, phone: dto.phone, phoneCountry: dto.phoneCountry },
      this.claimLeaseMs,
    );
    if (!claimId) {
      await this.refuseIfLinked(user, dto.email);
      throw new WalletLinkInProgressError(IN_PROGRESS_RETRY_AFTER_SECONDS);
    }

    let stored: WalletLinkRecord | undefined;
    try {
      stored = await this.linkClaimed(claimId, dto);
    } finally {
      // A refusal, a lost answer or an unreadable one: the email is free again for a retry.
      if (!stored) await this.links.releaseClaim(claimId);
    }
    this.logger.info({ walletLinkId: stored.id, matricule: stored.matricule }, 'wallet linked');
    return toDto(stored);
  }

  private async linkClaimed(claimId: string, dto: CreateWalletLinkDto): Promise<WalletLinkRecord> {
    const answer = await this.client.linkUser({ email: dto.email, phone: dto.phone, phoneCountry: dto.phoneCountry });
    const apikey = typeof answer?.apikey === 'string' && answer.apikey !== '' ? answer.apikey : undefined;
    const matricule = typeof answer?.matricule === 'string' && answer.matricule.trim() !== '' ? answer.matricule.trim() : undefined;
    if (apikey) registerSecretValue(apikey);
    if (!apikey || !matricule) {
      // The provider linked someone but we cannot keep it: say so loudly (without the answer itself).
      this.logger.error({ hasApikey: Boolean(apikey), hasMatricule: Boolean(matricule) }, 'wallet link answer without apikey or matricule');
      throw new ProviderBadResponseError('The payment provider linked the wallet but its answer lacked the apikey or the matricule.');
    }
    const stored = await this.links.completeClaim(claimId, {
      matricule,
      apikeyEncrypted: this.box.encrypt(apikey, apikeyPurpose(matricule)),
    });
    if (!stored) {
      this.logger.error({ matricule }, 'the provider returned a matricule that is already stored, or the claim lapsed');
      throw new WalletLinkExistsError(`The payment provider answered with matricule ${matricule}, which is already linked here.`);
    }
    return stored;
  }

  /** 409 `wallet_link_exists` when the email has a link here, naming it only to its owner. */
  private async refuseIfLinked(user: AuthUser, email: string): Promise<void> {
    const existing = await this.links.findByEmail(email);
    const own = existing.find((link) => link.ownerId === user.id);
    if (own)
      throw new WalletLinkExistsError(`You already linked ${own.email} (wallet link ${own.id}).`, { id: own.id, matricule: own.matricule });
    if (existing.length > 0) throw new WalletLinkExistsError('This email is already linked to a wallet.');
  }

  async get(user: AuthUser, id: string): Promise<WalletLinkDto> {
    return toDto(await this.findVisible(user, id));
  }

  async list(user: AuthUser, query: ListWalletLinksQueryDto): Promise<WalletLinkPageDto> {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.links.list({ ownerId: visibleOwnerOf(user) }, { limit: limit + 1, after: afterCursor(query.cursor) });
    return toPage(rows, limit, positionOf, toDto);
  }

  /** The clear apikey of a link, for server-side use only (never an HTTP answer). */
  async apikeyOf(id: string): Promise<string> {
    const link = UUID_PATTERN.test(id) ? await this.links.findById(id) : undefined;
    if (!link) throw new NotFoundError(`No wallet link ${id}.`);
    const apikey = this.box.decrypt(link.apikeyEncrypted, apikeyPurpose(link.matricule));
    registerSecretValue(apikey);
    return apikey;
  }

  /** Existing and visible to this user, or 404: another customer's link does not exist for them. */
  private async findVisible(user: AuthUser, id: string): Promise<WalletLinkRecord> {
    const link = UUID_PATTERN.test(id) ? await this.links.findById(id) : undefined;
    if (!link || !canSee(user, link.ownerId)) throw new NotFoundError(`No wallet link ${id}.`);
    return link;
  }
}

function toDto(link: WalletLinkRecord): WalletLinkDto {
  return {
    id: link.id,
    matricule: link.matricule,
    email: link.email,
    phone: link.phone,
    phoneCountry: link.phoneCountry,
    ownerId: link.ownerId,
    createdAt: link.createdAt.toISOString(),
  };
}

/**
 * Before anything is read or sent: a customer may link only the email its token carries, verified
 * by the identity provider. Compared whole and case-insensitively, as the one-link-per-email rule
 * (`email_key`, lower(email)) already treats two spellings of an address as one.
 */
function refuseUnlessOwnEmail(user: AuthUser, email: string): void {
  if (hasRole(user, 'finance', 'admin')) return;
  if (user.email === undefined || user.emailVerified !== true) {
    throw new WalletLinkEmailNotVerifiedError(
      'A customer links only its own email: the token must carry it in `email`, with `email_verified: true`.',
    );
  }
  if (user.email.trim().toLowerCase() !== email.trim().toLowerCase()) {
    throw new WalletLinkEmailNotVerifiedError("A customer links only its own email: this is not the token's verified email.");
  }
}
