/** Values the sandbox accepts; used as development defaults and nowhere in production. */
export const SANDBOX_CREDENTIALS = {
  apiKey: 'sandbox-public-apikey',
  secretKey: 'sandbox-private-secretkey',
  spAuthToken: 'sandbox-sp-auth-token',
} as const;

/** Development-only keys: fixed so that tokens minted with `npm run token` survive restarts. */
export const DEV_JWT_SECRET = 'development-only-jwt-secret-change-me-0123456789';
export const DEV_ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');
