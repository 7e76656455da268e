/**
 * The example checkout (examples/web-checkout) in Chromium, on another origin than the API (another
 * port): it pays with the sandbox and follows the order live with fetch and its bearer token, also
 * across a restart of the service mid-stream (the same port and database: the page resumes with
 * Last-Event-ID and shows the final status once), and shows a refused order's problem detail.
 */
import type { Browser, Page, Request } from 'playwright-core';
import { startCheckoutServer, type CheckoutServer } from '../../examples/web-checkout/server';
import { TEST_WALLETS, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { startChildService, type ChildService } from '../support/child-service';
import { launchChromium, requireChromium } from '../support/swagger-ui-browser';
import { testDatabaseUrl } from '../support/test-database';
import { freePort, startTestSandbox } from '../support/test-service';

const JWT_SECRET = 'web-checkout-test-jwt-secret-0123456789abcdef';

describe('the example checkout in a browser, on another origin than the API', () => {
  let sandbox: RunningSandbox;
  let apiPort: number;
  let service: ChildService | undefined;
  let checkout: CheckoutServer;
  let browser: Browser;
  let page: Page;
  /** The Last-Event-ID of each live-status request the page sent (undefined: none). */
  let streamRequests: (string | undefined)[];

  const startService = async () => {
    service = await startChildService(
      {
        DATABASE_URL: testDatabaseUrl(),
        PROVIDER_BASE_URL: sandbox.url,
        AUTH_JWT_SECRET: JWT_SECRET,
        CALLBACK_SIGNING_SECRET: 'test-callback-signing-secret-0123456789abcdef',
        CORS_ORIGINS: new URL(checkout.url).origin,
        LOG_LEVEL: 'warn',
      },
      { port: apiPort },
    );
  };
  const stopService = async () => {
    const running = service;
    service = undefined;
    if (!running || running.child.exitCode !== null) return;
    running.child.kill('SIGTERM');
    await running.exited;
  };

  beforeAll(async () => {
    requireChromium();
    // Long enough for the page to be following PROCESSING when the service is stopped; the sandbox
    // retries a callback that finds the service down (delay, x2, x4, x8).
    sandbox = await startTestSandbox({ callbackDelayMs: 5_000 });
    apiPort = await freePort();
    checkout = await startCheckoutServer({ apiBaseUrl: `http://127.0.0.1:${apiPort}`, jwtSecret: JWT_SECRET });
    await startService();
    browser = await launchChromium();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await stopService();
    await checkout?.close();
    await sandbox?.close();
  });
  beforeEach(async () => {
    page = await browser.newPage();
    streamRequests = [];
    page.on('request', (request: Request) => {
      if (/\/v1\/orders\/[^/]+\/events$/.test(request.url()))
        void request.allHeaders().then((headers) => streamRequests.push(headers['last-event-id']));
    });
    await page.goto(checkout.url);
    expect(new URL(page.url()).origin).not.toBe(`http://127.0.0.1:${apiPort}`);
  });
  afterEach(() => page?.close());

  const statusesShown = () => page.locator('#statuses li').allInnerTexts();
  const pay = async (amount: string, wallet: string) => {
    await page.fill('#amount', amount);
    await page.fill('#wallet', wallet);
    await page.click('#pay');
  };

  it('pays and shows each status live until SUCCEEDED', async () => {
    await pay('2500', TEST_WALLETS.SUCCESS);
    await page.locator('#statuses li[data-status="SUCCEEDED"]').waitFor({ timeout: 30_000 });
    expect(await statusesShown()).toEqual(['PROCESSING', 'SUCCEEDED']);
    expect(await page.locator('#problem').isHidden()).toBe(true);
    expect(streamRequests).toEqual([undefined]);
  }, 60_000);

  it('resumes with Last-Event-ID across a restart of the service mid-stream and shows the final status once', async () => {
    await pay('3000', TEST_WALLETS.SUCCESS);
    await page.locator('#statuses li[data-status="PROCESSING"]').waitFor({ timeout: 20_000 });
    // The callback has not come yet: the page is following a live stream when the service stops.
    expect(await statusesShown()).toEqual(['PROCESSING']);
    await stopService();
    await startService();
    await page.locator('#statuses li[data-status="SUCCEEDED"]').waitFor({ timeout: 60_000 });
    // Nothing arrives after the final status: give a duplicate the time to show.
    await page.waitForTimeout(500);
    expect(await statusesShown()).toEqual(['PROCESSING', 'SUCCEEDED']);
    expect(await page.locator('#problem').isHidden()).toBe(true);
    // The first request had no Last-Event-ID; every one after the drop resumed from the PROCESSING event.
    expect(streamRequests.length).toBeGreaterThanOrEqual(2);
    expect(streamRequests[0]).toBeUndefined();
    expect(new Set(streamRequests.slice(1)).size).toBe(1);
    expect(streamRequests.at(-1)).toMatch(/^\d+$/);
  }, 120_000);

  it("shows the problem's detail when the order is refused", async () => {
    await pay('0', TEST_WALLETS.SUCCESS);
    const problem = page.locator('#problem');
    await problem.waitFor({ state: 'visible', timeout: 20_000 });
    expect(await problem.getAttribute('data-code')).toBe('validation_failed');
    expect(await problem.innerText()).toMatch(/\S/);
    expect(await statusesShown()).toEqual([]);
  }, 60_000);
});
