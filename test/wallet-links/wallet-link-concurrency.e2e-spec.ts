import { DistributionsModule } from '../../src/distributions/distributions.module';
import { WalletLinksModule } from '../../src/wallet-links/wallet-links.module';
import { startTestService, type TestService } from '../support/test-service';
import { apiUser, LINK_API_KEY, startLinkHosts, uniqueLinkEmail, type LinkHosts } from './link-hosts';

/**
 * One email, one provider call: the email is claimed in PostgreSQL before the provider is asked,
 * so concurrent requests on two instances make one `link/new` call between them.
 */
describe('wallet links under concurrency', () => {
  let hosts: LinkHosts;
  let second: TestService;
  const linkCallsFor = (email: string) =>
    hosts.link.state.requestsTo('/api/agent/link/new').filter((r) => String(r.query.email).toLowerCase() === email.toLowerCase());
  const rowsFor = (email: string) => hosts.service.prisma.walletLink.findMany({ where: { email: { equals: email, mode: 'insensitive' } } });

  beforeAll(async () => {
    hosts = await startLinkHosts({ PROVIDER_TIMEOUT_MS: '3000' });
    second = await startTestService(
      hosts.base,
      { PROVIDER_LINK_BASE_URL: hosts.link.url, PROVIDER_API_KEY: LINK_API_KEY, PROVIDER_TIMEOUT_MS: '3000' },
      [WalletLinksModule, DistributionsModule],
    );
  });
  beforeEach(async () => {
    hosts.link.state.clearFaults();
    await hosts.syncTokens();
  });
  afterAll(async () => {
    await second?.close();
    await hosts?.close();
  });

  it('8 concurrent requests for one email over two instances: one provider call, one link, the others 409', async () => {
    const email = uniqueLinkEmail('race');
    // The provider takes its time, so that every request arrives while the first is in flight.
    hosts.link.state.injectFault({ path: '/api/agent/link/new', delayMs: 400, times: 8 });
    const users = await Promise.all(Array.from({ length: 8 }, (_, i) => apiUser(i % 2 ? second : hosts.service)));
    const answers = await Promise.all(
      users.map((user, i) =>
        user.createLink({ email: i % 3 ? email : email.toUpperCase(), phone: `65000${String(i).padStart(4, '0')}`, phoneCountry: '+237' }),
      ),
    );

    expect(linkCallsFor(email)).toHaveLength(1);
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    const refused = answers.filter((a) => a.status === 409);
    for (const answer of refused) expect(['wallet_link_in_progress', 'wallet_link_exists']).toContain(answer.body.code);
    const inProgress = refused.filter((a) => a.body.code === 'wallet_link_in_progress');
    expect(inProgress.length).toBeGreaterThan(0);
    for (const answer of inProgress) expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
    const rows = await rowsFor(email);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      status: 'LINKED',
      claimExpiresAt: null,
      matricule: answers.find((a) => a.status === 201)!.body.matricule,
    });

    // A retry after the Retry-After gets the link: named to its owner, no provider call.
    const winner = users[answers.findIndex((a) => a.status === 201)];
    const retry = await winner.createLink({ email, phone: '650000000', phoneCountry: '+237' });
    expect(retry.body).toMatchObject({ code: 'wallet_link_exists', walletLinkId: rows[0].id });
    expect(linkCallsFor(email)).toHaveLength(1);
  });

  it('a link in progress is answered 409 wallet_link_in_progress without a provider call, and is neither listed nor readable', async () => {
    const email = uniqueLinkEmail('pending');
    const alice = await apiUser(hosts.service);
    hosts.link.state.injectFault({ path: '/api/agent/link/new', delayMs: 800 });
    // `.then` sends it now (supertest waits to be awaited).
    const first = alice.createLink({ email, phone: '650000001', phoneCountry: '+237' }).then((res) => res);
    await hosts.link.state.waitForRequest((r) => r.path === '/api/agent/link/new' && r.query.email === email);

    const pending = (await rowsFor(email))[0];
    expect(pending).toMatchObject({ status: 'PENDING', matricule: null, apikeyEncrypted: null });
    expect((await alice.getLink(pending.id)).status).toBe(404);
    expect((await alice.listLinks()).body.items).toEqual([]);
    const concurrent = await (await apiUser(second)).createLink({ email, phone: '650000002', phoneCountry: '+237' });
    expect(concurrent.status).toBe(409);
    expect(concurrent.body).toMatchObject({ code: 'wallet_link_in_progress' });
    expect(concurrent.headers['content-type']).toMatch(/^application\/problem\+json/);

    expect((await first).status).toBe(201);
    expect(linkCallsFor(email)).toHaveLength(1);
  });

  it('a refused or lost link frees the email: the retry asks the provider again', async () => {
    const email = uniqueLinkEmail('retry');
    const alice = await apiUser(hosts.service);
    hosts.link.state.injectFault({ path: '/api/agent/link/new', status: 400, body: { code: '400', success: false, message: 'Try again' } });
    expect((await alice.createLink({ email, phone: '650000001', phoneCountry: '+237' })).status).toBe(422);
    expect(await rowsFor(email)).toEqual([]);
    hosts.link.state.injectFault({ path: '/api/agent/link/new', dropConnection: true });
    expect((await alice.createLink({ email, phone: '650000001', phoneCountry: '+237' })).status).toBe(502);
    expect(await rowsFor(email)).toEqual([]);
    expect((await alice.createLink({ email, phone: '650000001', phoneCountry: '+237' })).status).toBe(201);
    expect(linkCallsFor(email)).toHaveLength(3);
  });

  it('a claim whose holder died is taken over once it lapses; a live one is not', async () => {
    const alice = await apiUser(hosts.service);
    const [lapsed, live] = [uniqueLinkEmail('lapsed'), uniqueLinkEmail('live')];
    for (const [email, offset] of [
      [lapsed, '-1 minute'],
      [live, '10 minutes'],
    ]) {
      await hosts.service.prisma.$executeRaw`
        INSERT INTO wallet_links (id, owner_id, email, email_key, phone, phone_country, status, claim_expires_at)
        VALUES (gen_random_uuid(), 'crashed', ${email}, lower(${email}), '650000009', '+237', 'PENDING', now() + ${offset}::interval)`;
    }
    expect((await alice.createLink({ email: live, phone: '650000001', phoneCountry: '+237' })).body.code).toBe('wallet_link_in_progress');
    expect(linkCallsFor(live)).toHaveLength(0);

    const taken = await alice.createLink({ email: lapsed, phone: '650000001', phoneCountry: '+237' });
    expect(taken.status).toBe(201);
    expect(taken.body.ownerId).toBe(alice.sub);
    expect(await rowsFor(lapsed)).toEqual([expect.objectContaining({ id: taken.body.id, status: 'LINKED', ownerId: alice.sub })]);
  });
});
