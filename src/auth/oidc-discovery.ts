import { DownloadTooLargeError, readBoundedBody } from '../common/bounded-download';
import { isHttpsOrLoopback } from '../common/loopback';

/** What the service uses of an OpenID Connect provider's discovery document. */
export interface OidcMetadata {
  issuer: string;
  jwksUri: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
}

/** The discovery document contradicts the configuration: a mistake to fix, not an outage to wait out. */
export class OidcDiscoveryRefused extends Error {
  constructor(why: string) {
    super(`AUTH_OIDC_ISSUER: ${why}`);
    this.name = 'OidcDiscoveryRefused';
  }
}

/** The discovery document could not be fetched or read (network error, timeout, not 200, not JSON). */
export class OidcIssuerUnreachable extends Error {
  constructor(why: string, options?: { cause?: unknown }) {
    super(`the OpenID Connect discovery document could not be fetched: ${why}`, options);
    this.name = 'OidcIssuerUnreachable';
  }
}

/** A discovery document is a few kilobytes; a larger answer is not one. */
export const DISCOVERY_DOCUMENT_MAX_BYTES = 256 * 1024;

/** OpenID Connect Discovery 1.0, section 4: the issuer, without a trailing slash, + `/.well-known/openid-configuration`. */
export function discoveryUrl(issuer: string): string {
  let end = issuer.length;
  while (end > 0 && issuer[end - 1] === '/') end--;
  return `${issuer.slice(0, end)}/.well-known/openid-configuration`;
}

/**
 * The metadata of a discovery document, checked against the configured issuer: its `issuer` must
 * be exactly the configured one (section 4.3: otherwise the document, and the keys it points at,
 * may be another issuer's), and every endpoint https://, or http:// on a loopback address like the
 * issuer itself (the keys and the sign-in must not travel in clear between machines).
 */
export function checkDiscoveryDocument(issuer: string, document: unknown): OidcMetadata {
  if (typeof document !== 'object' || document === null || Array.isArray(document))
    throw new OidcDiscoveryRefused('the discovery document is not a JSON object');
  const fields = document as Record<string, unknown>;
  if (fields.issuer !== issuer)
    throw new OidcDiscoveryRefused(
      `the discovery document names the issuer ${JSON.stringify(fields.issuer)}, not "${issuer}": set AUTH_OIDC_ISSUER to the issuer exactly as the provider writes it`,
    );
  const endpoint = (name: string): string => {
    const value = fields[name];
    if (typeof value !== 'string') throw new OidcDiscoveryRefused(`the discovery document has no ${name}`);
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new OidcDiscoveryRefused(`the discovery document's ${name} is not an absolute URL`);
    }
    if (!isHttpsOrLoopback(url))
      throw new OidcDiscoveryRefused(`the discovery document's ${name} must be https:// (http:// only on a loopback address): "${value}"`);
    return value;
  };
  return {
    issuer,
    jwksUri: endpoint('jwks_uri'),
    authorizationEndpoint: endpoint('authorization_endpoint'),
    tokenEndpoint: endpoint('token_endpoint'),
  };
}

/** Fetches and checks the issuer's discovery document: OidcIssuerUnreachable or OidcDiscoveryRefused when it cannot be used. */
export async function discoverIssuer(issuer: string, options: { timeoutMs: number }): Promise<OidcMetadata> {
  let text: string;
  try {
    const answer = await fetch(discoveryUrl(issuer), {
      headers: { accept: 'application/json' },
      redirect: 'error',
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    if (answer.status !== 200) {
      await answer.body?.cancel().catch(() => undefined);
      throw new OidcIssuerUnreachable(`${discoveryUrl(issuer)} answered ${answer.status}`);
    }
    // Bounded while it streams: a larger answer is cut there, never held whole.
    text = (await readBoundedBody(answer, DISCOVERY_DOCUMENT_MAX_BYTES, discoveryUrl(issuer))).toString('utf8');
  } catch (error) {
    if (error instanceof OidcIssuerUnreachable) throw error;
    if (error instanceof DownloadTooLargeError) throw new OidcIssuerUnreachable(error.message, { cause: error });
    throw new OidcIssuerUnreachable(`${discoveryUrl(issuer)}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new OidcIssuerUnreachable(`${discoveryUrl(issuer)} did not answer JSON`, { cause: error });
  }
  return checkDiscoveryDocument(issuer, document);
}
