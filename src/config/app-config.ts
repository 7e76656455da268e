import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { isTimeZone } from '../common/date-filter';
import type { CurrencyRule } from '../common/money';
import { openTelemetryProblems } from '../tracing/tracing';
import { readCurrencies } from './currency-settings';
import { DEV_ENCRYPTION_KEY, DEV_JWT_SECRET, SANDBOX_CREDENTIALS } from './development-defaults';
import { envReader } from './env-reader';
import { poolerSettings } from './pooler-config';
import { parseTrustProxy } from './trust-proxy';
import { customerHourlyLimit } from './customer-budget-settings';
import { checkOidcSettings, type OidcSettings } from './oidc-settings';
import { readRetentionSettings, type RetentionSettings } from './retention-settings';
import { replicaSettings, type ReplicaSettings } from './replica-config';
import { WEBHOOK_MAX_IN_FLIGHT, type WebhookSettings } from './webhook-settings';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A currency this service accepts: defined with Money (src/common depends on nothing of ours); configuration builds them. */
export type { CurrencyRule };

export interface AppConfig {
  nodeEnv: string;
  isProduction: boolean;
  port: number;
  /** Address the API listens on (HOST): 127.0.0.1 by default in development, 0.0.0.0 in production. */
  host: string;
  /**
   * SHUTDOWN_DRAIN_MS: after SIGTERM, how long the instance keeps serving with /health/ready at 503
   * before it stops accepting connections (5 s in production, 0 elsewhere).
   */
  shutdownDrainMs: number;
  /** Absent: the embedded PostgreSQL (PGlite) is started, data under `embeddedDataDir`. */
  databaseUrl?: string;
  /**
   * DATABASE_DIRECT_URL: PostgreSQL itself, for the work that needs a session of its own (the order
   * events' LISTEN, migrations) when DATABASE_URL goes through a pooler. Absent: DATABASE_URL is
   * used for it, unless it is pooled.
   */
  databaseDirectUrl?: string;
  /** `pgbouncer=true` on DATABASE_URL: a transaction-mode pooler, through which nothing may rely on session state. */
  databasePooled: boolean;
  /** DATABASE_REPLICA_URL and its lag bound: the standby of the finance reads (replica-config.ts); absent, every read is on the primary. */
  databaseReplica?: ReplicaSettings;
  embeddedDataDir: string;
  provider: {
    /** Absent: the built-in provider sandbox is started in-process. */
    baseUrl?: string;
    linkBaseUrl?: string;
    apiKey: string;
    secretKey: string;
    spAuthToken: string;
    timeoutMs: number;
    agentHourlyLimit: number;
    /** PROVIDER_CUSTOMER_HOURLY_LIMIT: the calls one customer's requests may cause per rolling hour (customerHourlyLimit). */
    customerHourlyLimit: number;
  };
  card: { operationParam: string; amountParam: string; currencyParam: string };
  publicBaseUrl: string;
  callbackSigningSecret: string;
  /** CALLBACK_SIGNING_PREVIOUS_SECRETS: older callback keys whose tokens are still accepted (never used to sign). */
  callbackSigningPreviousSecrets: string[];
  dataEncryptionKey: Buffer;
  /** DATA_ENCRYPTION_PREVIOUS_KEYS: older keys that still open what they sealed (never used to seal). */
  dataEncryptionPreviousKeys: Buffer[];
  auth: {
    jwtSecret?: string;
    /** AUTH_JWT_PREVIOUS_SECRETS: older HS256 secrets whose tokens are still accepted (loadAppConfig always sets it). */
    jwtPreviousSecrets?: string[];
    jwksUrl?: string;
    /** AUTH_JWT_ISSUER: when set, a token's `iss` must equal it. */
    issuer?: string;
    /** AUTH_JWT_AUDIENCE: when set, a token's `aud` (a string or a list) must hold it. */
    audience?: string;
    /** AUTH_MAX_TOKEN_TTL: the longest lifetime accepted, `exp` − `iat` and `exp` − now, in seconds. */
    maxTokenTtlSeconds?: number;
    /** AUTH_OIDC_*: tokens of the company's OpenID Connect provider, and Swagger UI's sign-in there. */
    oidc?: OidcSettings;
    /** AUTH_ROLES_CLAIM: the dotted path of the roles in the OpenID Connect provider's tokens (default `roles`). */
    rolesClaim?: string;
  };
  orderExpiryMinutes: number;
  /** Accepted currencies (CURRENCIES), keyed by ISO code. */
  currencies: Record<string, CurrencyRule>;
  logLevel: LogLevel;
  sandboxPort: number;
  /** Browser origins allowed by CORS (CORS_ORIGINS); empty: no cross-origin browser access. */
  corsOrigins: string[];
  /** Requests per minute per client IP on the public routes: callbacks, health, metrics, docs. */
  publicRateLimitPerMinute: number;
  /** Which proxies' X-Forwarded-For to believe (TRUST_PROXY): false, true, a hop count or addresses/CIDRs. */
  trustProxy: boolean | number | string[];
  /** HTTP_MAX_CONNECTIONS: connections accepted at once; unset, derived from the file-descriptor limit (connectionCap). */
  httpMaxConnections?: number;
  /**
   * REPORTS_TIMEZONE: the IANA time zone (default UTC) in which a day, or a moment without an offset,
   * is read in the `from` and `to` filters (src/common/date-filter.ts).
   */
  reportsTimeZone: string;
  /** Delivery of events to the merchant's webhook endpoints. */
  webhooks: WebhookSettings;
  /** How long the provider call log and the events are kept (RETENTION_*). */
  retention: RetentionSettings;
  /** Live-status streams (GET /v1/orders/{id}/events) this instance holds open at once. */
  sse: {
    /** SSE_MAX_STREAMS_PER_USER: per user id, counted on this instance. */
    maxStreamsPerUser: number;
    /** SSE_MAX_STREAMS: all users together, on this instance. */
    maxStreams: number;
    /** SSE_KEEPALIVE_SECONDS: a comment line is written to every open stream this often. */
    keepAliveSeconds: number;
  };
}

/** Loads `./.env` into the environment when it exists: a development convenience for every entry point. */
export function loadDotEnvIfPresent(path = '.env'): void {
  if (existsSync(path)) process.loadEnvFile(path);
}

export class ConfigValidationError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigValidationError';
  }
}

type Env = Record<string, string | undefined>;

/**
 * OpenTelemetry's own variables (`OTEL_*`), for the tracing SDK, which reads and checks them
 * itself (docs/configuration.md, "Tracing"): the only part of the environment it is given. The
 * protocol, which the SDK's exporters do not read, is checked with the rest (openTelemetryProblems).
 */
export function openTelemetryEnvironment(env: Env = process.env): Env {
  return Object.fromEntries(Object.entries(env).filter(([name]) => name.startsWith('OTEL_')));
}

/**
 * Reads and validates every variable of the contract once. Collects all problems before failing
 * so that an operator fixes a broken deployment in one pass. In production no development-only
 * default is used: a missing variable is a problem.
 */
export function loadAppConfig(env: Env = process.env): AppConfig {
  const problems: string[] = [];
  const nodeEnv = env.NODE_ENV?.trim() || 'development';
  const isProduction = nodeEnv === 'production';
  const { read, devOnly, integer, url, paramName, flag, retrySchedule, previousKeys, secretOfLength, base64Key } = envReader(env, {
    isProduction,
    problems,
  });

  const port = integer('PORT', 3000, 0, 65535);
  const host = read('HOST') ?? (isProduction ? '0.0.0.0' : '127.0.0.1');
  if (isIP(host) === 0 && !/^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$/.test(host))
    problems.push(`HOST must be an IP address or a host name, e.g. 127.0.0.1 or 0.0.0.0 (got "${host}")`);
  const databaseUrl = url(
    'DATABASE_URL',
    devOnly('DATABASE_URL', () => undefined, 'a PostgreSQL URL'),
  );
  if (databaseUrl && !/^postgres(ql)?:/.test(databaseUrl)) problems.push('DATABASE_URL must be a postgres:// or postgresql:// URL');
  const { databasePooled, databaseDirectUrl } = poolerSettings(databaseUrl, url('DATABASE_DIRECT_URL', read('DATABASE_DIRECT_URL')), {
    isProduction,
    problems,
  });
  const baseUrl = url(
    'PROVIDER_BASE_URL',
    devOnly('PROVIDER_BASE_URL', () => undefined, "the provider's {base_url}"),
  );
  const linkBaseUrl = url('PROVIDER_LINK_BASE_URL', read('PROVIDER_LINK_BASE_URL')) ?? baseUrl;
  const apiKey = devOnly('PROVIDER_API_KEY', () => SANDBOX_CREDENTIALS.apiKey, 'public_apikey / x-api-key');
  const secretKey = devOnly('PROVIDER_SECRET_KEY', () => SANDBOX_CREDENTIALS.secretKey, 'private_secretkey');
  const spAuthToken = devOnly('PROVIDER_SP_AUTH_TOKEN', () => SANDBOX_CREDENTIALS.spAuthToken, 'x-sp-auth-token of the card endpoints');
  const publicBaseUrl = url(
    'PUBLIC_BASE_URL',
    devOnly('PUBLIC_BASE_URL', () => `http://localhost:${port}`, 'public URL of this service, for callback URLs'),
  );
  const callbackSigningSecret = devOnly('CALLBACK_SIGNING_SECRET', () => randomBytes(32).toString('base64'), 'key of the callback tokens');
  if (callbackSigningSecret !== undefined && callbackSigningSecret.length < 32)
    problems.push('CALLBACK_SIGNING_SECRET must be at least 32 characters');
  const encryptionKeyText = devOnly('DATA_ENCRYPTION_KEY', () => DEV_ENCRYPTION_KEY, '32 random bytes in base64: openssl rand -base64 32');
  let dataEncryptionKey = Buffer.alloc(0);
  if (encryptionKeyText !== undefined) {
    dataEncryptionKey = Buffer.from(encryptionKeyText, 'base64');
    if (dataEncryptionKey.length !== 32 || !/^[A-Za-z0-9+/]+={0,2}$/.test(encryptionKeyText)) {
      problems.push('DATA_ENCRYPTION_KEY must be 32 bytes encoded in base64 (openssl rand -base64 32)');
    }
  }
  const callbackSigningPreviousSecrets = previousKeys(
    'CALLBACK_SIGNING_PREVIOUS_SECRETS',
    secretOfLength,
    'at least 32 characters',
    (key) => key === callbackSigningSecret,
  );
  const dataEncryptionPreviousKeys = previousKeys('DATA_ENCRYPTION_PREVIOUS_KEYS', base64Key, '32 bytes encoded in base64', (key) =>
    key.equals(dataEncryptionKey),
  );
  const jwksUrl = url('AUTH_JWKS_URL', read('AUTH_JWKS_URL'));
  const { oidc, rolesClaim } = checkOidcSettings(
    {
      issuer: read('AUTH_OIDC_ISSUER'),
      swaggerClientId: read('AUTH_OIDC_SWAGGER_CLIENT_ID'),
      swaggerScopes: read('AUTH_OIDC_SWAGGER_SCOPES'),
      rolesClaim: read('AUTH_ROLES_CLAIM'),
      jwksUrl,
      jwtIssuer: read('AUTH_JWT_ISSUER'),
    },
    problems,
  );
  let jwtSecret = read('AUTH_JWT_SECRET');
  if (jwtSecret === undefined && jwksUrl === undefined && oidc === undefined) {
    if (isProduction)
      problems.push('AUTH_JWT_SECRET, AUTH_JWKS_URL or AUTH_OIDC_ISSUER is required in production (how bearer tokens are verified)');
    else jwtSecret = DEV_JWT_SECRET;
  }
  if (jwtSecret !== undefined && jwtSecret.length < 32) problems.push('AUTH_JWT_SECRET must be at least 32 characters');
  const jwtPreviousSecrets = previousKeys(
    'AUTH_JWT_PREVIOUS_SECRETS',
    secretOfLength,
    'at least 32 characters',
    (key) => key === jwtSecret,
  );
  // A longer-lived bearer token is a standing credential; a year is the most one may configure.
  const maxTokenTtlSeconds = integer('AUTH_MAX_TOKEN_TTL', 2_592_000, 1, 31_536_000);
  const currencies = readCurrencies(read, problems);
  const corsOrigins = (read('CORS_ORIGINS') ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  for (const origin of corsOrigins) {
    if (!/^https?:\/\/[^/\s]+$/.test(origin))
      problems.push(`CORS_ORIGINS entries must be origins like https://shop.example.com (got "${origin}")`);
  }
  const reportsTimeZone = read('REPORTS_TIMEZONE') ?? 'UTC';
  if (!isTimeZone(reportsTimeZone))
    problems.push(`REPORTS_TIMEZONE must be an IANA time zone name, e.g. UTC, Africa/Douala or Europe/Paris (got "${reportsTimeZone}")`);
  const logLevel = (read('LOG_LEVEL') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevel}")`);

  const agentHourlyLimit = integer('PROVIDER_AGENT_HOURLY_LIMIT', 600, 1, 1000000);
  const config: AppConfig = {
    nodeEnv,
    isProduction,
    port,
    host,
    shutdownDrainMs: integer('SHUTDOWN_DRAIN_MS', isProduction ? 5_000 : 0, 0, 300_000),
    databaseUrl,
    databaseDirectUrl,
    databasePooled,
    databaseReplica: replicaSettings(
      url('DATABASE_REPLICA_URL', read('DATABASE_REPLICA_URL')),
      integer('DATABASE_REPLICA_MAX_LAG_SECONDS', 5, 1, 3600),
      { databaseUrl, problems },
    ),
    embeddedDataDir: read('EMBEDDED_DATA_DIR') ?? '.data/pglite',
    provider: {
      baseUrl,
      linkBaseUrl,
      apiKey: apiKey ?? '',
      secretKey: secretKey ?? '',
      spAuthToken: spAuthToken ?? '',
      timeoutMs: integer('PROVIDER_TIMEOUT_MS', 15000, 100, 600000),
      agentHourlyLimit,
      customerHourlyLimit: customerHourlyLimit(read('PROVIDER_CUSTOMER_HOURLY_LIMIT'), agentHourlyLimit, problems),
    },
    card: {
      operationParam: paramName('CARD_OPERATION_PARAM', 'operation'),
      amountParam: paramName('CARD_AMOUNT_PARAM', 'amount'),
      currencyParam: paramName('CARD_CURRENCY_PARAM', 'currency'),
    },
    publicBaseUrl: publicBaseUrl ?? '',
    callbackSigningSecret: callbackSigningSecret ?? '',
    callbackSigningPreviousSecrets,
    dataEncryptionKey,
    dataEncryptionPreviousKeys,
    auth: {
      jwtSecret,
      jwtPreviousSecrets,
      jwksUrl,
      issuer: read('AUTH_JWT_ISSUER'),
      oidc,
      rolesClaim,
      audience: read('AUTH_JWT_AUDIENCE'),
      maxTokenTtlSeconds,
    },
    orderExpiryMinutes: integer('ORDER_EXPIRY_MINUTES', 1440, 1, 525600),
    currencies,
    logLevel,
    sandboxPort: integer('SANDBOX_PORT', 4010, 0, 65535),
    corsOrigins,
    publicRateLimitPerMinute: integer('PUBLIC_RATE_LIMIT_PER_MINUTE', 600, 1, 1_000_000),
    trustProxy: parseTrustProxy(read('TRUST_PROXY'), problems),
    reportsTimeZone,
    httpMaxConnections: read('HTTP_MAX_CONNECTIONS') === undefined ? undefined : integer('HTTP_MAX_CONNECTIONS', 0, 1, 1_000_000),
    webhooks: {
      timeoutMs: integer('WEBHOOK_TIMEOUT_MS', 15000, 100, 600000),
      retrySchedule: retrySchedule('WEBHOOK_RETRY_SCHEDULE', '0,5,300,1800,7200,18000,36000,36000'),
      allowInsecureUrls: flag('WEBHOOK_ALLOW_INSECURE_URLS', !isProduction),
      allowPrivateUrls: flag('WEBHOOK_ALLOW_PRIVATE_URLS', !isProduction),
      maxInFlightPerEndpoint: integer('WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT', 4, 1, WEBHOOK_MAX_IN_FLIGHT),
    },
    retention: readRetentionSettings(integer),
    sse: {
      maxStreamsPerUser: integer('SSE_MAX_STREAMS_PER_USER', 20, 1, 10_000),
      maxStreams: integer('SSE_MAX_STREAMS', 10_000, 1, 1_000_000),
      keepAliveSeconds: integer('SSE_KEEPALIVE_SECONDS', 15, 1, 3_600),
    },
  };
  problems.push(...openTelemetryProblems(openTelemetryEnvironment(env)));
  if (problems.length > 0) throw new ConfigValidationError(problems);
  return config;
}
