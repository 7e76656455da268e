/**
 * The Swagger UI as finance staff use it, in a real browser: Debian's chromium driven by
 * playwright-core against a listening instance. The `system` jest project (docs/testing.md): `.ci/run`
 * installs chromium when it is missing, and the test fails without it.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { FINANCE_TASKS } from '../../src/common/finance-tasks';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { customer, seedOrdersToFind } from '../support/orders-client';
import { nonLoopbackIPv4 } from '../support/machine-address';
import { launchChromium, liveResponse, requireChromium, scrollTo, tryOut } from '../support/swagger-ui-browser';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

const ARTIFACTS = resolve(__dirname, 'artifacts');
const SCREENSHOT = resolve(ARTIFACTS, 'swagger-orders.png');
const RESOLUTION_SCREENSHOT = resolve(ARTIFACTS, 'swagger-resolution.png');
const FINANCE_SCREENSHOT = resolve(ARTIFACTS, 'swagger-finance.png');
const SEEDED_ORDERS = 3;

let port: number;

describe('the Swagger UI in a browser', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let browser: Browser | undefined;
  const seededIds: string[] = [];
  let unknownOrderId: string;

  beforeAll(async () => {
    requireChromium();
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox, {}, [], { listen: true });
    port = service.config.port;
    // The PROCESSING ones are the newest of the database.
    const seeded = await seedOrdersToFind(
      await customer(service),
      Array.from({ length: SEEDED_ORDERS }, (_, i) => ({ amount: String(1000 + i), description: `Swagger UI order ${i + 1}` })),
      { amount: '2500', description: 'Swagger UI lost answer' },
    );
    seededIds.push(...seeded.processingIds);
    unknownOrderId = seeded.unknownId;
    browser = await launchChromium();
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    await service?.close();
    await sandbox?.close();
  });

  /** A fresh page of `height` pixels on /docs, authorized with `token` (see openAuthorized), closed after `work`. */
  async function onAuthorizedPage(token: string, height: number, work: (page: Page) => Promise<void>): Promise<void> {
    const page = await browser!.newPage({ viewport: { width: 1280, height } });
    page.setDefaultTimeout(10_000);
    try {
      await openAuthorized(page, token);
      await work(page);
    } finally {
      await page.close();
    }
  }

  it('authorizes with a finance token and lists the seeded orders with "Try it out"', async () => {
    const token = await service.bearer('fin', 'finance');
    await onAuthorizedPage(token, 1600, async (page) => {
      // GET /v1/orders: expand, "Try it out", "Execute".
      const operation = await tryOut(page, 'get', '/v1/orders');
      // Swagger UI fills parameters with their examples: the documented date range is an example, not a filter to apply.
      for (const name of ['from', 'to']) {
        await operation.locator(`tr[data-param-name="${name}"] input`).fill('');
      }
      await operation.locator('button.execute').click();

      const { status, body: bodyText } = await liveResponse(operation);
      expect(status).toBe('200');
      for (const id of seededIds) expect(bodyText).toContain(id);
      expect(bodyText).toContain('PROCESSING');

      // The request really carried the token (what "Authorize" is for).
      await expect(operation.locator('.curl-command').innerText()).resolves.toContain(`Authorization: Bearer ${token}`);

      // The operation from its summary line down to the live 200 response.
      await scrollTo(operation);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: SCREENSHOT });
    });
  }, 30_000);

  it('an admin resolves an UNKNOWN order with "Try it out" and finds it in the audit trail', async () => {
    const token = await service.bearer('swagger-admin', 'admin');
    await onAuthorizedPage(token, 1800, async (page) => {
      // POST /v1/orders/{id}/resolution: the order id, an Idempotency-Key and the decision.
      const resolution = await tryOut(page, 'post', '/v1/orders/{id}/resolution');
      await resolution.locator('tr[data-param-name="id"] input').fill(unknownOrderId);
      await resolution.locator('tr[data-param-name="Idempotency-Key"] input').fill(`swagger-${unknownOrderId}`);
      await resolution
        .locator('textarea.body-param__text')
        .fill(JSON.stringify({ status: 'SUCCEEDED', note: 'Provider dashboard shows the payment settled' }, null, 2));
      await resolution.locator('button.execute').click();

      const answer = await liveResponse(resolution);
      expect(answer.status).toBe('200');
      expect(answer.body).toContain('manual_resolution');
      expect(answer.body).toContain('swagger-admin');

      await scrollTo(resolution);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: RESOLUTION_SCREENSHOT });

      // GET /v1/audit-events, filtered on the order: the decision with its actor and note.
      const audit = await tryOut(page, 'get', '/v1/audit-events');
      for (const name of ['from', 'to']) await audit.locator(`tr[data-param-name="${name}"] input`).fill('');
      await audit.locator('tr[data-param-name="actor"] input').fill('swagger-admin');
      await audit.locator('tr[data-param-name="action"] select').selectOption('order.resolved');
      await audit.locator('tr[data-param-name="resourceId"] input').fill(unknownOrderId);
      await audit.locator('button.execute').click();
      const found = await liveResponse(audit);
      expect(found.status).toBe('200');
      const trail = found.body;
      expect(trail).toContain('order.resolved');
      expect(trail).toContain(unknownOrderId);
      expect(trail).toContain('Provider dashboard shows the payment settled');
    });
  }, 40_000);

  it('keeps the token across a reload of the page (persistAuthorization)', async () => {
    const token = await service.bearer('fin-reload', 'finance');
    await onAuthorizedPage(token, 1600, async (page) => {
      await page.reload();

      // No "Authorize" again: the padlock shows the scheme as authorized, and requests carry the token.
      await expect(page.locator('.auth-wrapper button.authorize').getAttribute('class')).resolves.toMatch(/\blocked\b/);
      const operation = await tryOut(page, 'get', '/v1/orders');
      await operation.locator('button.execute').click();
      const { status } = await liveResponse(operation);
      expect(status).toBe('200');
      await expect(operation.locator('.curl-command').innerText()).resolves.toContain(`Authorization: Bearer ${token}`);
    });
  }, 30_000);
});

describe('the Swagger UI from another computer, over plain HTTP', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let browser: Browser | undefined;
  let origin: string;

  beforeAll(async () => {
    requireChromium();
    const address = nonLoopbackIPv4();
    if (!address)
      throw new Error(
        'this machine has no IPv4 address besides loopback: the test needs one to reach the service as another computer would',
      );
    sandbox = await startTestSandbox();
    // As deployed with HOST=0.0.0.0 and a plain-HTTP PUBLIC_BASE_URL, opened by its address.
    service = await startTestService(sandbox, {}, [], { listen: true, host: '0.0.0.0' });
    origin = `http://${address}:${service.config.port}`;
    browser = await launchChromium();
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    await service?.close();
    await sandbox?.close();
  });

  /** Opens `path` at the machine's address; fails unless every request of the page succeeded and operations were rendered. */
  async function openRendered(path: string): Promise<Page> {
    const page = await browser!.newPage({ viewport: { width: 1280, height: 1600 } });
    page.setDefaultTimeout(10_000);
    const failed: string[] = [];
    page.on('requestfailed', (request) => failed.push(`${request.url()}: ${request.failure()?.errorText}`));
    await page.goto(`${origin}${path}`);
    await page.locator('.opblock').first().waitFor({ state: 'visible' });
    expect(failed).toEqual([]);
    return page;
  }

  it('/docs renders every operation, admin-only ones marked', async () => {
    const page = await openRendered('/docs');
    try {
      await expect(page.locator('.opblock').count()).resolves.toBeGreaterThan(40);
      const resolve = page
        .locator('.opblock.opblock-post')
        .filter({ has: page.locator('.opblock-summary-path[data-path="/v1/orders/{id}/resolution"]') });
      await expect(resolve.locator('.opblock-summary-description').innerText()).resolves.toContain('(admin only)');
    } finally {
      await page.close();
    }
  }, 30_000);

  it('/docs/finance renders the finance tasks, in order, with only what finance may call', async () => {
    const page = await openRendered('/docs/finance');
    try {
      const tags = await page.locator('.opblock-tag-section h3 .opblock-tag, .opblock-tag-section h3').allInnerTexts();
      const shown = tags.map((text) => text.split('\n')[0].trim()).filter(Boolean);
      expect(shown.filter((name) => Object.values(FINANCE_TASKS).some((task) => task.name === name))).toEqual(
        Object.values(FINANCE_TASKS).map((task) => task.name),
      );
      await expect(page.locator('.opblock-summary-path[data-path="/v1/orders/export.csv"]').count()).resolves.toBe(1);
      await expect(page.locator('.opblock-summary-path[data-path="/v1/orders/{id}/resolution"]').count()).resolves.toBe(0);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: FINANCE_SCREENSHOT });
    } finally {
      await page.close();
    }
  }, 30_000);
});

/** The Swagger UI with the bearer token set through "Authorize" (pasted without "Bearer "). */
async function openAuthorized(page: Page, token: string) {
  await page.goto(`http://127.0.0.1:${port}/docs`);
  await page.locator('.auth-wrapper button.authorize').click();
  const dialog = page.locator('.dialog-ux .modal-ux');
  await dialog.locator('input[aria-label="auth-bearer-value"]').fill(token);
  await dialog.locator('button.modal-btn.authorize').click();
  await dialog.locator('button.btn-done').click();
  await dialog.waitFor({ state: 'detached' });
}
