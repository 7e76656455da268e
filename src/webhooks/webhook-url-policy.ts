import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { embeddedIPv4, hasZeroPrefix } from './embedded-ipv4';

/** Which endpoint URLs are accepted (WEBHOOK_ALLOW_INSECURE_URLS, WEBHOOK_ALLOW_PRIVATE_URLS). */
export interface WebhookUrlPolicy {
  allowInsecureUrls: boolean;
  allowPrivateUrls: boolean;
}

export const WEBHOOK_URL_MAX_LENGTH = 2048;

/** Why a URL may not receive webhooks; the message is safe to show (it names the rule, not what DNS answered). */
export class WebhookUrlRefused extends Error {}

/**
 * The URL's own rules, before any DNS: absolute `https://` (or `http://` when allowed), a host, no
 * credentials in it, at most 2,048 characters; an IP literal is judged as an address.
 */
export function checkWebhookUrl(url: string, policy: WebhookUrlPolicy): URL {
  if (url.length > WEBHOOK_URL_MAX_LENGTH) throw new WebhookUrlRefused(`the URL is longer than ${WEBHOOK_URL_MAX_LENGTH} characters`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new WebhookUrlRefused('not an absolute URL');
  }
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && policy.allowInsecureUrls))
    throw new WebhookUrlRefused(policy.allowInsecureUrls ? 'only http:// and https:// URLs' : 'only https:// URLs');
  if (parsed.username || parsed.password) throw new WebhookUrlRefused('credentials in the URL are not accepted');
  if (!parsed.hostname) throw new WebhookUrlRefused('the URL names no host');
  const literal = hostAddress(parsed.hostname);
  if (literal && !policy.allowPrivateUrls && isForbiddenAddress(literal))
    throw new WebhookUrlRefused('the URL points at a loopback, private, link-local or metadata address');
  return parsed;
}

/**
 * True for every address that is not plain public unicast: loopback, private (RFC 1918, unique
 * local), link-local (cloud metadata at 169.254.169.254 included), carrier-grade NAT (another
 * cloud's metadata at 100.100.100.200), unspecified, multicast, broadcast, reserved. An IPv6
 * address that embeds an IPv4 address (IPv4-compatible `::/96`, IPv4-mapped, IPv4-translated,
 * NAT64 `64:ff9b::/96` and `64:ff9b:1::/48`, 6to4 `2002::/16`, Teredo `2001::/32`, ISATAP) is
 * judged by the IPv4 address it embeds (embedded-ipv4.ts); ISATAP's prefix must pass as well.
 */
export function isForbiddenAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return true;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') return isForbiddenIPv4(parsed as ipaddr.IPv4);
  const ipv6 = parsed as ipaddr.IPv6;
  const { prefixed, interfaceId } = embeddedIPv4(ipv6);
  if (interfaceId && isForbiddenIPv4(interfaceId)) return true;
  if (prefixed) return isForbiddenIPv4(prefixed);
  if (interfaceId && hasZeroPrefix(ipv6)) return false;
  return ipv6.range() !== 'unicast';
}

function isForbiddenIPv4(address: ipaddr.IPv4): boolean {
  return address.range() !== 'unicast';
}

/** A lookup function for node's `http(s).Agent`, `lookup` option. */
export type AgentLookup = (
  hostname: string,
  options: { all?: boolean; family?: number },
  callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

/**
 * The DNS lookup a delivery connects with: every address the name resolves to is checked, and the
 * connection goes to an address that was checked, so a name that answers a public address to a
 * check and a private one to the connection (DNS rebinding) reaches nothing. Refused: an
 * ENOTALLOWED error, reported by the attempt.
 */
export function guardedLookup(policy: WebhookUrlPolicy, resolve: typeof dnsLookup = dnsLookup): AgentLookup {
  return (hostname, options, callback) => {
    resolve(hostname, { all: true, family: options.family ?? 0 }, (error, addresses) => {
      if (error) return callback(error, []);
      const checked = addresses.filter((a) => policy.allowPrivateUrls || !isForbiddenAddress(a.address));
      if (checked.length === 0 || (!policy.allowPrivateUrls && checked.length !== addresses.length)) {
        const refused: NodeJS.ErrnoException = new Error(`${hostname} resolves to a loopback, private, link-local or metadata address`);
        refused.code = 'ENOTALLOWED';
        return callback(refused, []);
      }
      if (options.all) return callback(null, checked);
      return callback(null, checked[0].address, checked[0].family);
    });
  };
}

/** The address of a host written as an IP literal (`[::1]` included), or undefined for a name. */
function hostAddress(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) ? bare : undefined;
}

/** Resolves the URL's host and refuses it when any address is forbidden (at registration, before an attempt). */
export async function checkWebhookHost(url: URL, policy: WebhookUrlPolicy, resolve: typeof dnsLookup = dnsLookup): Promise<void> {
  if (policy.allowPrivateUrls || hostAddress(url.hostname)) return;
  const lookup = guardedLookup(policy, resolve);
  await new Promise<void>((done, fail) =>
    lookup(url.hostname, { all: true }, (error) => {
      if (!error) return done();
      fail(
        error.code === 'ENOTALLOWED'
          ? new WebhookUrlRefused('the URL points at a loopback, private, link-local or metadata address')
          : new WebhookUrlRefused(`the URL's host does not resolve (${error.code ?? 'error'})`),
      );
    }),
  );
}
