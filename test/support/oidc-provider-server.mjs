/**
 * A real OpenID Connect provider for the browser tests, run as a child process (oidc-provider is
 * ESM-only): discovery, keys, the authorization-code flow with PKCE, JWT access tokens, and a
 * sign-in page of its own that the test fills in. Listens on 127.0.0.1 (an http:// issuer is
 * accepted on a loopback address only) and prints one line of JSON, `{"issuer": "..."}`, once it
 * listens. Stops on SIGTERM or when its parent closes stdin.
 *
 * Environment:
 * - OIDC_CLIENT_ID: the public client Swagger UI signs in as (no secret, PKCE);
 * - OIDC_REDIRECT_URIS: its redirect URIs, comma-separated;
 * - OIDC_AUDIENCE: the `aud` of the access tokens (the API they are for).
 *
 * Accounts (name / password → roles at `realm_access.roles`, Keycloak's shape):
 * - fiona / fiona-password: finance;
 * - ada / ada-password: admin;
 * - ernest / ernest-password: finance, and every access token he gets ran out two minutes before
 *   it was issued, so that a test sees what happens when a token has expired without waiting for one.
 */
import { createServer } from 'node:http';
import { generateKeyPair, exportJWK } from 'jose';
import Provider from 'oidc-provider';

const clientId = requiredEnv('OIDC_CLIENT_ID');
const redirectUris = requiredEnv('OIDC_REDIRECT_URIS').split(',');
const audience = requiredEnv('OIDC_AUDIENCE');
const ACCESS_TOKEN_TTL_SECONDS = 600;
const RESOURCE_SCOPE = 'payments';

const ACCOUNTS = {
  fiona: { password: 'fiona-password', name: 'Fiona Finance', email: 'fiona@example.com', roles: ['finance'] },
  ada: { password: 'ada-password', name: 'Ada Admin', email: 'ada@example.com', roles: ['admin'] },
  ernest: { password: 'ernest-password', name: 'Ernest Expired', email: 'ernest@example.com', roles: ['finance'], expiredTokens: true },
};

function requiredEnv(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

const { privateKey } = await generateKeyPair('RS256', { extractable: true });
const signingKey = { ...(await exportJWK(privateKey)), kid: 'test-key-1', alg: 'RS256', use: 'sig' };

// The port is known once listening; the issuer (and so the provider) is made then.
const server = createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: clientId,
      token_endpoint_auth_method: 'none',
      application_type: 'web',
      redirect_uris: redirectUris,
      grant_types: ['authorization_code'],
      response_types: ['code'],
    },
  ],
  jwks: { keys: [signingKey] },
  cookies: { keys: ['oidc-provider-test-cookie-key-0123456789'] },
  pkce: { required: () => true },
  ttl: { AccessToken: ACCESS_TOKEN_TTL_SECONDS },
  scopes: ['openid', 'profile', 'email'],
  claims: { openid: ['sub'], profile: ['name'], email: ['email', 'email_verified'] },
  features: {
    devInteractions: { enabled: false },
    // Access tokens are JWTs for one API (the audience), signed with the key above.
    resourceIndicators: {
      enabled: true,
      defaultResource: async () => audience,
      useGrantedResource: async () => true,
      getResourceServerInfo: async () => ({
        scope: RESOURCE_SCOPE,
        audience,
        accessTokenTTL: ACCESS_TOKEN_TTL_SECONDS,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
  findAccount: async (_ctx, sub) => {
    const account = ACCOUNTS[sub];
    if (!account) return undefined;
    return { accountId: sub, claims: async () => ({ sub, name: account.name, email: account.email, email_verified: true }) };
  },
  // The roles as Keycloak writes them: a dotted path (realm_access.roles), not a top-level claim.
  extraTokenClaims: async (_ctx, token) => {
    const account = token.accountId ? ACCOUNTS[token.accountId] : undefined;
    return account ? { realm_access: { roles: account.roles }, email: account.email } : undefined;
  },
  formats: {
    customizers: {
      jwt: async (_ctx, token, jwt) => {
        if (!ACCOUNTS[token.accountId]?.expiredTokens) return jwt;
        jwt.payload.iat -= 180;
        jwt.payload.exp = jwt.payload.iat + 60;
        return jwt;
      },
    },
  },
  interactions: { url: async (_ctx, interaction) => `/interaction/${interaction.uid}` },
  renderError: async (ctx, out) => {
    ctx.type = 'html';
    ctx.body = `<!doctype html><title>Sign-in error</title><h1>Sign-in error</h1><pre>${escapeHtml(JSON.stringify(out, null, 2))}</pre>`;
  },
});

const callback = provider.callback();
server.on('request', (req, res) => {
  const match = /^\/interaction\/([\w-]+)(\/login)?$/.exec(req.url.split('?')[0]);
  if (!match) return callback(req, res);
  const handle = req.method === 'POST' && match[2] ? signIn(req, res) : showSignInPage(req, res);
  handle.catch((error) => {
    res.statusCode = 500;
    res.setHeader('content-type', 'text/plain; charset=utf-8');
    res.end(`sign-in failed: ${error.message}`);
  });
});

async function showSignInPage(req, res, problem) {
  const { uid, params } = await provider.interactionDetails(req, res);
  res.setHeader('content-type', 'text/html; charset=utf-8');
  res.end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in - Example Company</title>
<style>
  body { font-family: sans-serif; background: #eef2f7; display: flex; justify-content: center; padding-top: 80px; }
  form { background: #fff; padding: 32px 40px; border-radius: 8px; box-shadow: 0 2px 8px rgba(0,0,0,.15); width: 320px; }
  h1 { font-size: 20px; margin: 0 0 8px; } p { color: #555; font-size: 14px; }
  label { display: block; margin: 16px 0 4px; font-size: 14px; } input { width: 100%; padding: 8px; box-sizing: border-box; }
  button { margin-top: 24px; width: 100%; padding: 10px; background: #1f5fbf; color: #fff; border: 0; border-radius: 4px; font-size: 15px; }
  .problem { color: #b00020; }
</style></head>
<body><form method="post" action="/interaction/${escapeHtml(uid)}/login">
  <h1>Example Company sign-in</h1>
  <p>${escapeHtml(String(params.client_id))} asks you to sign in.</p>
  ${problem ? `<p class="problem">${escapeHtml(problem)}</p>` : ''}
  <label for="username">User name</label><input id="username" name="username" autocomplete="username" autofocus>
  <label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password">
  <button type="submit">Sign in</button>
</form></body></html>`);
}

async function signIn(req, res) {
  const form = new URLSearchParams(await readBody(req));
  const username = form.get('username') ?? '';
  const account = ACCOUNTS[username];
  if (!account || form.get('password') !== account.password) return showSignInPage(req, res, 'Wrong user name or password.');
  const { params } = await provider.interactionDetails(req, res);
  // Consent is the company's: what the client asked for is granted without a second page.
  const grant = new provider.Grant({ accountId: username, clientId: String(params.client_id) });
  grant.addOIDCScope(String(params.scope ?? 'openid'));
  grant.addResourceScope(audience, RESOURCE_SCOPE);
  const grantId = await grant.save();
  await provider.interactionFinished(
    req,
    res,
    { login: { accountId: username }, consent: { grantId } },
    { mergeWithLastSubmission: false },
  );
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => {
      body += chunk;
      if (body.length > 10_000) reject(new Error('form too large'));
    });
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

function escapeHtml(text) {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
process.stdout.write(`${JSON.stringify({ issuer })}\n`);
