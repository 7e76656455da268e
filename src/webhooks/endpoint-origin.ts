/**
 * An endpoint URL as finance (and the audit trail) sees it: its origin, scheme, host and port
 * (`https://hooks.example.com:8443`), never its path or query, which often carry the receiver's own
 * token (`/echo?apikey=…`). Only admins see the whole URL.
 */
export function endpointOrigin(url: string): string {
  try {
    const { origin } = new URL(url);
    return origin === 'null' ? 'unreadable' : origin;
  } catch {
    return 'unreadable';
  }
}
