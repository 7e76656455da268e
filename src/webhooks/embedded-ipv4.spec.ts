import type { lookup } from 'node:dns';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { checkWebhookHost, checkWebhookUrl, isForbiddenAddress, WebhookUrlRefused } from './webhook-url-policy';

const STRICT = { allowInsecureUrls: false, allowPrivateUrls: false };

const hex = (n: number) => n.toString(16);
/** The two 16-bit groups of an IPv4 address. */
const groups = (o: readonly number[]) => [(o[0] << 8) | o[1], (o[2] << 8) | o[3]];

/** Every form that embeds an IPv4 address in an IPv6 address, written out by hand (not by the code under test). */
const FORMS: Record<string, (o: readonly number[]) => string> = {
  'IPv4-compatible ::/96 (hex)': (o) => `::${groups(o).map(hex).join(':')}`,
  // ipaddr.js reads this spelling as IPv4-mapped; node's URL parser writes it in hex (`[::7f00:1]`), the form above.
  'IPv4-compatible ::/96 (dotted)': (o) => `::${o.join('.')}`,
  'IPv4-mapped ::ffff:0:0/96': (o) => `::ffff:${o.join('.')}`,
  'IPv4-translated ::ffff:0:0:0/96': (o) => `::ffff:0:${o.join('.')}`,
  'NAT64 64:ff9b::/96': (o) => `64:ff9b::${o.join('.')}`,
  // RFC 6052, a /48 prefix: octets 1-2 in bits 48-63, bits 64-71 zero, octets 3-4 in bits 72-87.
  'NAT64 local-use 64:ff9b:1::/48': (o) => `64:ff9b:1:${hex((o[0] << 8) | o[1])}:${hex(o[2])}:${hex(o[3] << 8)}::`,
  '6to4 2002::/16': (o) => `2002:${groups(o).map(hex).join(':')}::1`,
  // The Teredo server 65.54.227.120 (4136:e378), flags 8000, the port obfuscated, the client's address every bit inverted.
  'Teredo 2001::/32': (o) =>
    `2001:0:4136:e378:8000:63bf:${groups(o.map((b) => b ^ 0xff))
      .map(hex)
      .join(':')}`,
  'ISATAP ::5efe:a.b.c.d': (o) => `::5efe:${o.join('.')}`,
  'ISATAP under a public prefix (universal bit)': (o) => `2a00:1450:4001:80b:200:5efe:${o.join('.')}`,
};

const octets = fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 });
/** Biased towards the ranges that matter: loopback, private, link-local, metadata, CGNAT, unspecified. */
const interesting = fc.oneof(
  octets,
  fc.constantFrom(
    [127, 0, 0, 1],
    [169, 254, 169, 254],
    [10, 0, 0, 1],
    [192, 168, 1, 1],
    [172, 16, 0, 1],
    [100, 100, 100, 200],
    [0, 0, 0, 0],
  ),
  octets.map(([, b, c, d]) => [127, b, c, d]),
  octets.map(([, , c, d]) => [169, 254, c, d]),
  octets.map(([, b, c, d]) => [10, b, c, d]),
);

describe('an IPv6 address that embeds an IPv4 address is judged by that IPv4 address', () => {
  it.each(Object.entries(FORMS))('%s: for any IPv4 address, the same verdict as the IPv4 address', (_, form) => {
    fc.assert(
      fc.property(interesting, (o) => {
        const ipv6 = form(o);
        expect(ipaddr.IPv6.isValid(ipv6)).toBe(true);
        expect([ipv6, isForbiddenAddress(ipv6)]).toEqual([ipv6, isForbiddenAddress(o.join('.'))]);
      }),
      { numRuns: 500 },
    );
  });

  it.each([
    ['https://[::7f00:1]/', '127.0.0.1'],
    ['https://[::127.0.0.1]/', '127.0.0.1'],
    ['https://[::a9fe:a9fe]/latest/meta-data', '169.254.169.254'],
    ['https://[64:ff9b::a9fe:a9fe]/', '169.254.169.254'],
    ['https://[2002:a00:1::1]/', '10.0.0.1'],
    ['https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', '127.0.0.1'],
    ['https://[::5efe:c0a8:101]/', '192.168.1.1'],
    ['https://[fe80::5efe:808:808]/', 'a link-local prefix'],
  ])('the URL %s (%s) is refused at registration', (url) => {
    expect(() => checkWebhookUrl(url, STRICT)).toThrow(WebhookUrlRefused);
  });

  it('a public IPv4 address embedded is accepted as that address would be', () => {
    for (const url of ['https://[64:ff9b::808:808]/', 'https://[2002:808:808::1]/', 'https://[::ffff:808:808]/'])
      expect(checkWebhookUrl(url, STRICT).protocol).toBe('https:');
  });

  it('a name whose AAAA answer embeds a private IPv4 address is refused (registration and each attempt)', async () => {
    const answering = (address: string) =>
      ((_host: string, _options: unknown, callback: (e: null, a: { address: string; family: number }[]) => void) =>
        callback(null, [{ address, family: 6 }])) as unknown as typeof lookup;
    const url = new URL('https://hooks.example.com/');
    for (const address of ['::7f00:1', '64:ff9b::a9fe:a9fe', '2002:a00:1::1'])
      await expect(checkWebhookHost(url, STRICT, answering(address))).rejects.toThrow(WebhookUrlRefused);
    await expect(checkWebhookHost(url, STRICT, answering('64:ff9b::808:808'))).resolves.toBeUndefined();
  });
});
