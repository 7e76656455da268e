import ipaddr from 'ipaddr.js';

/**
 * The IPv4 addresses an IPv6 address carries, by the standard forms that route to, or translate
 * into, that IPv4 address: a webhook URL policy that judged such an address as IPv6 would let
 * `[::7f00:1]` (127.0.0.1) or `[64:ff9b::a9fe:a9fe]` (169.254.169.254 through NAT64) through.
 *
 * `prefixed`: forms whose whole prefix only exists to embed the IPv4 address, so the IPv4 address
 * alone decides; `interfaceId`: ISATAP, which embeds it in the interface id of any prefix, so the
 * prefix must pass too (unless it is all zero, `::5efe:a.b.c.d`).
 */
export interface EmbeddedIPv4 {
  prefixed?: ipaddr.IPv4;
  interfaceId?: ipaddr.IPv4;
}

const v4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);

/** The IPv4 address of the well-known prefix `parts` starts with, if any (RFC 4291, 6052, 6145, 8215, 3056, 4380). */
function prefixedIPv4(p: readonly number[]): ipaddr.IPv4 | undefined {
  const zero = (from: number, to: number) => p.slice(from, to).every((part) => part === 0);
  // ::/96 (IPv4-compatible, deprecated), ::ffff:0:0/96 (IPv4-mapped), ::ffff:0:0:0/96 (IPv4-translated, SIIT).
  if (zero(0, 5) && (p[5] === 0 || p[5] === 0xffff)) return v4(p[6], p[7]);
  if (zero(0, 4) && p[4] === 0xffff && p[5] === 0) return v4(p[6], p[7]);
  // 64:ff9b::/96, the NAT64 well-known prefix.
  if (p[0] === 0x64 && p[1] === 0xff9b && zero(2, 6)) return v4(p[6], p[7]);
  // 64:ff9b:1::/48, the local-use NAT64 prefix, with the layout RFC 6052 gives a /48: bits 48-63 and 72-87 (64-71 are zero).
  if (p[0] === 0x64 && p[1] === 0xff9b && p[2] === 1) return v4(p[3], ((p[4] & 0xff) << 8) | (p[5] >> 8));
  // 2002::/16, 6to4: the IPv4 address in bits 16-47.
  if (p[0] === 0x2002) return v4(p[1], p[2]);
  // 2001::/32, Teredo: the client's IPv4 address in the last 32 bits, every bit inverted.
  if (p[0] === 0x2001 && p[1] === 0) return v4(p[6] ^ 0xffff, p[7] ^ 0xffff);
  return undefined;
}

/** The IPv4 addresses `address` embeds (an IPv6 address); none for a plain IPv6 address. */
export function embeddedIPv4(address: ipaddr.IPv6): EmbeddedIPv4 {
  const p = address.parts;
  const found: EmbeddedIPv4 = {};
  const prefixed = prefixedIPv4(p);
  if (prefixed) found.prefixed = prefixed;
  // ISATAP (RFC 5214): interface id 0000:5efe or 0200:5efe (the universal bit set), then the IPv4 address.
  if ((p[4] === 0 || p[4] === 0x0200) && p[5] === 0x5efe) found.interfaceId = v4(p[6], p[7]);
  return found;
}

/** Whether the ISATAP address's own prefix is all zero (`::5efe:a.b.c.d`): then only its IPv4 address can be reached. */
export function hasZeroPrefix(address: ipaddr.IPv6): boolean {
  return address.parts.slice(0, 4).every((part) => part === 0);
}
