import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The process's one AsyncLocalStorage. Each enabled AsyncLocalStorage adds its own work to every
 * promise the process creates (Node 20 copies each one's store onto each new promise; measured in
 * docs/performance.md). Every value that follows a request or a call through its awaits is a
 * ScopedValue of this one storage.
 */
// eslint-disable-next-line no-restricted-syntax -- the one storage
const scope = new AsyncLocalStorage<Readonly<Record<symbol, unknown>>>();

/** A value that follows a call through its awaits, as an AsyncLocalStorage of its own would. */
export class ScopedValue<T> {
  private readonly key: symbol;

  constructor(name: string) {
    this.key = Symbol(name);
  }

  /** The value `run` gave the calls in progress, if any. */
  get(): T | undefined {
    return scope.getStore()?.[this.key] as T | undefined;
  }

  /** Runs `work` with `value` for this ScopedValue; the other values in scope stay as they are. */
  run<R>(value: T, work: () => R): R {
    return scope.run({ ...scope.getStore(), [this.key]: value }, work);
  }
}

/** Runs `work` outside every scope: what it schedules (a timer of a shared batch) carries no request's values. */
export function outsideScopes<R>(work: () => R): R {
  return scope.exit(work);
}
