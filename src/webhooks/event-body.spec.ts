import fc from 'fast-check';
import type { CurrencyRule } from '../common/money';
import { EventSnapshotError, renderEventBody, type StoredEvent } from './event-body';
import { ORDER_EVENT_DATA_EXAMPLE } from './events.dto';

const CURRENCIES: Record<string, CurrencyRule> = {
  XAF: { code: 'XAF', decimals: 0, maxAmount: '100000000' },
  EUR: { code: 'EUR', decimals: 2, maxAmount: '100000000' },
  KWD: { code: 'KWD', decimals: 3, maxAmount: '100000000' },
};

const CREATED_AT = new Date('2026-11-26T18:49:47.123Z');

/** A row's numeric(24,4) as to_jsonb writes it, then as the trigger turns it into text. */
function storedText(canonical: string): string {
  const [int, fraction = ''] = canonical.split('.');
  return `${int}.${fraction.padEnd(4, '0')}`;
}

function orderSnapshot(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: '6f1c2d3e-4b5a-4c7d-8e9f-0a1b2c3d4e5f',
    reference: 'INV-2026-0042',
    customer_id: 'customer-1',
    status: 'SUCCEEDED',
    amount: '1500.0000',
    currency: 'XAF',
    service: '1',
    wallet: '237670000000',
    description: 'Invoice 42',
    payer: 'Jane Doe',
    payer_email: 'jane@example.com',
    provider_reference: 'PRV-8812',
    provider_transaction_reference: 'TX-19',
    failure_reason: null,
    needs_review: false,
    submitted_at: '2026-11-26T18:49:40.001+00:00',
    processing_since: '2026-11-26T18:49:41.002+00:00',
    created_at: '2026-11-26T18:49:40+00:00',
    updated_at: '2026-11-26T19:49:47.123+01:00',
    ...overrides,
  };
}

function cardOperationSnapshot(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: '0d5c0b8e-3d6c-4a55-9f3e-8c2a7f1b2e11',
    card_user_id: '1a2b3c4d-1111-4222-8333-444455556666',
    card_id: '9a8b7c6d-1111-4222-8333-444455556666',
    requested_by: 'customer-1',
    kind: 'TOPUP',
    amount: '25.5000',
    currency: 'EUR',
    status: 'SUCCEEDED',
    provider_transaction_id: 'TX-9',
    new_balance: '125.5000',
    provider_response: { card_number: '4111111111111111', cvv: '123', message: 'ok' },
    failure_reason: null,
    created_at: '2026-11-26T18:49:40.000+00:00',
    completed_at: '2026-11-26T18:49:47.123+00:00',
    resolved_by: null,
    resolution_note: null,
    resolved_at: null,
    ...overrides,
  };
}

function distributionSnapshot(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: '7e6d5c4b-1111-4222-8333-444455556666',
    kind: 'init',
    created_by: 'finance-1',
    payment_receiver: 'M-100',
    payment_id: 'PAY-1',
    payer: 'M-200',
    amount: '10000.0000',
    currency: 'XAF',
    status: 'ACCEPTED',
    provider_message: 'Done',
    failure_reason: null,
    provider_request: { apikey: 'secret-key' },
    provider_response: { token: 'secret-token' },
    receiver_share_minor: '3334',
    created_at: '2026-11-26T18:49:40.000+00:00',
    completed_at: '2026-11-26T18:49:47.123+00:00',
    resolved_by: null,
    resolution_note: null,
    resolved_at: null,
    shares: [
      { position: '0', matricule: 'M-1', rate: '33.3300', share_minor: '3333' },
      { position: '1', matricule: 'M-2', rate: '33.3300', share_minor: '3333' },
    ],
    ...overrides,
  };
}

function event(resourceType: string, type: string, snapshot: unknown, previousStatus: string | null = 'PROCESSING'): StoredEvent {
  return { id: 'evt_0123456789abcdef0123456789abcdef', type, resourceType, previousStatus, snapshot, createdAt: CREATED_AT };
}

function rendered(stored: StoredEvent): { id: string; type: string; timestamp: string; data: Record<string, unknown> } {
  return JSON.parse(renderEventBody(stored, CURRENCIES)) as { id: string; type: string; timestamp: string; data: Record<string, unknown> };
}

describe('renderEventBody', () => {
  it('an order event: { id, type, timestamp, data } with the order as GET answers it and its previous status', () => {
    const text = renderEventBody(event('order', 'order.succeeded', orderSnapshot()), CURRENCIES);
    expect(JSON.parse(text)).toEqual({
      id: 'evt_0123456789abcdef0123456789abcdef',
      type: 'order.succeeded',
      timestamp: '2026-11-26T18:49:47.123Z',
      // The example of the OpenAPI document: what an order's event carries, rendered.
      data: ORDER_EVENT_DATA_EXAMPLE,
    });
    // The envelope's keys in the contract's order.
    expect(Object.keys(JSON.parse(text) as object)).toEqual(['id', 'type', 'timestamp', 'data']);
    expect(text).not.toContain('customer-1');
  });

  it('a card operation event: the operation as GET /v1/card-operations/{id} answers it, never the provider answer', () => {
    const text = renderEventBody(event('card_operation', 'card_operation.succeeded', cardOperationSnapshot(), 'PENDING'), CURRENCIES);
    expect(JSON.parse(text)).toMatchObject({
      data: {
        operationId: '0d5c0b8e-3d6c-4a55-9f3e-8c2a7f1b2e11',
        kind: 'TOPUP',
        status: 'SUCCEEDED',
        cardUserId: '1a2b3c4d-1111-4222-8333-444455556666',
        cardId: '9a8b7c6d-1111-4222-8333-444455556666',
        requestedBy: 'customer-1',
        amount: '25.50',
        currency: 'EUR',
        newBalance: '125.50',
        providerTransactionId: 'TX-9',
        failureReason: null,
        createdAt: '2026-11-26T18:49:40.000Z',
        completedAt: '2026-11-26T18:49:47.123Z',
        previousStatus: 'PENDING',
      },
    });
    expect(text).not.toMatch(/4111111111111111|cvv|card_number|provider_?[rR]esponse/);
  });

  it('a distribution event: the distribution as GET answers it, with its shares and remainder, never what the provider exchanged', () => {
    const text = renderEventBody(event('distribution', 'distribution.accepted', distributionSnapshot(), 'PENDING'), CURRENCIES);
    expect(JSON.parse(text)).toMatchObject({
      data: {
        id: '7e6d5c4b-1111-4222-8333-444455556666',
        kind: 'init',
        status: 'ACCEPTED',
        amount: '10000',
        currency: 'XAF',
        distribution: [
          { position: 0, matricule: 'M-1', rate: '33.33', share: '3333' },
          { position: 1, matricule: 'M-2', rate: '33.33', share: '3333' },
        ],
        remainder: '3334',
        providerMessage: 'Done',
        createdBy: 'finance-1',
        completedAt: '2026-11-26T18:49:47.123Z',
        previousStatus: 'PENDING',
      },
    });
    expect(text).not.toMatch(/secret|apikey|provider_?[rR]e(quest|sponse)/);
  });

  it('order.review_needed: the order with its flag set and the status it kept', () => {
    const body = rendered(event('order', 'order.review_needed', orderSnapshot({ needs_review: true }), 'SUCCEEDED'));
    expect(body.data).toMatchObject({ status: 'SUCCEEDED', needsReview: true, previousStatus: 'SUCCEEDED' });
  });

  it('a first event of a row (inserted already decided) has a null previous status', () => {
    expect(rendered(event('order', 'order.failed', orderSnapshot({ status: 'FAILED' }), null)).data.previousStatus).toBeNull();
  });

  it('a currency no longer configured: an order shows its amount as stored, as GET does', () => {
    expect(rendered(event('order', 'order.failed', orderSnapshot({ currency: 'USD', amount: '12.5000' }))).data.amount).toBe('12.5000');
  });

  it('any amount of the currency scale round-trips exactly, in every resource', () => {
    const rule = fc.constantFrom(...Object.values(CURRENCIES));
    const amount = rule.chain((currency) =>
      fc.bigInt({ min: 0n, max: 10n ** 18n }).map((minor) => {
        const digits = minor.toString().padStart(currency.decimals + 1, '0');
        const canonical =
          currency.decimals === 0 ? digits : `${digits.slice(0, -currency.decimals)}.${digits.slice(digits.length - currency.decimals)}`;
        return { currency, canonical };
      }),
    );
    fc.assert(
      fc.property(amount, ({ currency, canonical }) => {
        const stored = storedText(canonical);
        const order = rendered(event('order', 'order.processing', orderSnapshot({ amount: stored, currency: currency.code })));
        expect(order.data.amount).toBe(canonical);

        const operation = rendered(
          event(
            'card_operation',
            'card_operation.failed',
            cardOperationSnapshot({ amount: stored, new_balance: stored, currency: currency.code }),
          ),
        );
        expect(operation.data).toMatchObject({ amount: canonical, newBalance: canonical });

        const distribution = rendered(
          event(
            'distribution',
            'distribution.unknown',
            distributionSnapshot({ amount: stored, currency: currency.code, receiver_share_minor: null, shares: [] }),
          ),
        );
        expect(distribution.data).toMatchObject({ amount: canonical, remainder: canonical });
      }),
      { numRuns: 300 },
    );
  });

  it('an unreadable snapshot throws, whatever is wrong with it', () => {
    const broken: [string, unknown][] = [
      ['order', null],
      ['order', []],
      ['order', 'text'],
      ['order', orderSnapshot({ amount: 1500 })],
      ['order', orderSnapshot({ amount: '1e3' })],
      ['order', orderSnapshot({ service: 1 })],
      ['order', orderSnapshot({ service: '1.5' })],
      ['order', orderSnapshot({ status: 'DONE' })],
      ['order', orderSnapshot({ needs_review: 'false' })],
      ['order', orderSnapshot({ created_at: 'yesterday' })],
      ['order', orderSnapshot({ reference: undefined })],
      ['order', orderSnapshot({ failure_reason: 3 })],
      ['card_operation', cardOperationSnapshot({ kind: 'STEAL' })],
      ['card_operation', cardOperationSnapshot({ completed_at: 17 })],
      ['distribution', distributionSnapshot({ shares: undefined })],
      ['distribution', distributionSnapshot({ shares: [{ position: '0', matricule: 'M', rate: '1', share_minor: '1.5' }] })],
      ['distribution', distributionSnapshot({ receiver_share_minor: 3334 })],
      ['wallet_link', orderSnapshot()],
    ];
    for (const [resourceType, snapshot] of broken) {
      expect(() => renderEventBody(event(resourceType, `${resourceType}.x`, snapshot), CURRENCIES)).toThrow(EventSnapshotError);
    }
    // A fraction XAF does not have: corrupt, never rounded.
    expect(() => renderEventBody(event('order', 'order.x', orderSnapshot({ amount: '1500.5000' })), CURRENCIES)).toThrow();
  });
});
