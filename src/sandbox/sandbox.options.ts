export interface SandboxOptions {
  /** TCP port; 0 (default) picks a free port. */
  port?: number;
  /** Listen address; default 127.0.0.1. */
  host?: string;
  /** `public_apikey` of the auth endpoint and `x-api-key` of /api/agent routes. */
  apiKey?: string;
  /** `private_secretkey` of the auth endpoint. */
  secretKey?: string;
  /** `x-sp-auth-token` of the card routes. */
  spAuthToken?: string;
  /** Bearer token lifetime; default 60 minutes. */
  tokenTtlMs?: number;
  /** Delay before a pay-in callback, and first retry backoff; default 1500. */
  callbackDelayMs?: number;
  /** How long the timeout wallet holds its request; default 120000. */
  hangMs?: number;
  /** Requests admitted per client IP per rolling hour on /api/agent/*; default 600. */
  agentHourlyLimit?: number;
  /** Query parameter selecting the card operation; default `operation`. */
  cardOperationParam?: string;
  /** Query parameter with the top-up/withdraw amount; default `amount`. */
  cardAmountParam?: string;
  /** Query parameter with the top-up/withdraw currency; default `currency`. */
  cardCurrencyParam?: string;
  /** Receives notable events; nothing is printed by default. */
  logger?: (msg: string, data?: object) => void;
}

export type ResolvedSandboxOptions = Required<Omit<SandboxOptions, 'logger'>> & {
  logger: (msg: string, data?: object) => void;
};

export const SANDBOX_DEFAULTS = {
  port: 0,
  host: '127.0.0.1',
  apiKey: 'sandbox-public-apikey',
  secretKey: 'sandbox-private-secretkey',
  spAuthToken: 'sandbox-sp-auth-token',
  tokenTtlMs: 60 * 60 * 1000,
  callbackDelayMs: 1500,
  hangMs: 120_000,
  agentHourlyLimit: 600,
  cardOperationParam: 'operation',
  cardAmountParam: 'amount',
  cardCurrencyParam: 'currency',
} as const;

export function resolveSandboxOptions(options: SandboxOptions = {}): ResolvedSandboxOptions {
  const pick = <K extends keyof typeof SANDBOX_DEFAULTS>(key: K): (typeof SANDBOX_DEFAULTS)[K] =>
    (options[key] ?? SANDBOX_DEFAULTS[key]) as (typeof SANDBOX_DEFAULTS)[K];
  const resolved: ResolvedSandboxOptions = {
    port: pick('port'),
    host: pick('host'),
    apiKey: pick('apiKey'),
    secretKey: pick('secretKey'),
    spAuthToken: pick('spAuthToken'),
    tokenTtlMs: pick('tokenTtlMs'),
    callbackDelayMs: pick('callbackDelayMs'),
    hangMs: pick('hangMs'),
    agentHourlyLimit: pick('agentHourlyLimit'),
    cardOperationParam: pick('cardOperationParam'),
    cardAmountParam: pick('cardAmountParam'),
    cardCurrencyParam: pick('cardCurrencyParam'),
    logger: options.logger ?? (() => undefined),
  };
  for (const key of ['tokenTtlMs', 'callbackDelayMs', 'hangMs'] as const) {
    if (!(typeof resolved[key] === 'number' && resolved[key] >= 0)) throw new Error(`sandbox: ${key} must be >= 0`);
  }
  if (!Number.isInteger(resolved.agentHourlyLimit) || resolved.agentHourlyLimit < 1) {
    throw new Error('sandbox: agentHourlyLimit must be a positive integer');
  }
  const params = [resolved.cardOperationParam, resolved.cardAmountParam, resolved.cardCurrencyParam];
  if (params.some((p) => !p) || new Set(params).size !== 3) {
    throw new Error('sandbox: the three card query parameter names must be distinct and non-empty');
  }
  return resolved;
}
