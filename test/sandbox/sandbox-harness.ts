import axios, { type AxiosInstance } from 'axios';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SANDBOX_DEFAULTS, startSandbox, type RunningSandbox, type SandboxOptions } from '../../src/sandbox/sandbox.server';
import { TEST_WALLETS } from '../../src/sandbox/test-wallets';

/** What the sandbox spec files share: one sandbox per file, a callback receiver, a token, request helpers. */

export const API_KEY = SANDBOX_DEFAULTS.apiKey;
export const SP_TOKEN = SANDBOX_DEFAULTS.spAuthToken;
export const CREDENTIALS = { public_apikey: SANDBOX_DEFAULTS.apiKey, private_secretkey: SANDBOX_DEFAULTS.secretKey };
export const CALLBACK_DELAY = 30;

/** Sends a string body as is (axios would JSON-encode an invalid JSON string). */
export const RAW_JSON = { headers: { 'content-type': 'application/json' }, transformRequest: [(d: unknown) => d] };

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function http(sandbox: RunningSandbox): AxiosInstance {
  return axios.create({ baseURL: sandbox.url, validateStatus: () => true, timeout: 5000 });
}

export async function tokenFor(api: AxiosInstance): Promise<string> {
  const res = await api.post('/api/action/auth', CREDENTIALS);
  expect(res.status).toBe(200);
  return res.data.token as string;
}

/** Local HTTP server receiving the sandbox's callbacks. */
export interface CallbackReceiver {
  url: string;
  received: Array<{ method: string; path: string; headers: IncomingMessage['headers']; body: any }>;
  /** Status to answer for a received request; 200 by default. */
  statusFor: (entry: CallbackReceiver['received'][number]) => number;
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

async function startReceiver(): Promise<CallbackReceiver> {
  const receiver = { received: [], statusFor: () => 200 } as unknown as CallbackReceiver;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const entry = { method: req.method!, path: req.url!, headers: req.headers, body: text ? JSON.parse(text) : null };
      receiver.received.push(entry);
      res.statusCode = receiver.statusFor(entry);
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.waitFor = async (count, timeoutMs = 3000) => {
    const deadline = Date.now() + timeoutMs;
    while (receiver.received.length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} callbacks, got ${receiver.received.length}`);
      await sleep(10);
    }
  };
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

let orderSeq = 0;
export function payInBody(receiver: CallbackReceiver, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  orderSeq++;
  return {
    wallet: TEST_WALLETS.SUCCESS,
    amount: 1500,
    currency: 'XAF',
    order_id: `ORD-${Date.now()}-${orderSeq}`,
    description: 'Order',
    payer: 'Jane Doe',
    payerEmail: 'jane@example.com',
    successUrl: `${receiver.url}/cb/${orderSeq}/success?token=abc`,
    failureUrl: `${receiver.url}/cb/${orderSeq}/failure?token=abc`,
    ...overrides,
  };
}

/** The sandbox of a spec file and what its tests use; the fields are set once its beforeAll has run. */
export interface SandboxContext {
  sandbox: RunningSandbox;
  api: AxiosInstance;
  receiver: CallbackReceiver;
  token: string;
  /** Another sandbox with its own options, closed after the file. */
  extra(options: SandboxOptions): Promise<RunningSandbox>;
  agentHeaders(t?: string): Record<string, string>;
  payInHeaders(t?: string): Record<string, string>;
  cardHeaders(t?: string): Record<string, string>;
}

/**
 * Registers the hooks of a spec file: a sandbox (callbacks after CALLBACK_DELAY, held requests
 * answered after 400 ms), a callback receiver answering 200 again after each test, a token.
 */
export function useSandbox(): SandboxContext {
  const extraSandboxes: RunningSandbox[] = [];
  const context = {
    async extra(options: SandboxOptions): Promise<RunningSandbox> {
      const sb = await startSandbox({ port: 0, ...options });
      extraSandboxes.push(sb);
      return sb;
    },
    agentHeaders: (t = context.token) => ({ authorization: `Bearer ${t}`, 'x-api-key': API_KEY }),
    payInHeaders: (t = context.token) => ({ ...context.agentHeaders(t), operation: '2', service: '20053' }),
    cardHeaders: (t = context.token) => ({ authorization: `Bearer ${t}`, 'x-sp-auth-token': SP_TOKEN }),
  } as unknown as SandboxContext;

  beforeAll(async () => {
    context.sandbox = await startSandbox({ port: 0, callbackDelayMs: CALLBACK_DELAY, hangMs: 400 });
    context.api = http(context.sandbox);
    context.receiver = await startReceiver();
    context.token = await tokenFor(context.api);
  });

  afterEach(() => {
    context.receiver.statusFor = () => 200;
  });

  afterAll(async () => {
    await Promise.all(extraSandboxes.map((s) => s.close()));
    await context.sandbox.close();
    await context.receiver.close();
  });

  return context;
}
