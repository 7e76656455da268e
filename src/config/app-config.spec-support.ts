import { ConfigValidationError, loadAppConfig } from './app-config';

/**
 * For the configuration's unit specs: a complete production environment, and the problems
 * loadAppConfig finds in an environment (none when it loads).
 */
export const PRODUCTION_ENV = {
  NODE_ENV: 'production',
  DATABASE_URL: 'postgresql://bff@db.internal:5432/bff',
  PROVIDER_BASE_URL: 'https://api.provider.example',
  PROVIDER_API_KEY: 'live-key',
  PROVIDER_SECRET_KEY: 'live-secret',
  PROVIDER_SP_AUTH_TOKEN: 'live-sp-token',
  PUBLIC_BASE_URL: 'https://pay.merchant.example',
  CALLBACK_SIGNING_SECRET: 'c'.repeat(48),
  DATA_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
  AUTH_JWT_SECRET: 'j'.repeat(48),
};

export function problemsOf(env: Record<string, string | undefined>): string[] {
  try {
    loadAppConfig(env);
  } catch (error) {
    if (error instanceof ConfigValidationError) return error.problems;
    throw error;
  }
  return [];
}
