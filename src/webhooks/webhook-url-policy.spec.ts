import type { lookup } from 'node:dns';
import { checkWebhookHost, checkWebhookUrl, guardedLookup, isForbiddenAddress, WebhookUrlRefused } from './webhook-url-policy';

const STRICT = { allowInsecureUrls: false, allowPrivateUrls: false };
const OPEN = { allowInsecureUrls: true, allowPrivateUrls: true };

/** A resolver answering fixed addresses, as node's dns.lookup with `all: true` does. */
const resolvingTo = (...addresses: string[]) =>
  ((_host: string, _options: unknown, callback: (e: null, a: { address: string; family: number }[]) => void) =>
    callback(
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    )) as unknown as typeof lookup;

describe('webhook URL policy', () => {
  it.each([
    '127.0.0.1',
    '127.9.9.9',
    '::1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.100.100.200',
    'fd00:ec2::254',
    'fe80::1',
    '0.0.0.0',
    '::',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '224.0.0.1',
    '255.255.255.255',
  ])('%s is refused', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each(['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:93.184.216.34'])('%s is public', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });

  it('accepts https:// only in production, refuses credentials, non-URLs and private literals', () => {
    expect(checkWebhookUrl('https://shop.example.com/hooks', STRICT).hostname).toBe('shop.example.com');
    for (const url of [
      'http://shop.example.com/hooks',
      'ftp://shop.example.com',
      'https://user:pw@shop.example.com',
      'shop.example.com/hooks',
      'https://127.0.0.1/x',
      'https://[::1]/x',
      'https://169.254.169.254/latest/meta-data',
      `https://example.com/${'a'.repeat(2100)}`,
    ])
      expect(() => checkWebhookUrl(url, STRICT)).toThrow(WebhookUrlRefused);
    expect(checkWebhookUrl('http://127.0.0.1:9000/hooks', OPEN).port).toBe('9000');
  });

  it('refuses a name that resolves to a private address, even among public ones', async () => {
    const url = new URL('https://hooks.example.com');
    await expect(checkWebhookHost(url, STRICT, resolvingTo('93.184.216.34'))).resolves.toBeUndefined();
    await expect(checkWebhookHost(url, STRICT, resolvingTo('93.184.216.34', '10.0.0.5'))).rejects.toThrow(WebhookUrlRefused);
    await expect(checkWebhookHost(url, OPEN, resolvingTo('10.0.0.5'))).resolves.toBeUndefined();
  });

  it('connects only to an address it checked (DNS rebinding reaches nothing)', async () => {
    const connectTo = (resolve: typeof lookup) =>
      new Promise<string>((done, fail) =>
        guardedLookup(STRICT, resolve)('hooks.example.com', {}, (error, address) => (error ? fail(error) : done(address as string))),
      );
    await expect(connectTo(resolvingTo('93.184.216.34'))).resolves.toBe('93.184.216.34');
    await expect(connectTo(resolvingTo('127.0.0.1'))).rejects.toMatchObject({ code: 'ENOTALLOWED' });
  });
});
