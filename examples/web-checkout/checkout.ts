/**
 * The checkout page's script (bundled by server.ts with esbuild from the client's source): creates
 * the order with the client, then shows each status of the order live until the final one, with
 * fetch and the bearer token (watchOrder), across drops and restarts of the service.
 */
import { createClient, ProblemError } from '../../client/src/index.js';

const apiBaseUrl = document.querySelector<HTMLMetaElement>('meta[name="api-base-url"]')!.content;

let session: { token: string; expiresAt: number } | undefined;
/** The page's own backend (server.ts) signs the shopper in and hands out a short-lived token. */
async function getToken(): Promise<string> {
  if (session && session.expiresAt - Date.now() > 30_000) return session.token;
  const response = await fetch('/session/token', { method: 'POST' });
  if (!response.ok) throw new Error(`the checkout backend gave no token (${response.status})`);
  const { token, expiresInSeconds } = (await response.json()) as { token: string; expiresInSeconds: number };
  session = { token, expiresAt: Date.now() + expiresInSeconds * 1000 };
  return token;
}

const client = createClient({ baseUrl: apiBaseUrl, getToken });

const form = document.querySelector<HTMLFormElement>('#checkout')!;
const payButton = document.querySelector<HTMLButtonElement>('#pay')!;
const orderLine = document.querySelector<HTMLParagraphElement>('#order')!;
const statuses = document.querySelector<HTMLOListElement>('#statuses')!;
const problemLine = document.querySelector<HTMLParagraphElement>('#problem')!;

function showProblem(error: unknown): void {
  // The detail, and which field is wrong when the service names them.
  const fields = error instanceof ProblemError ? (error.errors ?? []).map((field) => field.message) : [];
  problemLine.textContent = error instanceof ProblemError ? [error.detail, ...fields].join(' ') : String(error);
  problemLine.dataset.code = error instanceof ProblemError ? error.code : 'error';
  problemLine.hidden = false;
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  void pay(new FormData(form));
});

async function pay(fields: FormData): Promise<void> {
  payButton.disabled = true;
  problemLine.hidden = true;
  statuses.replaceChildren();
  try {
    const order = await client.createOrder({
      amount: textOf(fields, 'amount'),
      currency: 'XAF',
      wallet: textOf(fields, 'wallet'),
      service: 1,
      description: 'Web checkout example',
      payer: 'Web shopper',
      payerEmail: 'shopper@example.com',
    });
    orderLine.textContent = `Order ${order.reference}`;
    orderLine.dataset.orderId = order.id;
    orderLine.hidden = false;
    for await (const change of client.watchOrder(order.id)) {
      const item = document.createElement('li');
      item.dataset.status = change.status;
      item.textContent = change.status;
      if (change.status === 'SUCCEEDED' || change.status === 'FAILED') item.dataset.final = '';
      statuses.append(item);
    }
  } catch (error) {
    showProblem(error);
  } finally {
    payButton.disabled = false;
  }
}

function textOf(fields: FormData, name: string): string {
  const value = fields.get(name);
  return typeof value === 'string' ? value.trim() : '';
}
