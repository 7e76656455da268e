import request from 'supertest';
import { InterruptedOperationsSweepJob } from '../../src/provider-operations/interrupted-operations-sweep.job';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { cardsClient, userWithCard } from '../support/cards-factories';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/**
 * The process dies between a provider call and the write of its answer: the work stays PENDING,
 * visible, and a sweep later declares it UNKNOWN (the provider may have acted). Simulated by
 * PENDING rows older than the interruption delay (twice the provider timeout plus a minute).
 */
describe('work interrupted between the provider call and the final write', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  const longAgo = () => new Date(Date.now() - 10 * 60_000);

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox, { PROVIDER_TIMEOUT_MS: '1000' });
  });
  afterAll(async () => {
    await service.close();
    await sandbox.close();
  });

  it('a card operation left PENDING becomes UNKNOWN, a recent one is left alone', async () => {
    const alice = await cardsClient(service);
    const { cardUser, card } = await userWithCard(alice);
    const base = {
      cardUserId: cardUser.id,
      cardId: card.id,
      requestedBy: alice.sub,
      kind: 'TOPUP' as const,
      amount: '100',
      currency: 'XAF',
      status: 'PENDING' as const,
    };
    const stale = await service.prisma.cardOperation.create({ data: { ...base, createdAt: longAgo() } });
    const recent = await service.prisma.cardOperation.create({ data: base });

    expect(await service.get(InterruptedOperationsSweepJob).sweepNow()).toBeGreaterThanOrEqual(1);
    const after = await service.prisma.cardOperation.findUniqueOrThrow({ where: { id: stale.id } });
    expect(after).toMatchObject({ status: 'UNKNOWN', failureReason: expect.stringContaining('never recorded') });
    expect(after.completedAt).not.toBeNull();
    expect((await service.prisma.cardOperation.findUniqueOrThrow({ where: { id: recent.id } })).status).toBe('PENDING');
    const seen = await request(service.server).get(`/v1/card-operations/${stale.id}`).auth(alice.token, { type: 'bearer' }).expect(200);
    expect(seen.body.status).toBe('UNKNOWN');
  });

  it('a distribution left PENDING becomes UNKNOWN', async () => {
    const stale = await service.prisma.distribution.create({
      data: { kind: 'fiat', createdBy: 'ops', payer: 'Awa', amount: '100', currency: 'XAF', status: 'PENDING', createdAt: longAgo() },
    });
    expect(await service.get(InterruptedOperationsSweepJob).sweepNow()).toBeGreaterThanOrEqual(1);
    const after = await service.prisma.distribution.findUniqueOrThrow({ where: { id: stale.id } });
    expect(after).toMatchObject({ status: 'UNKNOWN', failureReason: expect.stringContaining('never recorded') });
    const finance = await service.bearer('fin-sweep', 'finance');
    expect((await request(service.server).get(`/v1/distributions/${stale.id}`).auth(finance, { type: 'bearer' })).body.status).toBe(
      'UNKNOWN',
    );
  });
});
