/**
 * Finance staff sign in to the Swagger UI with the company's account, in a real browser (Debian's
 * chromium driven by playwright-core): a real OpenID Connect provider runs locally
 * (test/support/oidc-provider-server.mjs, on 127.0.0.1), the service listens on 0.0.0.0 with a
 * plain-HTTP PUBLIC_BASE_URL, and the browser opens /docs/finance through this machine's
 * non-loopback address, as another computer would. The `system` jest project: without chromium it
 * fails, never skips (.ci/run installs it).
 *
 * With UPDATE_SCREENSHOTS=1 the test also writes the walkthrough's screenshots into
 * docs/images/finance/ (docs/finance.md shows them); otherwise it writes nothing there, so that a
 * test run never changes the committed pictures.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import request from 'supertest';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { mintToken } from '../../src/auth/token-minter';
import type { Role } from '../../src/auth/auth.types';
import { OAUTH2_REDIRECT_PATH } from '../../src/http/swagger-sign-in';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { nonLoopbackIPv4 } from '../support/machine-address';
import { OIDC_ACCOUNTS, startOidcProvider, type RunningOidcProvider } from '../support/oidc-provider';
import { databaseOfItsOwn } from '../support/database-of-its-own';
import { customer, seedOrdersToFind } from '../support/orders-client';
import { launchChromium, liveResponse, requireChromium, scrollTo, tryOut } from '../support/swagger-ui-browser';
import { freePort, startTestSandbox, startTestService, type TestService } from '../support/test-service';

/**
 * Only here is the provider on loopback while the page is not (the service accepts an http://
 * issuer on a loopback address only, and the page is opened as another computer would): Chrome's
 * Private Network Access refuses a plain-HTTP page's requests to loopback (the token exchange).
 * A real provider is https on a host of its own, where the rule does not apply.
 */
const ALLOW_LOOPBACK_PROVIDER = [
  '--disable-features=BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights,LocalNetworkAccessChecks',
];
const SCREENSHOTS = resolve(__dirname, '../../docs/images/finance');
const updateScreenshots = process.env.UPDATE_SCREENSHOTS === '1';
const CLIENT_ID = 'payments-swagger';
const AUDIENCE = 'api://payments-bff';
const SEED_SECRET = 'swagger-sign-in-test-secret-0123456789abcdef';
const SEEDED_ORDERS = 3;

describe("the Swagger UI signed in with the company's account (OpenID Connect)", () => {
  let sandbox: RunningSandbox;
  let provider: RunningOidcProvider;
  let service: TestService;
  let database: { url: string; drop: () => Promise<void> } | undefined;
  let browser: Browser | undefined;
  let origin: string;
  const seededIds: string[] = [];
  let unknownOrderId: string;

  beforeAll(async () => {
    requireChromium();
    const address = nonLoopbackIPv4();
    if (!address)
      throw new Error('this machine has no IPv4 address besides loopback: the test opens the service as another computer would');
    const port = await freePort();
    origin = `http://${address}:${port}`;
    // The provider first: the service reads its discovery document while starting.
    provider = await startOidcProvider({ clientId: CLIENT_ID, redirectUris: [`${origin}${OAUTH2_REDIRECT_PATH}`], audience: AUDIENCE });
    sandbox = await startTestSandbox();
    // Its own: the lists, the attention queue and the screenshots show what this walkthrough made, whatever ran before it.
    database = await databaseOfItsOwn('finance_walkthrough');
    service = await startTestService(
      sandbox,
      {
        DATABASE_URL: database.url,
        PUBLIC_BASE_URL: origin,
        // The lost answer below is a provider call that times out: no need to wait the default 5 s.
        PROVIDER_TIMEOUT_MS: '1000',
        AUTH_OIDC_ISSUER: provider.issuer,
        AUTH_ROLES_CLAIM: 'realm_access.roles',
        AUTH_OIDC_SWAGGER_CLIENT_ID: CLIENT_ID,
        AUTH_OIDC_SWAGGER_SCOPES: 'openid profile email',
        AUTH_JWT_AUDIENCE: AUDIENCE,
        // The seeding customer's token (the provider has no customer account).
        AUTH_JWT_SECRET: SEED_SECRET,
      },
      [],
      { listen: true, host: '0.0.0.0', port },
    );
    const seeding = {
      ...service,
      bearer: (sub: string, ...roles: Role[]) => mintToken({ sub, roles, ttl: '1h', secret: SEED_SECRET, audience: AUDIENCE }),
    };
    const seeded = await seedOrdersToFind(
      await customer(seeding, 'cust_walkthrough', 'customer'),
      Array.from({ length: SEEDED_ORDERS }, (_, i) => ({ amount: String(15000 + i * 2500), description: `Invoice 2026-11-0${i + 1}` })),
      { amount: '42000', description: 'Invoice 2026-11-04' },
    );
    seededIds.push(...seeded.processingIds);
    unknownOrderId = seeded.unknownId;
    browser = await launchChromium(ALLOW_LOOPBACK_PROVIDER);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await service?.close();
    await database?.drop();
    await sandbox?.close();
    await provider?.close();
  });

  /** A fresh browser (no cookie, nothing stored) on /docs/finance, every request of the page succeeding. */
  async function openFinanceDocs(): Promise<{ context: BrowserContext; page: Page; failed: string[] }> {
    const context = await browser!.newContext({ viewport: { width: 1280, height: 1400 }, acceptDownloads: true });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const failed: string[] = [];
    page.on('requestfailed', (request) => failed.push(`${request.url()}: ${request.failure()?.errorText}`));
    await page.goto(`${origin}/docs/finance`);
    await page.locator('.opblock').first().waitFor({ state: 'visible' });
    return { context, page, failed };
  }

  /** Authorize → the company's sign-in (a pop-up at the provider) → back, signed in. */
  async function signIn(page: Page, account: { username: string; password: string }, screenshot?: string): Promise<void> {
    await page.locator('.auth-wrapper button.authorize').click();
    const dialog = page.locator('.dialog-ux .modal-ux');
    const signInSection = dialog.locator('.auth-container').filter({ hasText: 'companySignIn' });
    await expect(signInSection.innerText()).resolves.toContain('authorizationCode with PKCE');
    const [popup] = await Promise.all([
      page.waitForEvent('popup'),
      signInSection.locator('button.modal-btn', { hasText: /^Authorize$/ }).click(),
    ]);
    await popup.locator('#username').waitFor();
    await popup.locator('#username').fill(account.username);
    await popup.locator('#password').fill(account.password);
    if (screenshot) await save(popup, screenshot);
    await Promise.all([popup.waitForEvent('close'), popup.locator('button[type="submit"]').click()]);
    await signInSection.locator('button.modal-btn', { hasText: /^Logout$/ }).waitFor();
    await dialog.locator('button.close-modal').click();
    await dialog.waitFor({ state: 'detached' });
  }

  it('a finance person signs in, lists payments, exports them, reads the attention queue, and can resolve nothing', async () => {
    const { context, page, failed } = await openFinanceDocs();
    try {
      await signIn(page, OIDC_ACCOUNTS.finance, '01-sign-in.png');
      // The padlock is closed: every operation carries the token from now on.
      await expect(page.locator('.auth-wrapper button.authorize:not(.modal-btn)').getAttribute('class')).resolves.toMatch(/\blocked\b/);
      await save(page, '02-finance-document.png');

      // Payments: GET /v1/orders with "Try it out".
      const list = await tryOut(page, 'get', '/v1/orders');
      for (const name of ['from', 'to']) await list.locator(`tr[data-param-name="${name}"] input`).fill('');
      await list.locator('button.execute').click();
      const listed = await liveResponse(list);
      expect(listed.status).toBe('200');
      for (const id of seededIds) expect(listed.body).toContain(id);
      const curl = await list.locator('.curl-command').innerText();
      const token = /Authorization: Bearer ([\w.-]+)/.exec(curl)?.[1];
      expect(token?.split('.')).toHaveLength(3);
      // The provider's token (RS256, its issuer, the finance role at realm_access.roles), not one minted here.
      const claims = JSON.parse(Buffer.from(token!.split('.')[1], 'base64url').toString()) as Record<string, unknown>;
      expect(claims).toMatchObject({ iss: provider.issuer, sub: OIDC_ACCOUNTS.finance.username, realm_access: { roles: ['finance'] } });
      await scrollTo(list);
      await save(page, '03-payments-listed.png');
      await collapse(list);

      // Export: GET /v1/orders/export.csv, and the file the browser downloads.
      const exported = await tryOut(page, 'get', '/v1/orders/export.csv');
      for (const name of ['from', 'to']) await exported.locator(`tr[data-param-name="${name}"] input`).fill('');
      await exported.locator('button.execute').click();
      const download = exported.locator('.live-responses-table a', { hasText: 'Download file' });
      await download.waitFor();
      await expect(exported.locator('.live-responses-table tbody .response .response-col_status').first().innerText()).resolves.toBe('200');
      const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
      const csv = readFileSync(await file.path(), 'utf8');
      for (const id of [...seededIds, unknownOrderId]) expect(csv).toContain(id);
      await scrollTo(exported);
      await save(page, '04-export.png');
      await collapse(exported);

      // What waits for a person: the order whose answer was lost.
      const attention = await tryOut(page, 'get', '/v1/reports/attention');
      await attention.locator('button.execute').click();
      const queue = await liveResponse(attention);
      expect(queue.status).toBe('200');
      expect(queue.body).toContain(unknownOrderId);
      await scrollTo(attention);
      await save(page, '05-attention-queue.png');

      // Deciding it is an admin's: not in the finance document, and refused to this token.
      await expect(page.locator('.opblock-summary-path[data-path="/v1/orders/{id}/resolution"]').count()).resolves.toBe(0);
      const refused = await page.evaluate(
        async ({ id, bearer }) => {
          const answer = await fetch(`/v1/orders/${id}/resolution`, {
            method: 'POST',
            headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'idempotency-key': `walkthrough-${id}` },
            body: JSON.stringify({ status: 'SUCCEEDED', note: 'Finance cannot decide this' }),
          });
          return { status: answer.status, body: (await answer.json()) as { code: string } };
        },
        { id: unknownOrderId, bearer: token! },
      );
      expect(refused).toMatchObject({ status: 403, body: { code: 'forbidden' } });
      // Nothing was decided: the order is still UNKNOWN.
      const auditor = await mintToken({ sub: 'auditor', roles: ['admin'], ttl: '5m', secret: SEED_SECRET, audience: AUDIENCE });
      const still = await request(service.server).get(`/v1/orders/${unknownOrderId}`).auth(auditor, { type: 'bearer' });
      expect(still.body.status).toBe('UNKNOWN');
      expect(failed).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('when a call answers 401 (the token has expired), the page forgets the token and opens Authorize again', async () => {
    const { context, page } = await openFinanceDocs();
    try {
      await signIn(page, OIDC_ACCOUNTS.expiredTokens);
      const list = await tryOut(page, 'get', '/v1/orders');
      await list.locator('button.execute').click();
      const answer = await liveResponse(list);
      expect(answer.status).toBe('401');
      expect(answer.body).toContain('expired');
      // Authorize is open again, the company's sign-in offered anew (its Authorize button, not Logout), the padlock open.
      const dialog = page.locator('.dialog-ux .modal-ux');
      const signInSection = dialog.locator('.auth-container').filter({ hasText: 'companySignIn' });
      await signInSection.locator('button.modal-btn', { hasText: /^Authorize$/ }).waitFor();
      await expect(page.locator('.auth-wrapper button.authorize:not(.modal-btn)').getAttribute('class')).resolves.not.toMatch(/\blocked\b/);
    } finally {
      await context.close();
    }
  }, 60_000);
});

/** Writes a screenshot of the walkthrough into docs/images/finance/, only with UPDATE_SCREENSHOTS=1. */
async function save(page: Page, name: string): Promise<void> {
  if (!updateScreenshots) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: resolve(SCREENSHOTS, name) });
}

/** Closes an expanded operation, so that the next one's screenshot shows that one. */
async function collapse(operation: Locator): Promise<void> {
  await operation.locator('.opblock-summary').first().click();
}
