import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { mintToken } from '../../src/auth/token-minter';
import { DistributionsModule } from '../../src/distributions/distributions.module';
import { ProviderTokenService } from '../../src/provider/provider-token.service';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import type { SandboxOptions } from '../../src/sandbox/sandbox.options';
import { WalletLinksModule } from '../../src/wallet-links/wallet-links.module';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/** Not the sandbox default: proves the configured key is the one sent. */
export const LINK_API_KEY = 'link-test-apikey-5f3a9c1e77';

export interface LinkHosts {
  /** `{base_url}`: tokens come from here. */
  base: RunningSandbox;
  /** `{link_base_url}`: wallet links and distributions go here. */
  link: RunningSandbox;
  service: TestService;
  /** The bearer the service currently uses. */
  bearer(): string | undefined;
  /** One provider, two hosts: makes the tokens issued by {base_url} valid on {link_base_url}. */
  syncTokens(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The service with wallet links and distributions, its `{link_base_url}` on a second sandbox
 * (PROVIDER_LINK_BASE_URL), as provider-clients.e2e-spec.ts does.
 */
export async function startLinkHosts(env: Record<string, string> = {}, sandboxOptions: SandboxOptions = {}): Promise<LinkHosts> {
  const base = await startTestSandbox({ apiKey: LINK_API_KEY, ...sandboxOptions });
  const link = await startTestSandbox({ apiKey: LINK_API_KEY, ...sandboxOptions });
  const service = await startTestService(base, { PROVIDER_LINK_BASE_URL: link.url, PROVIDER_API_KEY: LINK_API_KEY, ...env }, [
    WalletLinksModule,
    DistributionsModule,
  ]);
  const syncTokens = async () => {
    await service.get(ProviderTokenService).getBearer();
    for (const [token, expiresAt] of base.state.tokens) link.state.tokens.set(token, expiresAt);
  };
  await syncTokens();
  return {
    base,
    link,
    service,
    bearer: () => [...base.state.tokens.keys()].at(-1),
    syncTokens,
    close: async () => {
      await service.close();
      await Promise.all([base.close(), link.close()]);
    },
  };
}

export function uniqueLinkEmail(prefix = 'link'): string {
  return `${prefix}.${randomUUID().slice(0, 8)}@example.com`;
}

/** A bearer token of `sub` carrying an `email` claim and `email_verified`. */
export function tokenWithEmail(
  service: TestService,
  sub: string,
  roles: ('customer' | 'finance' | 'admin')[],
  email: string,
  emailVerified: boolean,
): Promise<string> {
  const secret = service.config.auth.jwtSecret!;
  return mintToken({ sub, roles: roles.length ? roles : ['customer'], ttl: '1h', secret, email, emailVerified });
}

/** A caller of the service with its own bearer token. */
export async function apiUser(
  service: TestService,
  sub = `cust_${randomUUID().slice(0, 8)}`,
  ...roles: ('customer' | 'finance' | 'admin')[]
) {
  const token = await service.bearer(sub, ...roles);
  const http = () => request(service.server);
  return {
    sub,
    token,
    /**
     * A customer links only its own verified email: each link is asked with a token of the same
     * user carrying the body's email, verified (as the identity provider would issue it).
     */
    createLink: async (body: Record<string, unknown>) => {
      const email = typeof body.email === 'string' ? body.email : undefined;
      const linkToken = email === undefined ? token : await tokenWithEmail(service, sub, roles, email, true);
      return http().post('/v1/wallet-links').auth(linkToken, { type: 'bearer' }).send(body);
    },
    getLink: (id: string) => http().get(`/v1/wallet-links/${id}`).auth(token, { type: 'bearer' }),
    listLinks: (query: Record<string, string | number> = {}) => http().get('/v1/wallet-links').query(query).auth(token, { type: 'bearer' }),
    createInit: (body: Record<string, unknown>, key: string = randomUUID()) =>
      http().post('/v1/distributions').auth(token, { type: 'bearer' }).set('Idempotency-Key', key).send(body),
    createFiat: (body: Record<string, unknown>, key: string = randomUUID()) =>
      http().post('/v1/distributions/fiat').auth(token, { type: 'bearer' }).set('Idempotency-Key', key).send(body),
    getDistribution: (id: string) => http().get(`/v1/distributions/${id}`).auth(token, { type: 'bearer' }),
    listDistributions: (query: Record<string, string | number> = {}) =>
      http().get('/v1/distributions').query(query).auth(token, { type: 'bearer' }),
  };
}
