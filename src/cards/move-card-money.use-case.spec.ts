import pino from 'pino';
import { ConfigService } from '@nestjs/config';
import type { AuthUser } from '../auth/auth.types';
import type { AppConfig } from '../config/app-config';
import type { IdempotencyService } from '../idempotency/idempotency.service';
import type { OperationLink } from '../provider-operations/operation-tables';
import type { CardsClient } from '../provider/clients/cards.client';
import { ProviderRejectedError, ProviderTimeoutError, ProviderUnreachableError } from '../provider/provider.errors';
import { CardOperationRunner } from './card-operation-runner';
import type { CardOperationRecord, CardRecord, NewCardOperation, OperationOutcome } from './card.types';
import { CardFrozenError, CardProviderError } from './cards.errors';
import { provesNotSent } from '../provider/provider.errors';
import type { CardOperationsRepository } from './card-operations.repository';
import type { CardsRepository } from './cards.repository';
import { MoveCardMoneyUseCase } from './move-card-money.use-case';

const alice: AuthUser = { id: 'alice', roles: ['customer'] };
const config = new ConfigService<AppConfig, true>({ currencies: { XAF: { code: 'XAF', decimals: 0, maxAmount: '100000000' } } });

/** The repository's rules in memory: operations stored PENDING, completed once, the card's balance moved on success. */
class FakeCardsRepository {
  readonly operations = new Map<string, CardOperationRecord>();
  readonly links: (OperationLink | undefined)[] = [];

  constructor(readonly card: CardRecord) {}

  findCard(id: string): Promise<CardRecord | undefined> {
    return Promise.resolve(id === this.card.id ? { ...this.card } : undefined);
  }

  startOperation(operation: NewCardOperation, link?: OperationLink): Promise<CardOperationRecord> {
    const stored: CardOperationRecord = {
      id: `op-${this.operations.size + 1}`,
      ...operation,
      ownerId: this.card.ownerId,
      amount: operation.amount ?? null,
      currency: operation.currency ?? null,
      status: 'PENDING',
      providerTransactionId: null,
      newBalance: null,
      providerResponse: null,
      failureReason: null,
      createdAt: new Date(),
      completedAt: null,
    };
    this.operations.set(stored.id, stored);
    this.links.push(link);
    return Promise.resolve({ ...stored });
  }

  completeOperation(id: string, outcome: OperationOutcome): Promise<CardOperationRecord> {
    const operation = this.pending(id);
    Object.assign(operation, {
      status: outcome.status,
      failureReason: outcome.status === 'SUCCEEDED' ? null : outcome.failureReason,
      completedAt: new Date(),
    });
    return Promise.resolve({ ...operation });
  }

  completeCardOperation(
    id: string,
    _cardId: string,
    outcome: OperationOutcome & { status: 'SUCCEEDED' },
    change: { balance?: string | null },
  ): Promise<{ card: CardRecord; operation: CardOperationRecord }> {
    const operation = this.pending(id);
    Object.assign(operation, {
      status: 'SUCCEEDED',
      newBalance: outcome.newBalance ?? null,
      providerTransactionId: outcome.providerTransactionId ?? null,
      completedAt: new Date(),
    });
    if (change.balance) this.card.lastKnownBalance = change.balance;
    return Promise.resolve({ card: { ...this.card }, operation: { ...operation } });
  }

  private pending(id: string): CardOperationRecord {
    const operation = this.operations.get(id);
    if (operation?.status !== 'PENDING') throw new Error(`operation ${id} is not PENDING`);
    return operation;
  }
}

function setUp(provider: Partial<Record<'topUp' | 'withdraw', jest.Mock>>, cardChanges: Partial<CardRecord> = {}) {
  const card: CardRecord = {
    id: '5f0c7c52-8a39-4b8e-9d1e-0a6f3c2b1d4e',
    cardUserId: 'cu-1',
    ownerId: alice.id,
    providerCardId: 'pc-1',
    last4: '4242',
    expiry: '12/30',
    currency: 'XAF',
    status: 'ACTIVE',
    lastKnownBalance: '1000',
    balanceSyncedAt: null,
    terminatedAt: null,
    createdAt: new Date(),
    updatedAt: new Date(),
    ...cardChanges,
  };
  const repository = new FakeCardsRepository(card);
  const idempotency = { pendingClaim: () => ({ id: 'idem-record-1' }), registerRecovery: jest.fn() } as unknown as IdempotencyService;
  const runner = new CardOperationRunner(
    repository as unknown as CardOperationsRepository,
    repository as unknown as CardsRepository,
    idempotency,
    config,
    pino({ level: 'silent' }),
  );
  const useCase = new MoveCardMoneyUseCase(repository as unknown as CardOperationsRepository, provider as unknown as CardsClient, runner);
  return { useCase, repository, card };
}

async function failureOf(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => {
      throw new Error('expected the operation to fail');
    },
    (error: unknown) => error,
  );
}

describe('MoveCardMoneyUseCase (card operation outcomes)', () => {
  it('provider success: SUCCEEDED with the provider balance, the card balance moved, linked to the idempotency record', async () => {
    const topUp = jest.fn().mockResolvedValue({ new_balance: '1250', transaction_id: 'tx-9' });
    const { useCase, repository, card } = setUp({ topUp });

    const answer = await useCase.topUp(alice, card.id, { amount: '250' });

    expect(topUp).toHaveBeenCalledWith('pc-1', '250', 'XAF');
    expect(answer).toMatchObject({ kind: 'TOPUP', status: 'SUCCEEDED', amount: '250', newBalance: '1250', providerTransactionId: 'tx-9' });
    expect(repository.card.lastKnownBalance).toBe('1250');
    expect(repository.links).toEqual([{ claim: { id: 'idem-record-1' }, type: 'card_operation' }]);
  });

  it('provider rejection: FAILED, balance unchanged, the key kept (the provider answered)', async () => {
    const refusal = new ProviderRejectedError('error_message', { providerStatus: 400, providerMessage: 'Insufficient balance' });
    const { useCase, repository, card } = setUp({ withdraw: jest.fn().mockRejectedValue(refusal) });

    const error = await failureOf(useCase.withdraw(alice, card.id, { amount: '5000' }));

    expect(error).toBeInstanceOf(CardProviderError);
    expect((error as CardProviderError).operation).toMatchObject({ status: 'FAILED' });
    expect([...repository.operations.values()]).toEqual([
      expect.objectContaining({ kind: 'WITHDRAW', status: 'FAILED', failureReason: 'Insufficient balance' }),
    ]);
    expect(repository.card.lastKnownBalance).toBe('1000');
    expect(provesNotSent(error)).toBe(false);
  });

  it('provider timeout: UNKNOWN, balance unchanged, the key kept (the provider may have acted)', async () => {
    const { useCase, repository, card } = setUp({ topUp: jest.fn().mockRejectedValue(new ProviderTimeoutError('no answer in 500 ms')) });

    const error = await failureOf(useCase.topUp(alice, card.id, { amount: '100' }));

    expect((error as CardProviderError).operation).toMatchObject({ status: 'UNKNOWN' });
    expect([...repository.operations.values()][0]).toMatchObject({ status: 'UNKNOWN', failureReason: 'no answer in 500 ms' });
    expect(repository.card.lastKnownBalance).toBe('1000');
    expect(provesNotSent(error)).toBe(false);
  });

  it('not sent: FAILED, balance unchanged, the key released (nothing can have happened)', async () => {
    const { useCase, repository, card } = setUp({ topUp: jest.fn().mockRejectedValue(new ProviderUnreachableError('connection refused')) });

    const error = await failureOf(useCase.topUp(alice, card.id, { amount: '100' }));

    expect((error as CardProviderError).operation).toMatchObject({ status: 'FAILED' });
    expect([...repository.operations.values()][0]).toMatchObject({
      status: 'FAILED',
      failureReason: 'Not sent to the payment provider (provider_unreachable)',
    });
    expect(repository.card.lastKnownBalance).toBe('1000');
    expect(provesNotSent(error)).toBe(true);
  });

  it('a frozen card: refused before anything is stored or sent', async () => {
    const topUp = jest.fn();
    const { useCase, repository, card } = setUp({ topUp }, { status: 'FROZEN' });

    await expect(useCase.topUp(alice, card.id, { amount: '100' })).rejects.toBeInstanceOf(CardFrozenError);
    expect(topUp).not.toHaveBeenCalled();
    expect(repository.operations.size).toBe(0);
  });
});
