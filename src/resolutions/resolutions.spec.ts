import { ConflictError, NotFoundError } from '../common/domain-error';
import type { CardOperationRecord } from '../cards/card.types';
import type { DistributionRecord } from '../distributions/distribution.types';
import { ORDER_STATUSES, type OrderRecord, type OrderStatus } from '../orders/order.types';
import { PAYIN_ORDERS_TABLE } from '../orders/payin-orders.table';
import { ClearOrderReviewUseCase } from './clear-order-review.use-case';
import { cardOperationResolver, distributionResolver, orderResolver } from './operation-resolvers';
import { mayBeResolved, ResolveOperationUseCase } from './resolve-operation.use-case';

const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const ADMIN = { id: 'boss', roles: ['admin' as const] };
const TIMEOUT_MS = 15_000;

function order(status: OrderStatus, needsReview = false): OrderRecord {
  return { id: ID, status, needsReview } as OrderRecord;
}

/** A repository that remembers what it was asked and answers what the test says. */
function fakeOrders(current: OrderRecord | undefined, decides = true) {
  const calls: { method: string; args: unknown[] }[] = [];
  const change = {
    order: current,
    event: { orderId: ID, changeId: '9', fromStatus: current?.status ?? null, status: 'SUCCEEDED', reason: 'manual_resolution', at: '' },
  };
  return {
    calls,
    repository: {
      findById: async () => current,
      resolveManually: async (...args: unknown[]) => (calls.push({ method: 'resolveManually', args }), decides ? change : undefined),
      clearReview: async (...args: unknown[]) => (calls.push({ method: 'clearReview', args }), decides ? change : undefined),
    },
    published: [] as unknown[],
  };
}

function orderUseCases(fake: ReturnType<typeof fakeOrders>) {
  const events = { publishLocal: (event: unknown) => fake.published.push(event) };
  const ordersService = { get: async () => ({ id: ID }) };
  return {
    resolve: new ResolveOperationUseCase(orderResolver(fake.repository as never, events, ordersService as never), TIMEOUT_MS),
    review: new ClearOrderReviewUseCase(fake.repository as never, events as never, ordersService as never),
  };
}

describe('which orders a person may resolve', () => {
  it('UNKNOWN and EXPIRED always, PENDING depending on its age, nothing else', () => {
    const rules = PAYIN_ORDERS_TABLE.resolution;
    expect(ORDER_STATUSES.filter((status) => mayBeResolved(rules, status))).toEqual(['PENDING', 'UNKNOWN', 'EXPIRED']);
    expect(rules.resolvable).toEqual(['UNKNOWN', 'EXPIRED']);
  });
});

describe('ResolveOperationUseCase: orders', () => {
  const dto = { status: 'SUCCEEDED' as const, note: 'checked' };

  it.each(['UNKNOWN', 'EXPIRED', 'PENDING'] as const)(
    '%s: asks the repository with the guard and the window (2 × timeout + 60 s), publishes the event',
    async (status) => {
      const fake = fakeOrders(order(status));
      await orderUseCases(fake).resolve.execute(ADMIN, ID, dto);
      expect(fake.calls).toHaveLength(1);
      const [id, outcome, guard, by, audit] = fake.calls[0].args as [string, string, unknown, unknown, Record<string, unknown>];
      expect([id, outcome]).toEqual([ID, 'SUCCEEDED']);
      expect(guard).toEqual({ statuses: ['UNKNOWN', 'EXPIRED'], pendingOlderThanSeconds: 90 });
      expect(by).toEqual({ actor: 'boss', note: 'checked' });
      expect(audit).toMatchObject({ actor: 'boss', action: 'order.resolved', resourceType: 'order', resourceId: ID, note: 'checked' });
      expect(fake.published).toHaveLength(1);
    },
  );

  it.each(['PROCESSING', 'SUCCEEDED', 'FAILED'] as const)('%s: 409 order_not_resolvable without writing', async (status) => {
    const fake = fakeOrders(order(status));
    const error = await orderUseCases(fake)
      .resolve.execute(ADMIN, ID, dto)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as ConflictError).code).toBe('order_not_resolvable');
    expect(fake.calls).toEqual([]);
    expect(fake.published).toEqual([]);
  });

  it('the guard refused (a callback decided first, or PENDING too young): 409, nothing published', async () => {
    const fake = fakeOrders(order('PENDING'), false);
    const error = await orderUseCases(fake)
      .resolve.execute(ADMIN, ID, dto)
      .catch((e: unknown) => e);
    expect((error as ConflictError).code).toBe('order_not_resolvable');
    expect((error as ConflictError).detail).toMatch(/PENDING for less than 90 seconds/);
    expect(fake.published).toEqual([]);
  });

  it('no such order, or not an id: 404 without asking the repository to write', async () => {
    const fake = fakeOrders(undefined);
    await expect(orderUseCases(fake).resolve.execute(ADMIN, ID, dto)).rejects.toBeInstanceOf(NotFoundError);
    await expect(orderUseCases(fake).resolve.execute(ADMIN, 'nope', dto)).rejects.toBeInstanceOf(NotFoundError);
    expect(fake.calls).toEqual([]);
  });
});

describe('ClearOrderReviewUseCase', () => {
  it('a flagged order is cleared, whatever its status', async () => {
    const fake = fakeOrders(order('SUCCEEDED', true));
    await orderUseCases(fake).review.execute(ADMIN, ID, { note: 'looked' });
    expect(fake.calls.map((c) => c.method)).toEqual(['clearReview']);
    expect(fake.published).toHaveLength(1);
  });

  it('an order not flagged, or cleared meanwhile: 409 order_review_not_needed', async () => {
    for (const fake of [fakeOrders(order('FAILED', false)), fakeOrders(order('FAILED', true), false)]) {
      const error = await orderUseCases(fake)
        .review.execute(ADMIN, ID, { note: 'looked' })
        .catch((e: unknown) => e);
      expect((error as ConflictError).code).toBe('order_review_not_needed');
      expect(fake.published).toEqual([]);
    }
  });
});

describe('ResolveOperationUseCase: card operations', () => {
  const make = (operation: Partial<CardOperationRecord> | undefined) => {
    const calls: unknown[][] = [];
    const repository = {
      findOperation: async () => operation,
      resolveUnknownOperation: async (...args: unknown[]) => (calls.push(args), operation),
    };
    return {
      calls,
      useCase: new ResolveOperationUseCase(
        cardOperationResolver(repository as never, { operation: async () => ({}) as never }),
        TIMEOUT_MS,
      ),
    };
  };

  it.each([
    ['FREEZE', 'SUCCEEDED', 'FROZEN'],
    ['UNFREEZE', 'SUCCEEDED', 'ACTIVE'],
    ['TERMINATE', 'SUCCEEDED', 'TERMINATED'],
    ['TERMINATE', 'FAILED', undefined],
    ['TOPUP', 'SUCCEEDED', undefined],
    ['WITHDRAW', 'SUCCEEDED', undefined],
    ['CREATE', 'SUCCEEDED', undefined],
  ] as const)('UNKNOWN %s declared %s changes the card status to %s', async (kind, status, cardStatus) => {
    const { calls, useCase } = make({ id: ID, kind, status: 'UNKNOWN', cardId: 'c' });
    await useCase.execute(ADMIN, ID, { status, note: 'n' });
    expect(calls[0][1]).toEqual({ status, actor: 'boss', note: 'n', cardStatus });
  });

  it.each(['PENDING', 'SUCCEEDED', 'FAILED'] as const)('%s: 409 card_operation_not_resolvable without writing', async (status) => {
    const { calls, useCase } = make({ id: ID, kind: 'TOPUP', status });
    const error = await useCase.execute(ADMIN, ID, { status: 'SUCCEEDED', note: 'n' }).catch((e: unknown) => e);
    expect((error as ConflictError).code).toBe('card_operation_not_resolvable');
    expect(calls).toEqual([]);
  });

  it('missing: 404', async () => {
    await expect(make(undefined).useCase.execute(ADMIN, ID, { status: 'SUCCEEDED', note: 'n' })).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('ResolveOperationUseCase: distributions', () => {
  const make = (distribution: Partial<DistributionRecord> | undefined, decides = true) => {
    const calls: unknown[][] = [];
    const repository = {
      findById: async () => distribution,
      resolveUnknown: async (...args: unknown[]) => (calls.push(args), decides ? distribution : undefined),
    };
    return {
      calls,
      useCase: new ResolveOperationUseCase(distributionResolver(repository as never, { get: async () => ({}) as never }), TIMEOUT_MS),
    };
  };

  it('UNKNOWN: resolved', async () => {
    const { calls, useCase } = make({ id: ID, kind: 'fiat', status: 'UNKNOWN' });
    await useCase.execute(ADMIN, ID, { status: 'REJECTED', note: 'n' });
    expect(calls[0].slice(0, 2)).toEqual([ID, { status: 'REJECTED', actor: 'boss', note: 'n' }]);
  });

  it.each(['PENDING', 'ACCEPTED', 'REJECTED'] as const)('%s: 409 distribution_not_resolvable without writing', async (status) => {
    const { calls, useCase } = make({ id: ID, kind: 'init', status });
    const error = await useCase.execute(ADMIN, ID, { status: 'ACCEPTED', note: 'n' }).catch((e: unknown) => e);
    expect((error as ConflictError).code).toBe('distribution_not_resolvable');
    expect(calls).toEqual([]);
  });

  it('decided meanwhile (the guard refused): 409', async () => {
    const error = await make({ id: ID, kind: 'init', status: 'UNKNOWN' }, false)
      .useCase.execute(ADMIN, ID, { status: 'ACCEPTED', note: 'n' })
      .catch((e: unknown) => e);
    expect((error as ConflictError).code).toBe('distribution_not_resolvable');
  });
});
