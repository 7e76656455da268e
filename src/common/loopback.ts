import ipaddr from 'ipaddr.js';

/**
 * True when a URL's host name is this machine by definition: `localhost`, an address of
 * 127.0.0.0/8, `[::1]` (or an IPv4-mapped loopback address). No DNS is asked: a name that happens
 * to resolve to 127.0.0.1 is not trusted as loopback.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (host.toLowerCase() === 'localhost') return true;
  if (!ipaddr.isValid(host)) return false;
  let address = ipaddr.parse(host);
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) address = (address as ipaddr.IPv6).toIPv4Address();
  return address.range() === 'loopback';
}

/** `https://`, or `http://` on a loopback host (isLoopbackHost): where a credential may travel unencrypted only inside this machine. */
export function isHttpsOrLoopback(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
}
