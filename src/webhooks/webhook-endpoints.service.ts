import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Logger } from 'pino';
import { auditEventOf } from '../audit/audit.service';
import type { AuthUser } from '../auth/auth.types';
import { NotFoundError } from '../common/domain-error';
import { afterCursor, DEFAULT_PAGE_SIZE, positionOf, toPage, UUID_PATTERN } from '../common/pagination';
import { SecretBox } from '../common/secret-box';
import type { AppConfig } from '../config/app-config';
import { APP_LOGGER } from '../logging/logging.module';
import { registerSecretValue } from '../logging/redaction';
import { endpointOrigin } from './endpoint-origin';
import { WebhookSecretUnreadable, type UnreadableSecret } from './webhook-secret-unreadable';
import { newWebhookSecret } from './webhook-signature';
import { checkWebhookHost, checkWebhookUrl, WebhookUrlRefused, type WebhookUrlPolicy } from './webhook-url-policy';
import type {
  CreatedWebhookEndpointDto,
  CreateWebhookEndpointDto,
  ListWebhookEndpointsQueryDto,
  UpdateWebhookEndpointDto,
  WebhookEndpointDto,
  WebhookEndpointSecretDto,
} from './webhook-endpoints.dto';
import { WebhookUrlNotAllowedError } from './webhook-endpoints.errors';
import { WebhookEndpointsRepository } from './webhook-endpoints.repository';
import {
  webhookSecretPurpose,
  type WebhookEndpointRecord,
  type WebhookEndpointSealedSecrets,
  type WebhookSigningTarget,
} from './webhook-endpoints.types';

/** The reason a DISABLED set by a person carries (the delivery job writes its own when it gives up on an endpoint). */
const DISABLED_BY_ADMIN = 'Disabled by an administrator.';

/**
 * The merchant's webhook endpoints: registration (URL policy, a fresh secret shown once and kept
 * sealed), changes, deletion and secret rotation, each with its audit event in its transaction;
 * and, for the delivery worker, an endpoint's signing secrets opened (`signingTarget`, `signingSecrets`).
 */
@Injectable()
export class WebhookEndpointsService {
  private readonly box: SecretBox;
  private readonly policy: WebhookUrlPolicy;

  constructor(
    private readonly endpoints: WebhookEndpointsRepository,
    config: ConfigService<AppConfig, true>,
    @Inject(APP_LOGGER) private readonly logger: Logger,
  ) {
    this.box = new SecretBox(config.get('dataEncryptionKey', { infer: true }), config.get('dataEncryptionPreviousKeys', { infer: true }));
    const webhooks = config.get('webhooks', { infer: true });
    this.policy = { allowInsecureUrls: webhooks.allowInsecureUrls, allowPrivateUrls: webhooks.allowPrivateUrls };
  }

  async create(user: AuthUser, dto: CreateWebhookEndpointDto): Promise<CreatedWebhookEndpointDto> {
    const url = await this.checkedUrl(dto.url);
    const id = randomUUID();
    const secret = newWebhookSecret();
    registerSecretValue(secret);
    const stored = await this.endpoints.create(
      { id, url, events: distinct(dto.events ?? []), description: dto.description ?? null, secretEncrypted: this.seal(id, secret) },
      (row) =>
        auditEventOf(
          user,
          'webhook_endpoint.created',
          { type: 'webhook_endpoint', id },
          { details: { ...auditedUrl(row.url), events: row.events } },
        ),
    );
    this.logger.info({ webhookEndpointId: id }, 'webhook endpoint registered');
    return { ...toDto(stored), secret };
  }

  async get(id: string): Promise<WebhookEndpointDto> {
    return toDto(await this.find(id));
  }

  /** A page of endpoints (the controller declares it a WebhookEndpointPageDto). */
  async list(query: ListWebhookEndpointsQueryDto) {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.endpoints.list({ status: query.status }, { limit: limit + 1, after: afterCursor(query.cursor) });
    return toPage(rows, limit, positionOf, toDto);
  }

  /** Changes what the request names, the rest as it is; a new URL passes the URL policy first. */
  async update(user: AuthUser, id: string, dto: UpdateWebhookEndpointDto): Promise<WebhookEndpointDto> {
    if (!UUID_PATTERN.test(id)) throw notFound(id);
    const url = dto.url === undefined ? undefined : await this.checkedUrl(dto.url);
    const events = dto.events === undefined ? undefined : distinct(dto.events);
    const updated = await this.endpoints.update(
      id,
      (before) => ({
        url: url ?? before.url,
        events: events ?? before.events,
        description: dto.description === undefined ? before.description : dto.description,
        status: dto.status ?? before.status,
      }),
      DISABLED_BY_ADMIN,
      (before, after) =>
        auditEventOf(user, 'webhook_endpoint.updated', { type: 'webhook_endpoint', id }, { details: changesOf(before, after) }),
    );
    if (!updated) throw notFound(id);
    this.logger.info({ webhookEndpointId: id, status: updated.status }, 'webhook endpoint changed');
    return toDto(updated);
  }

  async delete(user: AuthUser, id: string): Promise<void> {
    const deleted =
      UUID_PATTERN.test(id) &&
      (await this.endpoints.delete(id, auditEventOf(user, 'webhook_endpoint.deleted', { type: 'webhook_endpoint', id })));
    if (!deleted) throw notFound(id);
    this.logger.info({ webhookEndpointId: id }, 'webhook endpoint deleted');
  }

  /** A new secret, shown once; the current one keeps signing beside it for 24 hours. */
  async rotateSecret(user: AuthUser, id: string): Promise<WebhookEndpointSecretDto> {
    if (!UUID_PATTERN.test(id)) throw notFound(id);
    const secret = newWebhookSecret();
    registerSecretValue(secret);
    const rotated = await this.endpoints.rotateSecret(
      id,
      this.seal(id, secret),
      auditEventOf(user, 'webhook_endpoint.secret_rotated', { type: 'webhook_endpoint', id }),
    );
    if (!rotated?.previousSecretUntil) throw notFound(id);
    this.logger.info({ webhookEndpointId: id }, 'webhook endpoint secret rotated');
    return { secret, previousSecretUntil: rotated.previousSecretUntil.toISOString() };
  }

  /**
   * For the delivery worker: the endpoint's url, status and the secrets that sign a delivery now,
   * opened (the current one first, the previous one while it still signs: 24 hours after a
   * rotation, by the database clock). Undefined when the endpoint no longer exists. The secrets
   * are registered for log redaction; never log, store or answer them.
   */
  async signingTarget(endpointId: string): Promise<WebhookSigningTarget | undefined> {
    const sealed = await this.endpoints.findSigning(endpointId);
    return sealed && { id: sealed.id, url: sealed.url, status: sealed.status, secrets: this.signingSecrets(sealed) };
  }

  /**
   * The opened secrets of a row read with `SIGNING_COLUMNS`/`SIGNING_SELECT` (webhook-endpoints.repository.ts),
   * in the order `webhookSignatureHeader` takes them: current, then previous while it signs. A
   * previous secret that no configured key opens never stops a delivery: it is left out, logged
   * (its key id, never a value) and reported to `unreadable`. A current one that none opens throws
   * `WebhookSecretUnreadable`: nothing is sent unsigned, nor signed with the previous secret alone.
   */
  signingSecrets(
    sealed: Pick<WebhookEndpointSealedSecrets, 'id' | 'secretEncrypted' | 'previousSecretEncrypted'>,
    unreadable: (which: UnreadableSecret) => void = () => undefined,
  ): string[] {
    let current: string;
    try {
      current = this.open(sealed.id, sealed.secretEncrypted);
    } catch (error) {
      unreadable('current');
      throw new WebhookSecretUnreadable(sealed.id, (error as Error).message);
    }
    if (!sealed.previousSecretEncrypted) return [current];
    try {
      return [current, this.open(sealed.id, sealed.previousSecretEncrypted)];
    } catch (error) {
      unreadable('previous');
      this.logger.warn(
        { webhookEndpointId: sealed.id, reason: (error as Error).message },
        'previous webhook secret cannot be opened: deliveries are signed with the current secret only',
      );
      return [current];
    }
  }

  private open(endpointId: string, sealed: string): string {
    const secret = this.box.decrypt(sealed, webhookSecretPurpose(endpointId));
    registerSecretValue(secret);
    return secret;
  }

  private seal(id: string, secret: string): string {
    return this.box.encrypt(secret, webhookSecretPurpose(id));
  }

  /** The URL as it will be stored, or 400 `webhook_url_not_allowed` naming the rule it breaks. */
  private async checkedUrl(url: string): Promise<string> {
    try {
      const parsed = checkWebhookUrl(url, this.policy);
      await checkWebhookHost(parsed, this.policy);
      return url;
    } catch (error) {
      if (error instanceof WebhookUrlRefused) throw new WebhookUrlNotAllowedError(error.message);
      throw error;
    }
  }

  private async find(id: string): Promise<WebhookEndpointRecord> {
    const endpoint = UUID_PATTERN.test(id) ? await this.endpoints.findById(id) : undefined;
    if (!endpoint) throw notFound(id);
    return endpoint;
  }
}

const notFound = (id: string) => new NotFoundError(`No webhook endpoint ${id}.`);

/** Each event type once, in the order given. */
const distinct = (events: readonly string[]): string[] => [...new Set(events)];

/** The audit trail names the URL by its origin (endpointOrigin): finance reads the trail. */
function auditedUrl(url: string): { urlOrigin: string } {
  return { urlOrigin: endpointOrigin(url) };
}

/** What a PATCH changed, for the audit event (a URL as its origin, with whether it changed at all). */
function changesOf(before: WebhookEndpointRecord, after: WebhookEndpointRecord): Record<string, unknown> {
  const changed: Record<string, unknown> = {};
  if (before.url !== after.url) changed.url = { from: auditedUrl(before.url).urlOrigin, to: auditedUrl(after.url).urlOrigin };
  if (before.events.join('\n') !== after.events.join('\n')) changed.events = { from: before.events, to: after.events };
  if (before.description !== after.description) changed.description = { from: before.description, to: after.description };
  if (before.status !== after.status) changed.status = { from: before.status, to: after.status };
  return { changed: Object.keys(changed), ...changed };
}

function toDto(endpoint: WebhookEndpointRecord): WebhookEndpointDto {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    status: endpoint.status,
    disabledReason: endpoint.disabledReason,
    createdAt: endpoint.createdAt.toISOString(),
    updatedAt: endpoint.updatedAt.toISOString(),
  };
}
