/**
 * A local webhook endpoint for development, like `stripe listen`:
 *   npm run webhooks:listen                       # service on http://127.0.0.1:3000
 *   npm run webhooks:listen -- --url http://127.0.0.1:3000 --events order.succeeded,order.failed --json
 * Starts a receiver on 127.0.0.1, registers it on the running service as a webhook endpoint (an
 * admin token minted with the service's development secret, as `npm run token -- --roles admin`,
 * or --token), prints every event it receives once its signature is verified, and deletes the
 * endpoint on Ctrl-C. The service must accept http:// and loopback URLs (its development default:
 * WEBHOOK_ALLOW_INSECURE_URLS, WEBHOOK_ALLOW_PRIVATE_URLS).
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { mintToken } from '../src/auth/token-minter';
import { loadAppConfig, loadDotEnvIfPresent } from '../src/config/app-config';
import { webhookSignatureMatches } from '../src/webhooks/webhook-signature';

const USAGE = `usage: npm run webhooks:listen -- [--url http://127.0.0.1:3000] [--port 0] [--events type,type] [--token <admin token>] [--json] [--fail]
  --url     the running service, default http://127.0.0.1:3000
  --port    the receiver's port on 127.0.0.1, default: any free one
  --events  the event types to subscribe to, default: all
  --token   an admin bearer token, default: one minted with the service's secret (AUTH_JWT_SECRET or the development one)
  --json    print each event's whole body
  --fail    answer 500 to everything (to watch the retries)`;

/** Standard Webhooks' tolerance: a timestamp more than 5 minutes away is refused. */
const TOLERANCE_SECONDS = 5 * 60;

async function adminToken(given: string | undefined): Promise<string> {
  if (given) return given;
  loadDotEnvIfPresent();
  const { auth } = loadAppConfig(process.env);
  if (!auth.jwtSecret) throw new Error('only AUTH_JWKS_URL is configured: pass --token with an admin token of the identity provider');
  return mintToken({
    sub: 'webhooks-listen',
    roles: ['admin'],
    ttl: '8h',
    secret: auth.jwtSecret,
    issuer: auth.issuer,
    audience: auth.audience,
    maxTtlSeconds: auth.maxTokenTtlSeconds,
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: 'string', default: 'http://127.0.0.1:3000' },
      port: { type: 'string', default: '0' },
      events: { type: 'string' },
      token: { type: 'string' },
      json: { type: 'boolean' },
      fail: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return void console.error(USAGE);
  const service = new URL(values.url).origin;
  const token = await adminToken(values.token);
  let secret = '';

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const id = String(req.headers['webhook-id'] ?? '');
      const timestamp = Number(req.headers['webhook-timestamp']);
      const signature = String(req.headers['webhook-signature'] ?? '');
      const fresh = Math.abs(Date.now() / 1000 - timestamp) <= TOLERANCE_SECONDS;
      const verified = secret !== '' && fresh && webhookSignatureMatches(secret, signature, id, timestamp, body);
      const status = !verified ? 400 : values.fail ? 500 : 200;
      res.writeHead(status).end();
      const time = new Date().toISOString().slice(11, 23);
      if (!verified) return void console.log(`${time}  ${status}  signature NOT verified (webhook-id ${id || 'missing'})`);
      const event = JSON.parse(body) as { id: string; type: string; data?: { id?: string; status?: string } };
      console.log(`${time}  ${status}  ${event.type.padEnd(26)} ${event.id}  ${event.data?.id ?? ''}`);
      if (values.json) console.log(JSON.stringify(event, null, 2));
    });
  });
  await new Promise<void>((done) => server.listen(Number(values.port), '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;

  const registered = await fetch(`${service}/v1/webhook-endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify({
      url,
      description: 'npm run webhooks:listen',
      ...(values.events ? { events: values.events.split(',').map((t) => t.trim()) } : {}),
    }),
  }).catch((error: unknown) => {
    throw new Error(`the service at ${service} does not answer (${String((error as Error).cause ?? error)}): is it running (npm start)?`);
  });
  const endpoint = (await registered.json()) as { id?: string; secret?: string; detail?: string; title?: string };
  if (registered.status !== 201 || !endpoint.id || !endpoint.secret)
    throw new Error(`registering ${url} answered ${registered.status}: ${endpoint.detail ?? endpoint.title ?? JSON.stringify(endpoint)}`);
  secret = endpoint.secret;
  console.log(`Ready: events of ${service} are delivered to ${url} (endpoint ${endpoint.id}).`);
  console.log(`Signing secret: ${secret}`);
  console.log('Ctrl-C deletes the endpoint and stops.');

  const stop = async () => {
    const deleted = await fetch(`${service}/v1/webhook-endpoints/${endpoint.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}` },
    }).catch(() => undefined);
    console.log(deleted?.ok ? `endpoint ${endpoint.id} deleted` : `endpoint ${endpoint.id} NOT deleted: delete it yourself`);
    server.closeAllConnections();
    server.close();
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

main().catch((error: unknown) => {
  console.error(`webhooks:listen: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
