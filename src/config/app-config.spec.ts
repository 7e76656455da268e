import { Money } from '../common/money';
import { loadAppConfig } from './app-config';
import { SANDBOX_CREDENTIALS } from './development-defaults';
import { PRODUCTION_ENV, problemsOf } from './app-config.spec-support';

describe('loadAppConfig', () => {
  it('gives a working development configuration with no variable at all', () => {
    const config = loadAppConfig({});
    expect(config).toMatchObject({
      isProduction: false,
      port: 3000,
      databaseUrl: undefined,
      embeddedDataDir: '.data/pglite',
      provider: { baseUrl: undefined, apiKey: SANDBOX_CREDENTIALS.apiKey, timeoutMs: 15000, agentHourlyLimit: 600 },
      card: { operationParam: 'operation', amountParam: 'amount', currencyParam: 'currency' },
      publicBaseUrl: 'http://localhost:3000',
      orderExpiryMinutes: 1440,
      logLevel: 'info',
      sandboxPort: 4010,
    });
    expect(config.dataEncryptionKey).toHaveLength(32);
    expect(config.callbackSigningSecret.length).toBeGreaterThanOrEqual(32);
    expect(config.auth.jwtSecret).toBeDefined();
  });

  it('derives PUBLIC_BASE_URL from PORT in development, and a random callback secret per process', () => {
    expect(loadAppConfig({ PORT: '8080' }).publicBaseUrl).toBe('http://localhost:8080');
    expect(loadAppConfig({}).callbackSigningSecret).not.toBe(loadAppConfig({}).callbackSigningSecret);
  });

  it('accepts a complete production configuration and keeps operational defaults', () => {
    const config = loadAppConfig(PRODUCTION_ENV);
    expect(config.isProduction).toBe(true);
    expect(config.provider.linkBaseUrl).toBe('https://api.provider.example');
    expect(config.port).toBe(3000);
    expect(config.provider.timeoutMs).toBe(15000);
  });

  it('reads the webhook settings: the contract schedule, and private or http:// URLs refused in production unless allowed', () => {
    expect(loadAppConfig(PRODUCTION_ENV).webhooks).toEqual({
      timeoutMs: 15000,
      retrySchedule: [0, 5, 300, 1800, 7200, 18000, 36000, 36000],
      allowInsecureUrls: false,
      allowPrivateUrls: false,
      maxInFlightPerEndpoint: 4,
    });
    expect(loadAppConfig({}).webhooks).toMatchObject({ allowInsecureUrls: true, allowPrivateUrls: true });
    expect(loadAppConfig({ WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: '32' }).webhooks.maxInFlightPerEndpoint).toBe(32);
    expect(problemsOf({ WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: '33' })).toEqual([
      'WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT must be an integer between 1 and 32 (got "33")',
    ]);
    expect(
      loadAppConfig({ ...PRODUCTION_ENV, WEBHOOK_RETRY_SCHEDULE: ' 0, 1 ,2', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }).webhooks,
    ).toMatchObject({ retrySchedule: [0, 1, 2], allowPrivateUrls: true, allowInsecureUrls: false });
    expect(problemsOf({ ...PRODUCTION_ENV, WEBHOOK_RETRY_SCHEDULE: '0,-5', WEBHOOK_ALLOW_INSECURE_URLS: 'yes' })).toEqual([
      'WEBHOOK_RETRY_SCHEDULE must be 1 to 50 comma-separated delays in whole seconds (got "0,-5")',
      'WEBHOOK_ALLOW_INSECURE_URLS must be true or false (got "yes")',
    ]);
  });

  it('refuses every development-only default in production, naming each variable in one error', () => {
    const problems = problemsOf({ NODE_ENV: 'production' });
    for (const name of [
      'DATABASE_URL',
      'PROVIDER_BASE_URL',
      'PROVIDER_API_KEY',
      'PROVIDER_SECRET_KEY',
      'PROVIDER_SP_AUTH_TOKEN',
      'PUBLIC_BASE_URL',
      'CALLBACK_SIGNING_SECRET',
      'DATA_ENCRYPTION_KEY',
      'AUTH_JWT_SECRET, AUTH_JWKS_URL or AUTH_OIDC_ISSUER',
    ]) {
      expect(problems.some((p) => p.startsWith(name))).toBe(true);
    }
  });

  it('names the single missing variable', () => {
    const { PROVIDER_SECRET_KEY: _omitted, ...env } = PRODUCTION_ENV;
    expect(problemsOf(env)).toEqual(['PROVIDER_SECRET_KEY is required in production (private_secretkey)']);
  });

  it('accepts AUTH_JWKS_URL instead of AUTH_JWT_SECRET', () => {
    const { AUTH_JWT_SECRET: _omitted, ...env } = PRODUCTION_ENV;
    const config = loadAppConfig({ ...env, AUTH_JWKS_URL: 'https://id.merchant.example/.well-known/jwks.json' });
    expect(config.auth).toMatchObject({ jwtSecret: undefined, jwksUrl: 'https://id.merchant.example/.well-known/jwks.json' });
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT must be an integer'],
    [{ PORT: '70000' }, 'PORT must be an integer'],
    [{ PROVIDER_TIMEOUT_MS: '-5' }, 'PROVIDER_TIMEOUT_MS must be an integer'],
    [{ PROVIDER_AGENT_HOURLY_LIMIT: '0' }, 'PROVIDER_AGENT_HOURLY_LIMIT must be an integer'],
    [{ ORDER_EXPIRY_MINUTES: '1.5' }, 'ORDER_EXPIRY_MINUTES must be an integer'],
    [{ DATABASE_URL: 'mysql://x@y/z' }, 'DATABASE_URL must be'],
    [{ PROVIDER_BASE_URL: 'not a url' }, 'PROVIDER_BASE_URL must be an absolute URL'],
    [{ DATA_ENCRYPTION_KEY: 'c2hvcnQ=' }, 'DATA_ENCRYPTION_KEY must be 32 bytes'],
    [{ CALLBACK_SIGNING_SECRET: 'short' }, 'CALLBACK_SIGNING_SECRET must be at least 32'],
    [{ AUTH_JWT_SECRET: 'short' }, 'AUTH_JWT_SECRET must be at least 32'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of'],
    [{ CARD_AMOUNT_PARAM: 'amount&x=1' }, 'CARD_AMOUNT_PARAM must be a plain query parameter name'],
    [{ AUTH_MAX_TOKEN_TTL: '0' }, 'AUTH_MAX_TOKEN_TTL must be an integer between 1 and 31536000'],
    [{ AUTH_MAX_TOKEN_TTL: '1e308' }, 'AUTH_MAX_TOKEN_TTL must be an integer'],
  ])('refuses %j', (env, message) => {
    const problems = problemsOf(env);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(message);
  });

  it('reads the bearer-token claim rules: issuer and audience unset (not checked), 30 days at most', () => {
    expect(loadAppConfig({}).auth).toMatchObject({ issuer: undefined, audience: undefined, maxTokenTtlSeconds: 2_592_000 });
    expect(
      loadAppConfig({ AUTH_JWT_ISSUER: 'https://idp.example.com/', AUTH_JWT_AUDIENCE: 'payments-bff', AUTH_MAX_TOKEN_TTL: '3600' }).auth,
    ).toMatchObject({ issuer: 'https://idp.example.com/', audience: 'payments-bff', maxTokenTtlSeconds: 3600 });
  });

  it('collects several problems at once', () => {
    expect(problemsOf({ PORT: 'x', LOG_LEVEL: 'y', PROVIDER_TIMEOUT_MS: 'z' })).toHaveLength(3);
  });

  it('reads the accepted currencies with their minor units and maximum', () => {
    expect(loadAppConfig({}).currencies).toEqual({
      XAF: { code: 'XAF', decimals: 0, maxAmount: '100000000' },
      XOF: { code: 'XOF', decimals: 0, maxAmount: '100000000' },
      EUR: { code: 'EUR', decimals: 2, maxAmount: '100000000' },
      USD: { code: 'USD', decimals: 2, maxAmount: '100000000' },
    });
    expect(loadAppConfig({ CURRENCIES: 'XAF:0:5000000,EUR:2', MAX_AMOUNT: '900' }).currencies).toEqual({
      XAF: { code: 'XAF', decimals: 0, maxAmount: '5000000' },
      EUR: { code: 'EUR', decimals: 2, maxAmount: '900' },
    });
    expect(problemsOf({ CURRENCIES: 'eur:2' })[0]).toContain('CURRENCIES entries');
    expect(problemsOf({ MAX_AMOUNT: '1.5' })[0]).toContain('MAX_AMOUNT');
  });

  it('gives Money currencies it applies as they are', () => {
    const config = loadAppConfig({ NODE_ENV: 'test', CURRENCIES: 'XAF:0,EUR:2:50000' });
    expect(Money.parse('50000', config.currencies.EUR).toString()).toBe('50000.00');
    expect(() => Money.parse('50000.01', config.currencies.EUR)).toThrow(expect.objectContaining({ reason: 'above_maximum' }));
    expect(Money.parse('100000000', config.currencies.XAF).toString()).toBe('100000000');
  });

  it('strips a trailing slash from provider URLs', () => {
    expect(loadAppConfig({ PROVIDER_BASE_URL: 'https://p.example/' }).provider.baseUrl).toBe('https://p.example');
  });

  it('reads the live-stream caps and keep-alive interval, with the contract defaults', () => {
    expect(loadAppConfig({}).sse).toEqual({ maxStreamsPerUser: 20, maxStreams: 10_000, keepAliveSeconds: 15 });
    expect(loadAppConfig({ SSE_MAX_STREAMS_PER_USER: '5', SSE_MAX_STREAMS: '300', SSE_KEEPALIVE_SECONDS: '2' }).sse).toEqual({
      maxStreamsPerUser: 5,
      maxStreams: 300,
      keepAliveSeconds: 2,
    });
    expect(problemsOf({ SSE_MAX_STREAMS_PER_USER: '0' })[0]).toContain('SSE_MAX_STREAMS_PER_USER');
    expect(problemsOf({ SSE_MAX_STREAMS: '-1' })[0]).toContain('SSE_MAX_STREAMS');
    expect(problemsOf({ SSE_MAX_STREAMS: 'many' })[0]).toContain('SSE_MAX_STREAMS');
    expect(problemsOf({ SSE_KEEPALIVE_SECONDS: '0' })[0]).toContain('SSE_KEEPALIVE_SECONDS');
  });

  it('drains 5 s after SIGTERM in production and not at all in development, unless SHUTDOWN_DRAIN_MS says otherwise', () => {
    expect(loadAppConfig({}).shutdownDrainMs).toBe(0);
    expect(loadAppConfig(PRODUCTION_ENV).shutdownDrainMs).toBe(5_000);
    expect(loadAppConfig({ ...PRODUCTION_ENV, SHUTDOWN_DRAIN_MS: '0' }).shutdownDrainMs).toBe(0);
    expect(loadAppConfig({ SHUTDOWN_DRAIN_MS: '15000' }).shutdownDrainMs).toBe(15_000);
    expect(problemsOf({ SHUTDOWN_DRAIN_MS: '-1' })[0]).toContain('SHUTDOWN_DRAIN_MS');
    expect(problemsOf({ SHUTDOWN_DRAIN_MS: '300001' })[0]).toContain('SHUTDOWN_DRAIN_MS');
  });

  it('listens on the loopback in development and on every interface in production, unless HOST says otherwise', () => {
    expect(loadAppConfig({}).host).toBe('127.0.0.1');
    expect(loadAppConfig(PRODUCTION_ENV).host).toBe('0.0.0.0');
    expect(loadAppConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    expect(loadAppConfig({ ...PRODUCTION_ENV, HOST: '10.1.2.3' }).host).toBe('10.1.2.3');
    expect(loadAppConfig({ HOST: '::' }).host).toBe('::');
    expect(loadAppConfig({ HOST: 'localhost' }).host).toBe('localhost');
    expect(problemsOf({ HOST: 'http://0.0.0.0' })[0]).toContain('HOST must be an IP address or a host name');
    expect(problemsOf({ HOST: '0.0.0.0:3000' })[0]).toContain('HOST');
  });

  it('reads REPORTS_TIMEZONE, an IANA name (UTC by default), and names a zone it does not know', () => {
    expect(loadAppConfig({}).reportsTimeZone).toBe('UTC');
    expect(loadAppConfig({ REPORTS_TIMEZONE: 'Africa/Douala' }).reportsTimeZone).toBe('Africa/Douala');
    expect(problemsOf({ REPORTS_TIMEZONE: 'Mars/Olympus' })).toEqual([
      'REPORTS_TIMEZONE must be an IANA time zone name, e.g. UTC, Africa/Douala or Europe/Paris (got "Mars/Olympus")',
    ]);
    expect(problemsOf({ REPORTS_TIMEZONE: '+01:00' })[0]).toContain('REPORTS_TIMEZONE');
  });

  it('reads the previous keys of each secret as comma-separated lists, none by default', () => {
    expect(loadAppConfig(PRODUCTION_ENV)).toMatchObject({
      callbackSigningPreviousSecrets: [],
      dataEncryptionPreviousKeys: [],
      auth: { jwtPreviousSecrets: [] },
    });
    const oldKeys = [Buffer.alloc(32, 2), Buffer.alloc(32, 3)];
    const config = loadAppConfig({
      ...PRODUCTION_ENV,
      CALLBACK_SIGNING_PREVIOUS_SECRETS: `${'a'.repeat(32)}, ${'b'.repeat(40)}`,
      DATA_ENCRYPTION_PREVIOUS_KEYS: oldKeys.map((key) => key.toString('base64')).join(','),
      AUTH_JWT_PREVIOUS_SECRETS: 'k'.repeat(48),
    });
    expect(config.callbackSigningPreviousSecrets).toEqual(['a'.repeat(32), 'b'.repeat(40)]);
    expect(config.dataEncryptionPreviousKeys).toEqual(oldKeys);
    expect(config.auth.jwtPreviousSecrets).toEqual(['k'.repeat(48)]);
  });

  it('refuses a malformed previous key, or one equal to the current key, naming the variable and position and never the value', () => {
    const problems = problemsOf({
      ...PRODUCTION_ENV,
      CALLBACK_SIGNING_PREVIOUS_SECRETS: `${'a'.repeat(32)},short-callback-secret`,
      DATA_ENCRYPTION_PREVIOUS_KEYS: `${Buffer.alloc(32, 2).toString('base64')},,${PRODUCTION_ENV.DATA_ENCRYPTION_KEY}`,
      AUTH_JWT_PREVIOUS_SECRETS: `${PRODUCTION_ENV.AUTH_JWT_SECRET},${Buffer.alloc(16, 9).toString('base64')}`,
    });
    expect(problems).toEqual([
      'CALLBACK_SIGNING_PREVIOUS_SECRETS entry 2 must be at least 32 characters',
      'DATA_ENCRYPTION_PREVIOUS_KEYS entry 2 must be 32 bytes encoded in base64',
      'DATA_ENCRYPTION_PREVIOUS_KEYS entry 3 equals the current key: remove it',
      'AUTH_JWT_PREVIOUS_SECRETS entry 1 equals the current key: remove it',
      'AUTH_JWT_PREVIOUS_SECRETS entry 2 must be at least 32 characters',
    ]);
    expect(problemsOf({ ...PRODUCTION_ENV, CALLBACK_SIGNING_PREVIOUS_SECRETS: PRODUCTION_ENV.CALLBACK_SIGNING_SECRET })).toEqual([
      'CALLBACK_SIGNING_PREVIOUS_SECRETS entry 1 equals the current key: remove it',
    ]);
    // The same key written without its base64 padding is still the current key.
    const unpadded = Buffer.alloc(32, 1).toString('base64').replaceAll('=', '');
    expect(problemsOf({ ...PRODUCTION_ENV, DATA_ENCRYPTION_PREVIOUS_KEYS: unpadded })).toEqual([
      'DATA_ENCRYPTION_PREVIOUS_KEYS entry 1 equals the current key: remove it',
    ]);
  });
});
