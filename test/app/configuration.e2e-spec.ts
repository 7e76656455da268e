import { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../../src/config/app-config';
import { CallbackUrlsService } from '../../src/orders/callback-urls.service';
import { OrdersService } from '../../src/orders/orders.service';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/**
 * The application's ConfigService (@nestjs/config) serves the AppConfig its caller built and
 * passed to createApp, a test's overrides included, and nothing read from the environment besides.
 */
describe('configuration: the ConfigService serves the AppConfig given to createApp', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  const saved = { PROVIDER_TIMEOUT_MS: process.env.PROVIDER_TIMEOUT_MS, CURRENCIES: process.env.CURRENCIES };

  beforeAll(async () => {
    // What the environment says differs from the overrides: the app must serve the overrides.
    process.env.PROVIDER_TIMEOUT_MS = '9999';
    process.env.CURRENCIES = 'USD:2';
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox, {
      PROVIDER_TIMEOUT_MS: '4321',
      CURRENCIES: 'XAF:0,EUR:2:5000',
      PUBLIC_BASE_URL: 'https://pay.config-test.example',
    });
  });

  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('serves the sections of that object, typed, with the overrides', () => {
    const config: ConfigService<AppConfig, true> = service.app.get(ConfigService);
    expect(config.get('provider', { infer: true })).toBe(service.config.provider);
    expect(config.get('provider.timeoutMs', { infer: true })).toBe(4321);
    expect(config.get('currencies', { infer: true })).toEqual({
      XAF: { code: 'XAF', decimals: 0, maxAmount: '100000000' },
      EUR: { code: 'EUR', decimals: 2, maxAmount: '5000' },
    });
    expect(config.get('publicBaseUrl', { infer: true })).toBe('https://pay.config-test.example');
    expect(config.get('dataEncryptionKey', { infer: true })).toBe(service.config.dataEncryptionKey);
  });

  it('never falls back to process.env', () => {
    const config = service.app.get(ConfigService);
    expect(process.env.PROVIDER_TIMEOUT_MS).toBe('9999');
    expect(config.get('PROVIDER_TIMEOUT_MS')).toBeUndefined();
    expect(config.get('CURRENCIES')).toBeUndefined();
  });

  it('the services read it: callback URLs on the overridden public URL, amounts by the overridden currencies', async () => {
    expect(service.get(CallbackUrlsService).urlsFor('0f0e0d0c-0b0a-4908-8706-050403020100').successUrl).toMatch(
      /^https:\/\/pay\.config-test\.example\/v1\/callbacks\/payin\//,
    );
    const orders = service.get(OrdersService);
    await expect(
      orders.create({ id: 'config-test', roles: ['customer'] }, { amount: '10', currency: 'USD', phone: '237650000000' } as never),
    ).rejects.toMatchObject({ code: 'validation_failed' });
  });
});
