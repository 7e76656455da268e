import {
  AgentBudgetExhaustedError,
  ProviderAuthenticationError,
  ProviderBadResponseError,
  ProviderConnectionLostError,
  ProviderError,
  ProviderErrorCarrier,
  providerErrorOf,
  ProviderRateLimitedError,
  ProviderRejectedError,
  ProviderServerError,
  ProviderTimeoutError,
  ProviderTokenUnavailableError,
  ProviderUnauthorizedError,
  ProviderUnreachableError,
  provesNotSent,
} from './provider.errors';

/** Another area's error carrying a provider error, as the card operations' does. */
class CarriedProviderError extends ProviderErrorCarrier {
  readonly status = 502;
  readonly code = 'carried';
  readonly title = 'Carried';

  constructor(readonly providerError: ProviderError) {
    super('carried');
  }
}

describe('providerErrorOf', () => {
  it('is the provider error itself, the one a carrier carries, or undefined', () => {
    const timeout = new ProviderTimeoutError('late');
    expect(providerErrorOf(timeout)).toBe(timeout);
    expect(providerErrorOf(new CarriedProviderError(timeout))).toBe(timeout);
    expect(providerErrorOf(new Error('boom', { cause: timeout }))).toBeUndefined();
    expect(providerErrorOf('provider_timeout')).toBeUndefined();
  });
});

describe('provesNotSent (the request never reached the provider)', () => {
  const notSent: ProviderError[] = [
    new ProviderUnreachableError('down'),
    new ProviderAuthenticationError(),
    new ProviderUnauthorizedError('refused'),
    new ProviderTokenUnavailableError('busy'),
    new ProviderRateLimitedError('slow down'),
    new AgentBudgetExhaustedError(30),
  ];
  const maybeSent: ProviderError[] = [
    new ProviderTimeoutError('late'),
    new ProviderConnectionLostError('lost'),
    new ProviderServerError('5xx'),
    new ProviderBadResponseError('garbled'),
    // Refused: the provider saw the request, so its key must not be reused.
    new ProviderRejectedError('success_false', { providerStatus: 400, providerMessage: 'no' }),
  ];

  it.each(notSent.map((error) => [error.code, error]))('%s proves it, alone or carried', (_code, error) => {
    expect(provesNotSent(error)).toBe(true);
    expect(provesNotSent(new CarriedProviderError(error))).toBe(true);
  });

  it.each(maybeSent.map((error) => [error.code, error]))('%s does not, alone or carried', (_code, error) => {
    expect(provesNotSent(error)).toBe(false);
    expect(provesNotSent(new CarriedProviderError(error))).toBe(false);
  });

  it('no other error proves anything', () => {
    expect(provesNotSent(new Error('boom'))).toBe(false);
    expect(provesNotSent(undefined)).toBe(false);
  });
});
