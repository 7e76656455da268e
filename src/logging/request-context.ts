import { ScopedValue } from '../common/async-scope';

/** Carries the request id through every await of a request, so logs and provider calls carry it too. */
export const requestIdScope = new ScopedValue<string>('requestId');

export const currentRequestId = (): string | undefined => requestIdScope.get();
