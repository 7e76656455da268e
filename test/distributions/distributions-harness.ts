import { randomUUID } from 'node:crypto';
import { apiUser, startLinkHosts, uniqueLinkEmail, type LinkHosts } from '../wallet-links/link-hosts';

/** What the distribution spec files share: the service and the link host, three linked matricules, request bodies. */

/**
 * The provider timeout of the distributions' service: short, so that the timeout tests (a link host
 * delayed by PROVIDER_TIMEOUT_MS + 1 s) stay quick, but not so short that the links every spec
 * creates first time out when the in-band jest process pauses (500 ms did once in CI: 504).
 */
export const PROVIDER_TIMEOUT_MS = 2_000;

export type Api = Awaited<ReturnType<typeof apiUser>>;

/** The hosts of a spec file; `hosts`, `admin` and `m` are set once its beforeAll has run. */
export interface DistributionsContext {
  hosts: LinkHosts;
  admin: Api;
  /** Matricules linked through POST /v1/wallet-links: known to the provider. */
  m: [string, string, string];
  initRequests(): ReturnType<LinkHosts['link']['state']['requestsTo']>;
  fiatRequests(): ReturnType<LinkHosts['link']['state']['requestsTo']>;
  providerCalls(): number;
  sentInit(paymentId: string): ReturnType<LinkHosts['link']['state']['requestsTo']>;
  initBody(overrides?: Record<string, unknown>): Record<string, unknown> & { paymentId: string };
  fiatBody(overrides?: Record<string, unknown>): Record<string, unknown>;
  storedShares(id: string): Promise<bigint[]>;
}

/**
 * Registers the hooks of a spec file: the service with wallet links and distributions (provider
 * timeout PROVIDER_TIMEOUT_MS), three beneficiaries linked, link-host faults cleared and tokens synced before each test.
 */
export function useDistributionHosts(): DistributionsContext {
  const context = {
    initRequests: () => context.hosts.link.state.requestsTo('/api/agent/link/init'),
    fiatRequests: () => context.hosts.link.state.requestsTo('/api/agent/link/fiat-distribution'),
    providerCalls: () => context.initRequests().length + context.fiatRequests().length,
    sentInit: (paymentId: string) => context.initRequests().filter((r) => (r.body as { payment_id?: string }).payment_id === paymentId),
    initBody: (overrides: Record<string, unknown> = {}) => ({
      paymentReceiver: context.m[0],
      paymentId: `pay_${randomUUID()}`,
      amount: '10000',
      currency: 'XAF',
      distribution: [
        { matricule: context.m[0], rate: '33.33' },
        { matricule: context.m[1], rate: 33.33 },
        { matricule: context.m[2], rate: '33.34' },
      ],
      ...overrides,
    }),
    fiatBody: (overrides: Record<string, unknown> = {}) => ({
      payer: 'Awa Ndiaye',
      currency: 'EUR',
      amount: '250.75',
      distribution: [
        { matricule: context.m[1], rate: 60 },
        { matricule: context.m[2], rate: '40' },
      ],
      ...overrides,
    }),
    storedShares: async (id: string) =>
      (await context.hosts.service.prisma.distributionShare.findMany({ where: { distributionId: id }, orderBy: { position: 'asc' } })).map(
        (s) => s.shareMinor,
      ),
  } as unknown as DistributionsContext;

  beforeAll(async () => {
    context.hosts = await startLinkHosts({ PROVIDER_TIMEOUT_MS: String(PROVIDER_TIMEOUT_MS) });
    const owner = await apiUser(context.hosts.service);
    const links = [];
    for (const phone of ['650100001', '650100002', '650100003']) {
      const res = await owner.createLink({ email: uniqueLinkEmail('benef'), phone, phoneCountry: '+237' });
      expect(res.status).toBe(201);
      links.push(res.body.matricule as string);
    }
    context.m = links as [string, string, string];
    context.admin = await apiUser(context.hosts.service, `admin_${randomUUID().slice(0, 6)}`, 'admin');
  });
  beforeEach(async () => {
    context.hosts.link.state.clearFaults();
    await context.hosts.syncTokens();
  });
  afterAll(async () => {
    await context.hosts?.close();
  });

  return context;
}
