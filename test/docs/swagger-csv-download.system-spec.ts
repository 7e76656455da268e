/**
 * Finance downloads the CSV export with Swagger UI's own "Download file" link, in Chromium: the
 * file has the bytes the API sends, byte-order mark first (EF BB BF), so Excel reads `Zoé Ékotto`.
 * Swagger UI reads text answers with Response.text(), which drops the BOM; src/http/swagger-downloads.ts
 * keeps it for downloads.
 */
import { readFileSync } from 'node:fs';
import request from 'supertest';
import type { Browser } from 'playwright-core';
import { TEST_WALLETS, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { customer, waitForOrder } from '../support/orders-client';
import { launchChromium, requireChromium, tryOut } from '../support/swagger-ui-browser';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

const BOM = [0xef, 0xbb, 0xbf];

describe('the CSV export downloaded through Swagger UI', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let browser: Browser | undefined;

  beforeAll(async () => {
    requireChromium();
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox, {}, [], { listen: true });
    const buyer = await customer(service);
    const created = await buyer.createOrder({ wallet: TEST_WALLETS.SUCCESS, payer: 'Zoé Ékotto' }).expect(201);
    await waitForOrder(service, buyer.token, created.body.id as string, (order) => order.status === 'SUCCEEDED');
    browser = await launchChromium();
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    await service?.close();
    await sandbox?.close();
  });

  it('keeps the byte-order mark: the downloaded file has the bytes curl gets, EF BB BF first', async () => {
    const token = await service.bearer('csv_fin', 'finance');
    const page = await browser!.newPage({ viewport: { width: 1280, height: 1400 }, acceptDownloads: true });
    page.setDefaultTimeout(15_000);
    try {
      await page.goto(`http://127.0.0.1:${service.config.port}/docs/finance`);
      await page.locator('.auth-wrapper button.authorize').click();
      const dialog = page.locator('.dialog-ux .modal-ux');
      await dialog.locator('input[aria-label="auth-bearer-value"]').fill(token);
      await dialog.locator('button.modal-btn.authorize').click();
      await dialog.locator('button.btn-done').click();
      await dialog.waitFor({ state: 'detached' });

      const operation = await tryOut(page, 'get', '/v1/orders/export.csv');
      // Swagger UI fills parameters with their examples: the documented date range is not a filter to apply.
      for (const name of ['from', 'to']) await operation.locator(`tr[data-param-name="${name}"] input`).fill('');
      await operation.locator('button.execute').click();
      const link = operation.locator('.live-responses-table a', { hasText: 'Download file' });
      const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
      const downloaded = readFileSync(await download.path());

      const api = await request(service.server)
        .get('/v1/orders/export.csv')
        .auth(token, { type: 'bearer' })
        .buffer(true)
        .parse((res, done) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => done(null, Buffer.concat(chunks)));
        })
        .expect(200);
      const sent = api.body as Buffer;
      expect([...sent.subarray(0, 3)]).toEqual(BOM);
      expect([...downloaded.subarray(0, 3)]).toEqual(BOM);
      expect(downloaded.toString('utf8')).toContain('Zoé Ékotto');
      expect(
        downloaded.equals(sent)
          ? 'same bytes'
          : `differ: ${downloaded.subarray(0, 16).toString('hex')} vs ${sent.subarray(0, 16).toString('hex')}`,
      ).toBe('same bytes');
    } finally {
      await page.close();
    }
  }, 60_000);
});
