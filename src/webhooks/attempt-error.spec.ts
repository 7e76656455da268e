import fc from 'fast-check';
import { describeAttemptError, withoutAddresses } from './attempt-error';

/** An error as node's net module makes one: the code, and a message naming the address it connected to. */
const nodeError = (code: string, address: string, port: number) =>
  Object.assign(new Error(`connect ${code} ${address}:${port}`), { code, address, port });

const ipv4 = fc.ipV4();
const ipv6 = fc.ipV6();
const port = fc.integer({ min: 1, max: 65535 });
const CODES = ['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'EPROTO', 'ERR_SOMETHING_NEW'];

describe('what a failed attempt stores as its error', () => {
  it('never names the address connected to, whatever the code and the address (IPv4 or IPv6)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...CODES), fc.oneof(ipv4, ipv6), port, (code, address, p) => {
        const text = describeAttemptError(nodeError(code, address, p));
        expect(text.startsWith(code === 'ETIMEDOUT' ? 'timeout: ' : `${code}: `)).toBe(true);
        expect([address, text.includes(address)]).toEqual([address, false]);
        expect(text).not.toMatch(new RegExp(`:${p}(?!\\d)`));
      }),
      { numRuns: 1000 },
    );
  });

  it('says what a connection error means in words that name nothing of the network', () => {
    expect(describeAttemptError(nodeError('ECONNREFUSED', '127.0.0.1', 4399))).toBe('ECONNREFUSED: the connection was refused');
    expect(describeAttemptError(nodeError('EHOSTUNREACH', 'fd00:ec2::254', 443))).toBe('EHOSTUNREACH: the host is unreachable');
    expect(describeAttemptError(Object.assign(new Error('getaddrinfo ENOTFOUND hooks.example.com'), { code: 'ENOTFOUND' }))).toBe(
      "ENOTFOUND: the URL's host does not resolve",
    );
    expect(describeAttemptError(Object.assign(new Error('no complete answer within 2000 ms'), { code: 'ETIMEDOUT' }))).toBe(
      'timeout: no complete answer within 2000 ms',
    );
  });

  it('leaves what names no address as it is (statuses, our own messages, host names, times)', () => {
    for (const text of [
      'HTTP 500',
      'redirect (302) not followed',
      'timeout: no complete answer within 15000 ms',
      'URL refused: hooks.example.com resolves to a loopback, private, link-local or metadata address',
      "ERR_TLS_CERT_ALTNAME_INVALID: Hostname/IP does not match certificate's altnames: Host: a.example.com. is not in the cert's altnames: DNS:b.example.com",
      'at 2026-11-28T12:00:00.000Z',
      'version 1.2.3',
    ])
      expect(withoutAddresses(text)).toBe(text);
  });

  it('takes out addresses written the ways node and people write them', () => {
    expect(withoutAddresses('connect ECONNREFUSED ::1:4399')).toBe('connect ECONNREFUSED <address>');
    expect(withoutAddresses('to [2001:db8::7]:443 and ::ffff:10.0.0.1 and 192.168.1.1')).toBe('to <address> and <address> and <address>');
  });
});
