import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import request from 'supertest';
import { WalletLinkClient } from '../../src/provider/clients/wallet-link.client';
import { WalletLinksService } from '../../src/wallet-links/wallet-links.service';
import { databaseDump } from '../support/database-dump';
import { apiUser, LINK_API_KEY, startLinkHosts, tokenWithEmail, uniqueLinkEmail, type LinkHosts } from './link-hosts';

describe('wallet links end to end', () => {
  let hosts: LinkHosts;
  const linkRequests = () => hosts.link.state.requestsTo('/api/agent/link/new');
  const apikeyOf = (email: string) => hosts.link.state.walletLinks.get(email.toLowerCase())?.apikey;
  const linkBody = (overrides: Record<string, unknown> = {}) => ({
    email: uniqueLinkEmail(),
    phone: '650000001',
    phoneCountry: '+237',
    ...overrides,
  });
  /** Every HTTP answer body of the file, to prove no apikey was ever in one. */
  const answers: string[] = [];
  const keep = <T extends { text: string }>(res: T) => {
    answers.push(res.text);
    return res;
  };

  beforeAll(async () => {
    hosts = await startLinkHosts({ PROVIDER_TIMEOUT_MS: '500' });
  });
  beforeEach(async () => {
    hosts.link.state.clearFaults();
    await hosts.syncTokens();
  });
  afterAll(async () => {
    await hosts?.close();
  });

  it('links a wallet: GET {link_base_url}/api/agent/link/new with the query, bearer, x-api-key and JSON content type; answers 201 without the apikey', async () => {
    const alice = await apiUser(hosts.service);
    const body = linkBody({ email: `Awa.${Date.now()}@Example.com`, phone: '0650000002' });
    const baseBefore = hosts.base.state.requestsTo('/api/agent/link/new').length;
    const res = keep(await alice.createLink(body));

    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      matricule: expect.stringMatching(/^MAT\d+$/),
      email: body.email,
      phone: '0650000002',
      phoneCountry: '+237',
      ownerId: alice.sub,
      createdAt: expect.any(String),
    });
    const sent = linkRequests().at(-1)!;
    expect(sent.method).toBe('GET');
    expect(sent.query).toEqual({ email: body.email, phone: '0650000002', phoneCountry: '+237' });
    expect(sent.body == null || sent.body === '').toBe(true);
    expect(sent.headers).toMatchObject({
      authorization: `Bearer ${hosts.bearer()}`,
      'x-api-key': LINK_API_KEY,
      'content-type': 'application/json',
    });
    expect(sent.headers['x-sp-auth-token']).toBeUndefined();
    // {link_base_url} honoured: nothing of it went to {base_url}.
    expect(hosts.base.state.requestsTo('/api/agent/link/new')).toHaveLength(baseBefore);
    expect(hosts.link.state.walletLinks.get(body.email.toLowerCase())?.matricule).toBe(res.body.matricule);

    const apikey = apikeyOf(body.email)!;
    expect(apikey).toMatch(/^lk_/);
    expect(res.text).not.toContain(apikey);
    expect(JSON.stringify(res.headers)).not.toContain(apikey);
  });

  it('stores the apikey encrypted (AES-256-GCM, bound to the matricule) and can read it back server-side', async () => {
    const alice = await apiUser(hosts.service);
    const body = linkBody();
    const res = keep(await alice.createLink(body));
    const row = await hosts.service.prisma.walletLink.findUniqueOrThrow({ where: { id: res.body.id } });
    const apikey = apikeyOf(body.email)!;
    expect(row).toMatchObject({
      ownerId: alice.sub,
      email: body.email,
      phone: body.phone,
      phoneCountry: '+237',
      matricule: res.body.matricule,
    });
    expect(row.apikeyEncrypted).toMatch(/^v2\.[\w-]{8}\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(row.apikeyEncrypted).not.toContain(apikey);
    expect(await hosts.service.get(WalletLinksService).apikeyOf(res.body.id)).toBe(apikey);
  });

  it('reads: the owner and finance see a link, another customer gets 404; lists are scoped and paginated', async () => {
    const alice = await apiUser(hosts.service);
    const bob = await apiUser(hosts.service);
    const finance = await apiUser(hosts.service, 'fin_links', 'finance');
    const first = keep(await alice.createLink(linkBody())).body;
    const second = keep(await alice.createLink(linkBody({ phone: '650000009' }))).body;
    const bobs = keep(await bob.createLink(linkBody())).body;

    const own = keep(await alice.getLink(first.id));
    expect(own.status).toBe(200);
    expect(own.body).toEqual(first);
    const stranger = keep(await bob.getLink(first.id));
    expect(stranger.status).toBe(404);
    expect(stranger.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(stranger.body).toMatchObject({ code: 'not_found' });
    expect(stranger.text).not.toContain(first.matricule);
    expect((await bob.getLink('not-a-uuid')).status).toBe(404);
    expect(keep(await finance.getLink(first.id)).body).toEqual(first);

    const page1 = keep(await alice.listLinks({ limit: 1 }));
    expect(page1.status).toBe(200);
    expect(page1.body.items).toEqual([second]);
    expect(page1.body.nextCursor).toEqual(expect.any(String));
    const page2 = keep(await alice.listLinks({ limit: 1, cursor: page1.body.nextCursor }));
    expect(page2.body).toEqual({ items: [first], nextCursor: null });
    expect((await bob.listLinks()).body.items.map((l: { id: string }) => l.id)).toEqual([bobs.id]);

    const all = keep(await finance.listLinks({ limit: 200 }));
    const ids = all.body.items.map((l: { id: string }) => l.id);
    expect(ids).toEqual(expect.arrayContaining([first.id, second.id, bobs.id]));
    expect((await alice.listLinks({ cursor: 'garbage' })).body).toMatchObject({ status: 400, errors: [{ field: 'cursor' }] });
    expect((await alice.listLinks({ limit: 201 })).status).toBe(400);
  });

  it.each([
    ['phone with +', { phone: '+237650000001' }, 'phone'],
    ['phone with letters', { phone: '65000000a' }, 'phone'],
    ['phone with spaces', { phone: '650 000 001' }, 'phone'],
    ['phone as a number', { phone: 650000001 }, 'phone'],
    ['phoneCountry without +', { phoneCountry: '237' }, 'phoneCountry'],
    ['phoneCountry too long', { phoneCountry: '+23712' }, 'phoneCountry'],
    ['a bad email', { email: 'awa@' }, 'email'],
    ['no email', { email: undefined }, 'email'],
    ['an unknown field', { apikey: 'mine' }, 'apikey'],
  ])('refuses %s with 400 by field and calls no provider', async (_name, overrides, field) => {
    const alice = await apiUser(hosts.service);
    const before = linkRequests().length;
    const res = keep(await alice.createLink(linkBody(overrides)));
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ code: 'validation_failed', status: 400 });
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    expect(linkRequests()).toHaveLength(before);
  });

  it('an email already linked here: 409 wallet_link_exists, naming the link only to its owner, with no provider call', async () => {
    const alice = await apiUser(hosts.service);
    const bob = await apiUser(hosts.service);
    const body = linkBody();
    const created = keep(await alice.createLink(body)).body;
    const before = linkRequests().length;

    const again = keep(await alice.createLink({ ...body, email: body.email.toUpperCase() }));
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'wallet_link_exists', walletLinkId: created.id, matricule: created.matricule });
    const other = keep(await bob.createLink(body));
    expect(other.status).toBe(409);
    expect(other.body.code).toBe('wallet_link_exists');
    expect(other.body.walletLinkId).toBeUndefined();
    expect(other.text).not.toContain(created.matricule);
    expect(linkRequests()).toHaveLength(before);
    expect(await hosts.service.prisma.walletLink.count({ where: { email: { equals: body.email, mode: 'insensitive' } } })).toBe(1);
  });

  it("the provider's {code, success:false, message} refusal: 422 provider_link_rejected with its message, nothing stored", async () => {
    const alice = await apiUser(hosts.service);
    // Linked at the provider by someone else (not through this service): the sandbox refuses.
    const email = uniqueLinkEmail('outside');
    await hosts.service.get(WalletLinkClient).linkUser({ email, phone: '650000003', phoneCountry: '+237' });
    const res = keep(await alice.createLink(linkBody({ email })));
    expect(res.status).toBe(422);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ code: 'provider_link_rejected', providerMessage: 'User already linked', outcomeKnown: true });
    expect(res.body.detail).toContain('User already linked');

    hosts.link.state.injectFault({
      path: '/api/agent/link/new',
      status: 400,
      body: { code: '400', success: false, message: 'Invalid phone for this country' },
    });
    const refused = keep(await alice.createLink(linkBody()));
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'provider_link_rejected', providerMessage: 'Invalid phone for this country' });
    expect((await alice.listLinks()).body.items).toEqual([]);
  });

  it('a provider timeout: 504 provider_timeout, nothing stored', async () => {
    const alice = await apiUser(hosts.service);
    hosts.link.state.injectFault({ path: '/api/agent/link/new', delayMs: 1500 });
    const res = keep(await alice.createLink(linkBody()));
    expect(res.status).toBe(504);
    expect(res.body).toMatchObject({ code: 'provider_timeout', outcomeKnown: false });
    expect((await alice.listLinks()).body.items).toEqual([]);
  });

  describe('a customer links only its own verified email; finance and admin any email', () => {
    const post = (token: string, body: Record<string, unknown>) =>
      request(hosts.service.server).post('/v1/wallet-links').auth(token, { type: 'bearer' }).send(body);
    const refusedWithoutEffect = async (res: request.Response, email: string, before: number) => {
      keep(res);
      expect(res.status).toBe(403);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ status: 403, code: 'wallet_link_email_not_verified' });
      expect(linkRequests()).toHaveLength(before);
      expect(await hosts.service.prisma.walletLink.count({ where: { email: { equals: email, mode: 'insensitive' } } })).toBe(0);
    };

    it('403 wallet_link_email_not_verified, with no provider call: no email claim, an unverified one, or another email', async () => {
      const sub = `cust_${randomUUID().slice(0, 8)}`;
      const email = uniqueLinkEmail('own');
      const before = linkRequests().length;
      await refusedWithoutEffect(await post(await hosts.service.bearer(sub), linkBody({ email })), email, before);
      await refusedWithoutEffect(
        await post(await tokenWithEmail(hosts.service, sub, [], email, false), linkBody({ email })),
        email,
        before,
      );
      const other = uniqueLinkEmail('other');
      await refusedWithoutEffect(
        await post(await tokenWithEmail(hosts.service, sub, [], email, true), linkBody({ email: other })),
        other,
        before,
      );
      // A claim that merely says "true" as text is not a verification.
      const textual = await new SignJWT({ roles: ['customer'], email, email_verified: 'true' })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(sub)
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode(hosts.service.config.auth.jwtSecret));
      await refusedWithoutEffect(await post(textual, linkBody({ email })), email, before);
    });

    it('its own verified email links, whatever the case of its spelling', async () => {
      const sub = `cust_${randomUUID().slice(0, 8)}`;
      const email = `Awa.${randomUUID().slice(0, 8)}@Example.COM`;
      const token = await tokenWithEmail(hosts.service, sub, [], email, true);
      const res = keep(await post(token, linkBody({ email: email.toLowerCase() })));
      expect(res.status).toBe(201);
      const stored = await hosts.service.prisma.walletLink.findUniqueOrThrow({ where: { id: res.body.id } });
      expect(stored).toMatchObject({ ownerId: sub, email: email.toLowerCase() });
    });

    it('finance and admin link any email, with no email claim at all', async () => {
      for (const role of ['finance', 'admin'] as const) {
        const token = await hosts.service.bearer(`${role}_links_${randomUUID().slice(0, 8)}`, role);
        const res = keep(await post(token, linkBody()));
        expect([role, res.status]).toEqual([role, 201]);
      }
    });

    it('no token is 401', async () => {
      const before = linkRequests().length;
      expect((await request(hosts.service.server).post('/v1/wallet-links').send(linkBody())).status).toBe(401);
      expect(linkRequests()).toHaveLength(before);
    });
  });

  it('no apikey in any answer, in any log line, or anywhere in a database dump', async () => {
    const apikeys = [...hosts.link.state.walletLinks.values()].map((l) => l.apikey);
    expect(apikeys.length).toBeGreaterThanOrEqual(5);
    const dump = await databaseDump(hosts.service);
    expect(dump).toContain('wallet_links');
    const logs = hosts.service.logs.text;
    expect(logs).toContain('wallet linked');
    for (const apikey of apikeys) {
      for (const text of answers) expect(text).not.toContain(apikey);
      expect(logs).not.toContain(apikey);
      expect(dump).not.toContain(apikey);
    }
  });
});
