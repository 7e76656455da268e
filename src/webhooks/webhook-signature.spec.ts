import { Webhook } from 'standardwebhooks';
import { newWebhookSecret, webhookSignatureHeader, webhookSignatureMatches } from './webhook-signature';

/** Our signatures, verified by the Standard Webhooks reference library a merchant would use. */
describe('webhook signatures', () => {
  const body = JSON.stringify({ id: 'evt_1', type: 'order.succeeded', data: { amount: '1500', note: 'é "quoted"' } });
  const headersFor = (signature: string, timestamp: number) => ({
    'webhook-id': 'evt_1',
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signature,
  });

  it('verifies with the standardwebhooks package', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = webhookSignatureHeader([secret], 'evt_1', timestamp, body);
    expect(new Webhook(secret).verify(body, headersFor(signature, timestamp))).toEqual(JSON.parse(body));
  });

  it('during a rotation carries both signatures: either secret verifies', () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()];
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = webhookSignatureHeader([current, previous], 'evt_1', timestamp, body);
    expect(signature.split(' ')).toHaveLength(2);
    for (const secret of [current, previous])
      expect(() => new Webhook(secret).verify(body, headersFor(signature, timestamp))).not.toThrow();
    expect(() => new Webhook(newWebhookSecret()).verify(body, headersFor(signature, timestamp))).toThrow();
    expect(webhookSignatureMatches(previous, signature, 'evt_1', timestamp, body)).toBe(true);
  });

  it('a changed body, id or timestamp no longer verifies', () => {
    const secret = newWebhookSecret();
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = webhookSignatureHeader([secret], 'evt_1', timestamp, body);
    expect(() => new Webhook(secret).verify(`${body} `, headersFor(signature, timestamp))).toThrow();
    expect(webhookSignatureMatches(secret, signature, 'evt_2', timestamp, body)).toBe(false);
    expect(webhookSignatureMatches(secret, signature, 'evt_1', timestamp + 1, body)).toBe(false);
  });
});
