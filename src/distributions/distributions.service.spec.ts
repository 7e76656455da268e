import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { ConfigService } from '@nestjs/config';
import pino from 'pino';
import type { NewAuditEvent } from '../audit/audit.types';
import type { AuthUser } from '../auth/auth.types';
import { ConflictError, ValidationFailedError } from '../common/domain-error';
import { loadAppConfig } from '../config/app-config';
import type { IdempotencyService } from '../idempotency/idempotency.service';
import { IDEMPOTENT_METADATA, type IdempotentRoute } from '../idempotency/idempotent-route';
import type { DistributionClient } from '../provider/clients/distribution.client';
import type { OperationLink } from '../provider-operations/operation-tables';
import {
  AgentBudgetExhaustedError,
  ProviderAuthenticationError,
  ProviderConnectionLostError,
  ProviderRejectedError,
  ProviderServerError,
  ProviderTimeoutError,
  ProviderTokenUnavailableError,
  ProviderUnreachableError,
} from '../provider/provider.errors';
import type { FiatDistributionBody, InitDistributionBody, SuccessMessage } from '../provider/provider.types';
import type { DistributionOutcome, DistributionRecord, NewDistribution } from './distribution.types';
import { DistributionsController } from './distributions.controller';
import type { DistributionsRepository } from './distributions.repository';
import { DistributionsService } from './distributions.service';

/** The repository's rules in memory: a paymentId is used once, and only a PENDING distribution moves or is removed. */
class MemoryDistributions {
  readonly rows = new Map<string, DistributionRecord>();
  readonly links = new Map<string, string | undefined>();
  readonly audits: NewAuditEvent[] = [];

  async createPending(distribution: NewDistribution, link?: OperationLink) {
    if (distribution.paymentId && [...this.rows.values()].some((row) => row.paymentId === distribution.paymentId)) return undefined;
    const row: DistributionRecord = {
      ...distribution,
      id: randomUUID(),
      status: 'PENDING',
      providerMessage: null,
      failureReason: null,
      providerResponse: null,
      createdAt: new Date(),
      completedAt: null,
    };
    this.rows.set(row.id, row);
    this.links.set(row.id, link?.claim.id);
    return structuredClone(row);
  }
  async findByPaymentId(paymentId: string) {
    return [...this.rows.values()].find((row) => row.paymentId === paymentId);
  }
  async findById(id: string) {
    return this.rows.get(id);
  }
  async recordOutcome(id: string, outcome: DistributionOutcome, audit?: NewAuditEvent) {
    const row = this.rows.get(id)!;
    if (audit) this.audits.push(audit);
    if (row.status === 'PENDING') {
      Object.assign(row, {
        status: outcome.status,
        providerMessage: outcome.providerMessage,
        failureReason: outcome.status === 'ACCEPTED' ? null : outcome.failureReason,
        providerResponse: outcome.providerResponse,
        completedAt: new Date(),
      });
    }
    return structuredClone(row);
  }
  async deletePending(id: string) {
    if (this.rows.get(id)?.status === 'PENDING') this.rows.delete(id);
  }
}

/** The provider's link host: answers what it is told to, and keeps what it was sent. */
class ScriptedDistributionClient {
  readonly sent: Array<{ endpoint: 'init' | 'fiat'; body: InitDistributionBody | FiatDistributionBody }> = [];
  answer: () => Promise<SuccessMessage> = async () => ({ success: true, message: 'Distribution done' });

  initTransaction(body: InitDistributionBody) {
    this.sent.push({ endpoint: 'init', body });
    return this.answer();
  }
  distributeFiat(body: FiatDistributionBody) {
    this.sent.push({ endpoint: 'fiat', body });
    return this.answer();
  }
}

const RECORD_ID = 'idempotency-record-1';
const admin: AuthUser = { id: 'root', roles: ['admin'] };
const initRequest = (overrides: Record<string, unknown> = {}) => ({
  paymentReceiver: 'MAT001',
  paymentId: `pay_${randomUUID()}`,
  amount: '100',
  currency: 'XAF',
  distribution: [
    { matricule: 'MAT001', rate: '33.33' },
    { matricule: 'MAT002', rate: 33.33 },
    { matricule: 'MAT003', rate: '33.34' },
  ],
  ...overrides,
});
const fiatRequest = () => ({
  payer: 'Awa Ndiaye',
  currency: 'EUR',
  amount: '250.75',
  distribution: [
    { matricule: 'MAT002', rate: 60 },
    { matricule: 'MAT003', rate: '39.99' },
  ],
});

function setup() {
  const repository = new MemoryDistributions();
  const client = new ScriptedDistributionClient();
  const idempotency = { pendingClaim: () => ({ id: RECORD_ID }), registerRecovery: () => undefined };
  const service = new DistributionsService(
    repository as unknown as DistributionsRepository,
    client as unknown as DistributionClient,
    new ConfigService(loadAppConfig({})),
    pino({ level: 'silent' }),
    idempotency as unknown as IdempotencyService,
  );
  return { repository, client, service };
}

describe('DistributionsService: what the provider answer does to a distribution', () => {
  it('accepted: ACCEPTED, largest-remainder shares stored before the call, linked to the idempotency record, audited', async () => {
    const { repository, client, service } = setup();
    const request = initRequest();
    const answered = await service.createInit(admin, request);

    expect(client.sent).toEqual([
      {
        endpoint: 'init',
        body: {
          payment_receiver: 'MAT001',
          payment_id: request.paymentId,
          amount: 100,
          distribution: [
            { matricule: 'MAT001', rate: 33.33 },
            { matricule: 'MAT002', rate: 33.33 },
            { matricule: 'MAT003', rate: 33.34 },
          ],
        },
      },
    ]);
    const stored = repository.rows.get(answered.id)!;
    expect(stored.shares.map((share) => share.shareMinor)).toEqual([33n, 33n, 34n]);
    expect(stored.receiverShareMinor).toBe(0n);
    expect(repository.links.get(answered.id)).toBe(RECORD_ID);
    expect(answered).toMatchObject({
      status: 'ACCEPTED',
      amount: '100',
      remainder: '0',
      providerMessage: 'Distribution done',
      failureReason: null,
      distribution: [
        { position: 1, matricule: 'MAT001', rate: '33.33', share: '33' },
        { position: 2, matricule: 'MAT002', rate: '33.33', share: '33' },
        { position: 3, matricule: 'MAT003', rate: '33.34', share: '34' },
      ],
    });
    expect(repository.audits).toEqual([
      expect.objectContaining({
        actor: 'root',
        action: 'distribution.created',
        resourceId: answered.id,
        details: { kind: 'init', status: 'ACCEPTED', amount: '100', currency: 'XAF' },
      }),
    ]);
  });

  it('fiat accepted: the {data} envelope, shares in minor units, what the rates leave as remainder', async () => {
    const { client, service } = setup();
    const answered = await service.createFiat(admin, fiatRequest());
    expect(client.sent).toEqual([
      {
        endpoint: 'fiat',
        body: {
          data: {
            payer: 'Awa Ndiaye',
            currency: 'EUR',
            amount: 250.75,
            distribution: [
              { matricule: 'MAT002', rate: 60 },
              { matricule: 'MAT003', rate: 39.99 },
            ],
          },
        },
      },
    ]);
    expect(answered).toMatchObject({ kind: 'fiat', status: 'ACCEPTED', amount: '250.75', remainder: '0.03' });
    expect(answered.distribution.map((share) => share.share)).toEqual(['150.45', '100.27']);
  });

  it('an answer without success: true is UNKNOWN, never ACCEPTED', async () => {
    const { client, service } = setup();
    client.answer = async () => ({ message: 'hm' }) as unknown as SuccessMessage;
    await expect(service.createInit(admin, initRequest())).resolves.toMatchObject({
      status: 'UNKNOWN',
      failureReason: 'The provider answered without success: true',
      providerMessage: 'hm',
    });
  });

  it("rejected: REJECTED with the provider's message; the shares stay stored; answered, not thrown", async () => {
    const { repository, client, service } = setup();
    client.answer = () =>
      Promise.reject(
        new ProviderRejectedError('success_false', {
          providerStatus: 400,
          providerMessage: 'Unknown matricule MAT003',
          body: { success: false, message: 'Unknown matricule MAT003' },
        }),
      );
    const answered = await service.createInit(admin, initRequest());
    expect(answered).toMatchObject({
      status: 'REJECTED',
      failureReason: 'Unknown matricule MAT003',
      providerMessage: 'Unknown matricule MAT003',
    });
    const stored = repository.rows.get(answered.id)!;
    expect(stored.providerResponse).toEqual({ success: false, message: 'Unknown matricule MAT003' });
    expect(stored.shares).toHaveLength(3);
    expect(client.sent).toHaveLength(1);
  });

  it.each([
    ['a timeout', new ProviderTimeoutError('The payment provider did not answer in time.'), { error: 'provider_timeout' }],
    [
      'a 5xx',
      new ProviderServerError('The payment provider failed.', { providerStatus: 502 }),
      { error: 'provider_unavailable', httpStatus: 502 },
    ],
    ['a lost connection', new ProviderConnectionLostError('The connection was lost.'), { error: 'provider_connection_lost' }],
  ])('%s: UNKNOWN (it may have happened), kept, sent once', async (_what, error, providerResponse) => {
    const { repository, client, service } = setup();
    client.answer = () => Promise.reject(error);
    const answered = await service.createInit(admin, initRequest());
    expect(answered).toMatchObject({ status: 'UNKNOWN', failureReason: error.detail });
    expect(repository.rows.get(answered.id)).toMatchObject({ status: 'UNKNOWN', providerResponse });
    expect(client.sent).toHaveLength(1);
  });

  it('an unexpected error after the call may have been sent: UNKNOWN, never removed', async () => {
    const { repository, client, service } = setup();
    client.answer = () => Promise.reject(new TypeError('boom'));
    const answered = await service.createInit(admin, initRequest());
    expect(answered).toMatchObject({ status: 'UNKNOWN', failureReason: 'The submission failed unexpectedly after it may have been sent' });
    expect(repository.rows.get(answered.id)?.providerResponse).toEqual({ error: 'internal_error' });
  });

  it.each([
    ['the agent budget is spent', new AgentBudgetExhaustedError(60)],
    ['the provider is unreachable', new ProviderUnreachableError('The payment provider could not be reached.')],
    ['our credentials are refused', new ProviderAuthenticationError()],
    ['no provider token is available', new ProviderTokenUnavailableError('No provider token.')],
  ])('not sent (%s): the error is the answer, the PENDING record is removed and its paymentId free again', async (_what, error) => {
    const { repository, client, service } = setup();
    client.answer = () => Promise.reject(error);
    const request = initRequest();
    await expect(service.createInit(admin, request)).rejects.toBe(error);
    expect(repository.rows.size).toBe(0);
    expect(repository.audits).toEqual([]);

    client.answer = async () => ({ success: true, message: 'ok' });
    await expect(service.createInit(admin, request)).resolves.toMatchObject({ status: 'ACCEPTED', paymentId: request.paymentId });
  });
});

describe('DistributionsService: before anything is sent', () => {
  it('a paymentId already used: 409 distribution_payment_id_exists naming the distribution, no provider call', async () => {
    const { client, service } = setup();
    const request = initRequest();
    const first = await service.createInit(admin, request);
    const second = service.createInit(admin, { ...request, amount: '200' });
    await expect(second).rejects.toBeInstanceOf(ConflictError);
    await expect(second).rejects.toMatchObject({ code: 'distribution_payment_id_exists', detail: expect.stringContaining(first.id) });
    expect(client.sent).toHaveLength(1);
  });

  it('every rule at once as field errors (amount for its currency, matricule once, rates to 100): nothing stored or sent', async () => {
    const { repository, client, service } = setup();
    const request = initRequest({
      amount: '10.5',
      distribution: [
        { matricule: 'MAT001', rate: 60 },
        { matricule: 'MAT001', rate: 50 },
      ],
    });
    const refused = service.createInit(admin, request);
    await expect(refused).rejects.toBeInstanceOf(ValidationFailedError);
    const { errors = [] } = (await refused.catch((error: ValidationFailedError) => error)) as ValidationFailedError;
    expect(errors.map((error) => error.field).sort()).toEqual(['amount', 'distribution', 'distribution[1].matricule']);
    expect(repository.rows.size).toBe(0);
    expect(client.sent).toEqual([]);
  });
});

describe('the idempotency key of a distribution route', () => {
  const releaseOn = (handler: 'createInit' | 'createFiat') =>
    (Reflect.getMetadata(IDEMPOTENT_METADATA, DistributionsController.prototype[handler]) as IdempotentRoute).releaseOn!;

  it.each(['createInit', 'createFiat'] as const)('%s: freed after an error proving nothing was sent', (handler) => {
    for (const error of [
      new AgentBudgetExhaustedError(60),
      new ProviderUnreachableError('unreachable'),
      new ProviderAuthenticationError(),
      new ProviderTokenUnavailableError('no token'),
    ]) {
      expect(releaseOn(handler)(error)).toBe(true);
    }
  });

  it.each(['createInit', 'createFiat'] as const)('%s: kept (the answer replayed) after anything that may have been sent', (handler) => {
    for (const error of [
      new ProviderRejectedError('success_false', { providerStatus: 400 }),
      new ProviderTimeoutError('timeout'),
      new ProviderServerError('5xx', { providerStatus: 500 }),
      new ProviderConnectionLostError('lost'),
      new TypeError('boom'),
    ]) {
      expect(releaseOn(handler)(error)).toBe(false);
    }
  });
});
