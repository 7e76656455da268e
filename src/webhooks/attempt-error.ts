/**
 * What a failed attempt stores in `webhook_attempts.error`, finance reads and logs show: the
 * error's code and what it means, never an address the endpoint's host resolved to (node writes it
 * into its messages, `connect ECONNREFUSED 10.0.4.7:443`, and an internal address is for no reader
 * of the events API; the URL's host, which the admin registered, is shown by its origin elsewhere).
 */

/** What stands in for an address in a message. */
export const ADDRESS_PLACEHOLDER = '<address>';

/** Connection errors by code, in words that name nothing of the network. */
const MEANINGS: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  ECONNABORTED: 'the connection was aborted',
  EPIPE: 'the connection was closed while sending',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  EHOSTDOWN: 'the host is down',
  EADDRNOTAVAIL: 'no address to connect from',
  ENOTFOUND: "the URL's host does not resolve",
  EAI_AGAIN: "the URL's host could not be resolved now (DNS)",
};

// An IPv6 address (with an IPv4 tail or a port, bracketed or not), then an IPv4 address with its
// port: each as a whole token, not inside a word or a host name.
const IPV6 = /(?<![\w:.])\[?(?:[0-9a-f]{0,4}:){2,9}(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9a-f]{0,4})\]?(?::\d{1,5})?(?![\w:.])/gi;
const IPV4 = /(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?(?![\w.])/g;

/** `text` with every IP address (and the port after it) replaced by `<address>`. */
export function withoutAddresses(text: string): string {
  return text.replace(IPV6, ADDRESS_PLACEHOLDER).replace(IPV4, ADDRESS_PLACEHOLDER);
}

// Duck-typed, not `instanceof Error`: node's errors may come from another realm (jest's sandbox).
/** `CODE: meaning` (or the message), without addresses; our own timeout as `timeout: …`, a refused address as `URL refused: …`. */
export function describeAttemptError(error: unknown): string {
  if (typeof error !== 'object' || error === null || typeof (error as Error).message !== 'string') return withoutAddresses(String(error));
  const code = (error as NodeJS.ErrnoException).code;
  const message = withoutAddresses((error as Error).message);
  if (code === 'ETIMEDOUT') return `timeout: ${message}`;
  if (code === 'ENOTALLOWED') return `URL refused: ${message}`;
  if (code && MEANINGS[code]) return `${code}: ${MEANINGS[code]}`;
  return code ? `${code}: ${message}` : message;
}
