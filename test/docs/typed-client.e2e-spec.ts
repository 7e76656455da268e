/**
 * A frontend's view of the API: the client generated from openapi.json (openapi-typescript types,
 * openapi-fetch) type-checks, is the one the committed document gives, and drives a pay-in end to
 * end against a listening service and the sandbox provider.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import ts from 'typescript';
import { CLIENT_TYPES_PATH, generateClientTypes, OPENAPI_PATH } from '../../scripts/generate-openapi';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { TEST_WALLETS } from '../../src/sandbox/test-wallets';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { createOrder, listOrders, merchantClient, waitForOrderStatus } from './typed-payin';

const CLIENT_MODULE = resolve(__dirname, 'typed-payin.ts');

/** tsc's diagnostics for `files` under the project's compiler options; `virtual` adds in-memory files. */
function typeErrors(files: string[], virtual: Record<string, string> = {}): string[] {
  const configPath = resolve(__dirname, '../../tsconfig.json');
  const config = ts.parseJsonConfigFileContent(ts.readConfigFile(configPath, ts.sys.readFile).config, ts.sys, dirname(configPath));
  const options = { ...config.options, noEmit: true };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.readFile = (name) => virtual[name] ?? readFile(name);
  host.fileExists = (name) => name in virtual || fileExists(name);
  host.getSourceFile = (name, language, ...rest) =>
    name in virtual ? ts.createSourceFile(name, virtual[name], language) : getSourceFile(name, language, ...rest);
  const program = ts.createProgram([...files, ...Object.keys(virtual)], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    return `${d.file?.fileName ?? ''}:${line}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

describe('the typed client generated from openapi.json', () => {
  it('is the one openapi-typescript generates from the committed openapi.json (npm run docs:openapi writes both)', async () => {
    const expected = await generateClientTypes(JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')));
    expect(readFileSync(CLIENT_TYPES_PATH, 'utf8') === expected ? 'up to date' : 'stale: run npm run docs:openapi').toBe('up to date');
  });

  it('type-checks with tsc, and its types refuse a request the document does not allow', () => {
    expect(typeErrors([CLIENT_MODULE])).toEqual([]);

    // The same calls with what the document forbids: no Idempotency-Key, a body missing required
    // fields, an unknown status filter, an operation that does not exist. Each must be a type error.
    const probe = resolve(__dirname, '__typed-client-probe__.ts');
    const errors = typeErrors([], {
      [probe]: [
        "import { merchantClient } from './typed-payin';",
        "const client = merchantClient('http://127.0.0.1:1', 'token');",
        "void client.POST('/v1/orders', { body: { amount: '1500', currency: 'XAF', wallet: '237600000001', service: 1, description: 'd', payer: 'p', payerEmail: 'e@example.com' } });",
        "void client.POST('/v1/orders', { params: { header: { 'Idempotency-Key': 'k' } }, body: { amount: '1500', currency: 'XAF' } });",
        "void client.GET('/v1/orders', { params: { query: { status: 'PAID' } } });",
        "void client.GET('/v1/no-such-route');",
      ].join('\n'),
    });
    const probeErrors = errors.filter((e) => e.startsWith(`${probe}:`));
    expect(errors).toEqual(probeErrors);
    // One error on each of the four forbidden calls (lines 3 to 6), none on the client itself.
    expect([...new Set(probeErrors.map((e) => Number(e.slice(probe.length + 1).split(':')[0])))]).toEqual([3, 4, 5, 6]);
  }, 60_000);

  describe('drives a pay-in against a listening service', () => {
    let sandbox: RunningSandbox;
    let service: TestService;

    beforeAll(async () => {
      sandbox = await startTestSandbox({ callbackDelayMs: 150 });
      service = await startTestService(sandbox, {}, [], { listen: true });
    });
    afterAll(async () => {
      await service?.close();
      await sandbox?.close();
    });

    it('createOrder with an Idempotency-Key, getOrder until SUCCEEDED, then listOrders shows it', async () => {
      const baseUrl = `http://127.0.0.1:${service.config.port}`;
      const buyer = merchantClient(baseUrl, await service.bearer(`typed_${randomUUID().slice(0, 8)}`, 'customer'));
      const key = randomUUID();
      const order = {
        amount: '2500',
        currency: 'XAF',
        wallet: TEST_WALLETS.SUCCESS,
        service: 1,
        description: 'Typed client order',
        payer: 'Awa Ndiaye',
        payerEmail: 'awa@example.com',
      };

      const created = await createOrder(buyer, order, key);
      expect(created).toMatchObject({ status: 'PROCESSING', amount: '2500', currency: 'XAF', wallet: TEST_WALLETS.SUCCESS });
      // The same key and body: the first answer again, not a second pay-in.
      await expect(createOrder(buyer, order, key)).resolves.toMatchObject({ id: created.id });

      const settled = await waitForOrderStatus(buyer, created.id, 'SUCCEEDED');
      expect(settled.history.map((change) => change.status)).toEqual(['PENDING', 'PROCESSING', 'SUCCEEDED']);
      expect(settled.callbacks).toEqual([expect.objectContaining({ outcome: 'success', result: 'APPLIED' })]);

      const page = await listOrders(buyer, { status: 'SUCCEEDED' });
      expect(page.items.map((item) => item.id)).toEqual([created.id]);
      expect(page.items[0]).toMatchObject({ status: 'SUCCEEDED', amount: '2500' });

      // A problem comes back typed too: another customer does not see the order.
      const stranger = merchantClient(baseUrl, await service.bearer('typed_stranger', 'customer'));
      await expect(listOrders(stranger)).resolves.toMatchObject({ items: [] });
      const { error, response } = await stranger.GET('/v1/orders/{id}', { params: { path: { id: created.id } } });
      expect(response.status).toBe(404);
      expect(error).toMatchObject({ status: 404, code: 'not_found' });
    }, 40_000);
  });
});
