import { Inject, Injectable, Optional, type OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { JWTVerifyGetKey } from 'jose';
import type { Logger } from 'pino';
import { ConfigValidationError, type AppConfig } from '../config/app-config';
import type { OidcSettings } from '../config/oidc-settings';
import { APP_LOGGER } from '../logging/logging.module';
import { IdentityProviderUnavailableError } from './identity-provider-unavailable';
import { discoverIssuer, OidcDiscoveryRefused, type OidcMetadata } from './oidc-discovery';
import { remoteKeySet } from './remote-key-set';

/** One discovery request: the provider answers in milliseconds or is in trouble. */
const DISCOVERY_TIMEOUT_MS = 5_000;
/** After a failed discovery, requests are answered 503 at once for this long instead of each asking the provider again. */
export const DISCOVERY_RETRY_INTERVAL_MS = 5_000;

/**
 * The company's OpenID Connect provider (AUTH_OIDC_ISSUER): its discovery document, read at
 * start-up, and its signing keys (jose's remote key set at the document's `jwks_uri`, cached and
 * refetched on an unknown `kid`, so the provider's key rotation works; both downloads bounded while
 * they stream).
 *
 * At start-up a document that contradicts the configuration (another issuer, an http:// endpoint
 * off this machine) stops the service with exit 78; a provider that cannot be reached does not:
 * callbacks, health and other tokens do not need it. Discovery is then retried when a token needs
 * it (one attempt at a time, at most every DISCOVERY_RETRY_INTERVAL_MS), and such a token is
 * answered 503 `identity_provider_unavailable` until it succeeds.
 */
@Injectable()
export class OidcIssuer implements OnModuleInit {
  readonly settings?: OidcSettings;
  private discovered?: { metadata: OidcMetadata; keys: JWTVerifyGetKey };
  private attempt?: Promise<OidcMetadata>;
  private lastFailure?: { at: number; error: Error };

  constructor(
    config: ConfigService<AppConfig, true>,
    // Optional: an application without AUTH_OIDC_ISSUER (a test module without logging) never logs here.
    @Optional() @Inject(APP_LOGGER) private readonly logger?: Logger,
  ) {
    this.settings = config.get('auth', { infer: true }).oidc;
  }

  async onModuleInit(): Promise<void> {
    if (!this.settings) return;
    try {
      await this.discover();
    } catch (error) {
      if (error instanceof OidcDiscoveryRefused) throw new ConfigValidationError([error.message]);
      this.logger?.warn(
        { err: error, issuer: this.settings.issuer },
        'OpenID Connect provider unreachable at start-up: retried when a token needs it',
      );
    }
  }

  /** The discovered metadata, or undefined while discovery has not succeeded (no request is made). */
  current(): OidcMetadata | undefined {
    return this.discovered?.metadata;
  }

  /** The metadata, discovered now when it is not yet; IdentityProviderUnavailableError when it cannot be. */
  async metadata(): Promise<OidcMetadata> {
    if (this.discovered) return this.discovered.metadata;
    if (!this.settings) throw new Error('OidcIssuer: AUTH_OIDC_ISSUER is not set');
    if (this.lastFailure && Date.now() - this.lastFailure.at < DISCOVERY_RETRY_INTERVAL_MS) throw this.unavailable(this.lastFailure.error);
    try {
      return await this.discover();
    } catch (error) {
      throw this.unavailable(error as Error);
    }
  }

  /** jose's key getter over the issuer's keys, for jwtVerify. */
  readonly keys: JWTVerifyGetKey = async (header, token) => {
    await this.metadata();
    return this.discovered!.keys(header, token);
  };

  private discover(): Promise<OidcMetadata> {
    this.attempt ??= discoverIssuer(this.settings!.issuer, { timeoutMs: DISCOVERY_TIMEOUT_MS })
      .then((metadata) => {
        this.discovered = { metadata, keys: remoteKeySet(new URL(metadata.jwksUri)) };
        this.lastFailure = undefined;
        this.logger?.info({ issuer: metadata.issuer, jwksUri: metadata.jwksUri }, 'OpenID Connect provider discovered');
        return metadata;
      })
      .catch((error: Error) => {
        this.lastFailure = { at: Date.now(), error };
        // A refusal is a mistake to fix (at start-up it also stops the start with exit 78; later, the provider changed its document).
        if (error instanceof OidcDiscoveryRefused) this.logger?.error({ err: error }, 'OpenID Connect discovery document refused');
        throw error;
      })
      .finally(() => {
        this.attempt = undefined;
      });
    return this.attempt;
  }

  private unavailable(cause: Error): IdentityProviderUnavailableError {
    return new IdentityProviderUnavailableError('The bearer token could not be verified: the identity provider cannot be reached', {
      cause,
    });
  }
}
