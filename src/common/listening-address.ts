/**
 * The start-up line's addresses. With HOST=0.0.0.0 the service answers on every interface, other
 * computers included: the line names the address actually bound, and the URL to open on this
 * machine, rather than only http://localhost:3000, which hid that the port is open to the network.
 */
const WILDCARDS = ['0.0.0.0', '::'];
const LOOPBACKS = ['127.0.0.1', '::1'];

export interface ListeningAddress {
  /** The address and port the socket is bound to, e.g. 0.0.0.0:3000 or [::1]:3000. */
  bound: string;
  /** What to open in a browser on this machine. */
  url: string;
  /** The start-up line's message. */
  message: string;
}

export function listeningAddress(boundHost: string, port: number): ListeningAddress {
  const bracketed = (host: string) => (host.includes(':') ? `[${host}]` : host);
  const bound = `${bracketed(boundHost)}:${port}`;
  const local = WILDCARDS.includes(boundHost) || LOOPBACKS.includes(boundHost);
  const url = `http://${local ? 'localhost' : bracketed(boundHost)}:${port}`;
  const message = WILDCARDS.includes(boundHost)
    ? `payments BFF listening on ${bound} (every interface: other computers reach it at this machine's address); on this machine ${url}`
    : `payments BFF listening on ${url}`;
  return { bound, url, message };
}
