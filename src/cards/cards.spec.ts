import { CorruptStoredAmountError } from '../common/money';
import { toCardDto } from './card-mappers';
import type { CardRecord } from './card.types';
import { ProviderRejectedError, ProviderTimeoutError, ProviderUnreachableError, provesNotSent } from '../provider/provider.errors';
import { isPastCalendarDate } from './card-users.dto';
import { isZeroAmount } from './cards.dto';
import { CardProviderError, maskCardNumbersIn } from './cards.errors';
import { REPLAY_NOTE, withoutCardSecrets } from './cards.service';

describe('isPastCalendarDate', () => {
  const now = new Date('2026-06-15T10:00:00Z');

  it.each(['1990-04-12', '2024-02-29', '1900-01-01', '2026-06-14'])('accepts %s', (value) => {
    expect(isPastCalendarDate(value, now)).toBe(true);
  });

  it.each([
    ['a day that does not exist', '2023-02-30'],
    ['February 29 of a common year', '2023-02-29'],
    ['month 13', '2020-13-01'],
    ['today', '2026-06-15'],
    ['tomorrow', '2026-06-16'],
    ['before 1900', '1899-12-31'],
    ['another format', '12/04/1990'],
    ['a timestamp', '1990-04-12T00:00:00Z'],
    ['short digits', '1990-4-12'],
    ['a number', 19900412],
    ['nothing', undefined],
  ])('refuses %s', (_label, value) => {
    expect(isPastCalendarDate(value, now)).toBe(false);
  });
});

describe('isZeroAmount', () => {
  it.each(['0', '0.00', ' 000 ', 0])('%p is zero', (value) => expect(isZeroAmount(value)).toBe(true));
  it.each(['0.01', '-0', '', 'zero', 1, -0.5, null])('%p is not', (value) => expect(isZeroAmount(value)).toBe(false));
});

describe('withoutCardSecrets (what a replay of a card creation is given)', () => {
  it('drops the number and the CVV and says they were shown once', () => {
    const stored = withoutCardSecrets({
      id: 'c1',
      last4: '4242',
      cardNumber: '4242424242424242',
      cvv: '123',
      secretsShownOnce: true,
      note: 'first',
    });
    expect(stored).toEqual({ id: 'c1', last4: '4242', secretsShownOnce: true, note: REPLAY_NOTE });
    expect(JSON.stringify(stored)).not.toContain('4242424242424242');
  });

  it('leaves a non-object alone', () => {
    expect(withoutCardSecrets(undefined)).toBeUndefined();
  });
});

describe('maskCardNumbersIn', () => {
  it.each([
    ['Card 4242424242424242 is blocked', 'Card **** **** **** 4242 is blocked'],
    ['pan 4242 4242 4242 4242.', 'pan **** **** **** 4242.'],
    ['pan 4242-4242-4242-4242', 'pan **** **** **** 4242'],
    ['13 digits 4222222222222 too', '13 digits **** **** **** 2222 too'],
  ])('masks %p', (text, masked) => expect(maskCardNumbersIn(text)).toBe(masked));

  it.each(['User CU12345678901234 not found', 'Insufficient balance', 'amount 100000000 XAF', 'ref ctx_1234567890123456abc'])(
    'leaves %p alone',
    (text) => {
      expect(maskCardNumbersIn(text)).toBe(text);
    },
  );
});

describe('CardProviderError', () => {
  it('keeps the provider error’s status and code, adds the operation, masks card numbers', () => {
    const rejected = new ProviderRejectedError('error_message', {
      providerStatus: 400,
      providerMessage: 'Card 4242424242424242 refused',
      providerCode: 400,
    });
    const error = new CardProviderError(rejected, { id: 'op-1', status: 'FAILED' });
    expect(error).toMatchObject({ status: 422, code: 'provider_rejected' });
    expect(error.detail).not.toContain('4242424242424242');
    expect(error.detail).toContain('op-1');
    expect(error.problemExtensions).toEqual({
      outcomeKnown: true,
      providerMessage: 'Card **** **** **** 4242 refused',
      operationId: 'op-1',
      operationStatus: 'FAILED',
    });
  });

  it('a timeout stays a 504 whose outcome is unknown', () => {
    const error = new CardProviderError(new ProviderTimeoutError('late'), { id: 'op-2', status: 'UNKNOWN' });
    expect(error).toMatchObject({ status: 504, code: 'provider_timeout' });
    expect(error.problemExtensions).toMatchObject({ outcomeKnown: false, operationId: 'op-2', operationStatus: 'UNKNOWN' });
  });
});

describe('provesNotSent on card errors (frees the idempotency key)', () => {
  it('sees through the card operation to the provider error it carries', () => {
    const unreachable = new ProviderUnreachableError('down');
    expect(provesNotSent(unreachable)).toBe(true);
    expect(provesNotSent(new CardProviderError(unreachable, { id: 'op', status: 'FAILED' }))).toBe(true);
    expect(provesNotSent(new CardProviderError(new ProviderTimeoutError('late'), { id: 'op', status: 'UNKNOWN' }))).toBe(false);
    expect(provesNotSent(new ProviderRejectedError('error_message', { providerStatus: 400 }))).toBe(false);
    expect(provesNotSent(new Error('boom'))).toBe(false);
  });
});

describe('stored amounts of cards and operations', () => {
  const currencies = { EUR: { code: 'EUR', decimals: 2, maxAmount: '100000' } };
  const card: CardRecord = {
    id: 'c1',
    cardUserId: 'u1',
    ownerId: 'alice',
    providerCardId: 'p1',
    last4: '4242',
    expiry: '12/29',
    currency: 'EUR',
    status: 'ACTIVE',
    lastKnownBalance: '12.5',
    balanceSyncedAt: null,
    terminatedAt: null,
    createdAt: new Date('2026-01-01T00:00:00Z'),
    updatedAt: new Date('2026-01-01T00:00:00Z'),
  };

  it('are shown in the canonical form of their currency', () => {
    expect(toCardDto(card, currencies).balance).toBe('12.50');
    expect(toCardDto({ ...card, lastKnownBalance: null }, currencies).balance).toBeNull();
  });

  it('refuse corrupt data (a 500 stored_amount_corrupt) instead of showing it as stored', () => {
    expect(() => toCardDto({ ...card, lastKnownBalance: '12.345' }, currencies)).toThrow(CorruptStoredAmountError);
  });
});
