import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { cardsClient, userWithCard, type CardsClientOf } from '../support/cards-factories';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { adminCalls, auditRowsOf } from './support';

const NOTE = 'Provider statement line 4411 checked';

describe('people decide UNKNOWN card operations and distributions', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let alice: CardsClientOf;
  let admin: ReturnType<typeof adminCalls>;
  let adminToken: string;
  const adminSub = `admin_${randomUUID().slice(0, 6)}`;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox);
    alice = await cardsClient(service);
    adminToken = await service.bearer(adminSub, 'admin');
    admin = adminCalls(service, adminToken);
  });
  afterAll(async () => {
    await service.close();
    await sandbox.close();
  });
  afterEach(() => sandbox.state.clearFaults());

  /** The provider answers 500 to the next operation on this card: the operation is UNKNOWN. */
  const failNextOperation = (providerCardId: string) =>
    sandbox.state.injectFault({
      path: `/api/action/card/transaction/${providerCardId}`,
      status: 500,
      rawBody: '<html>boom</html>',
      contentType: 'text/html',
    });

  const unknownWithdrawal = async () => {
    const { card } = await userWithCard(alice);
    failNextOperation(card.providerCardId);
    const res = await alice.withdraw(card.id, '500');
    expect(res.body.operationStatus).toBe('UNKNOWN');
    return { card, operationId: res.body.operationId as string };
  };

  describe('POST /v1/card-operations/{id}/resolution', () => {
    it('UNKNOWN withdrawal → SUCCEEDED: recorded with who and why; the balance is left as last known', async () => {
      const { card, operationId } = await unknownWithdrawal();
      const before = await service.prisma.card.findUniqueOrThrow({ where: { id: card.id } });
      const res = await admin.resolveCardOperation(operationId, { status: 'SUCCEEDED', note: NOTE });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ operationId, kind: 'WITHDRAW', status: 'SUCCEEDED', failureReason: null });
      const row = await service.prisma.cardOperation.findUniqueOrThrow({ where: { id: operationId } });
      expect(row).toMatchObject({ status: 'SUCCEEDED', resolvedBy: adminSub, resolutionNote: NOTE, resolvedAt: expect.any(Date) });
      const after = await service.prisma.card.findUniqueOrThrow({ where: { id: card.id } });
      expect(after.lastKnownBalance?.toFixed()).toBe(before.lastKnownBalance?.toFixed());
      expect(after.status).toBe('ACTIVE');
      const audit = await auditRowsOf(service, operationId);
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({
        actor: adminSub,
        action: 'card_operation.resolved',
        resourceType: 'card_operation',
        note: NOTE,
        requestId: res.headers['x-request-id'],
        details: { kind: 'WITHDRAW', cardId: card.id, fromStatus: 'UNKNOWN', toStatus: 'SUCCEEDED' },
      });
    });

    it('UNKNOWN freeze → SUCCEEDED freezes the card; UNKNOWN termination → FAILED leaves it active', async () => {
      const { card } = await userWithCard(alice);
      failNextOperation(card.providerCardId);
      const freeze = await alice.freeze(card.id);
      expect(freeze.body.operationStatus).toBe('UNKNOWN');
      expect((await admin.resolveCardOperation(freeze.body.operationId, { status: 'SUCCEEDED', note: NOTE })).status).toBe(200);
      expect((await service.prisma.card.findUniqueOrThrow({ where: { id: card.id } })).status).toBe('FROZEN');

      const { card: other } = await userWithCard(alice);
      failNextOperation(other.providerCardId);
      const terminate = await alice.terminate(other.id);
      expect(terminate.body.operationStatus).toBe('UNKNOWN');
      const res = await admin.resolveCardOperation(terminate.body.operationId, { status: 'FAILED', note: NOTE });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'FAILED', failureReason: expect.stringMatching(/manual resolution/) });
      expect((await service.prisma.card.findUniqueOrThrow({ where: { id: other.id } })).status).toBe('ACTIVE');
    });

    it('anything but UNKNOWN is 409 card_operation_not_resolvable, and nothing changes', async () => {
      const { operationId } = await unknownWithdrawal();
      expect((await admin.resolveCardOperation(operationId, { status: 'FAILED', note: NOTE })).status).toBe(200);
      const again = await admin.resolveCardOperation(operationId, { status: 'SUCCEEDED', note: NOTE });
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('card_operation_not_resolvable');

      const { card } = await userWithCard(alice);
      const topUp = await alice.topUp(card.id, '100');
      expect(topUp.status).toBe(200);
      const succeeded = await admin.resolveCardOperation(topUp.body.operationId, { status: 'FAILED', note: NOTE });
      expect(succeeded.status).toBe(409);
      expect((await service.prisma.cardOperation.findUniqueOrThrow({ where: { id: topUp.body.operationId } })).status).toBe('SUCCEEDED');
      expect(await auditRowsOf(service, topUp.body.operationId)).toEqual([]);
      expect(await auditRowsOf(service, operationId)).toHaveLength(1);
    });

    it('the owner and finance get 403, a missing operation 404, a bad status 400', async () => {
      const { operationId } = await unknownWithdrawal();
      expect((await adminCalls(service, alice.token).resolveCardOperation(operationId, { status: 'SUCCEEDED', note: NOTE })).status).toBe(
        403,
      );
      expect(
        (
          await adminCalls(service, await service.bearer('fin', 'finance')).resolveCardOperation(operationId, {
            status: 'SUCCEEDED',
            note: NOTE,
          })
        ).status,
      ).toBe(403);
      expect((await admin.resolveCardOperation(randomUUID(), { status: 'SUCCEEDED', note: NOTE })).status).toBe(404);
      const bad = await admin.resolveCardOperation(operationId, { status: 'ACCEPTED', note: NOTE });
      expect(bad.status).toBe(400);
      expect(bad.body.errors.map((e: { field: string }) => e.field)).toEqual(['status']);
      expect((await service.prisma.cardOperation.findUniqueOrThrow({ where: { id: operationId } })).status).toBe('UNKNOWN');
    });

    it('a retry with the same key replays the answer', async () => {
      const { operationId } = await unknownWithdrawal();
      const key = randomUUID();
      const first = await admin.resolveCardOperation(operationId, { status: 'SUCCEEDED', note: NOTE }, key);
      const replay = await admin.resolveCardOperation(operationId, { status: 'SUCCEEDED', note: NOTE }, key);
      expect(replay.status).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(first.body);
      expect(await auditRowsOf(service, operationId)).toHaveLength(1);
    });
  });

  describe('POST /v1/distributions/{id}/resolution', () => {
    const createDistribution = (key = randomUUID()) =>
      request(service.server)
        .post('/v1/distributions')
        .auth(adminToken, { type: 'bearer' })
        .set('Idempotency-Key', key)
        .send({
          paymentReceiver: 'MAT00000001',
          paymentId: `pay_${randomUUID()}`,
          amount: '10000',
          currency: 'XAF',
          distribution: [{ matricule: 'MAT00000002', rate: '40' }],
        });
    const unknownDistribution = async () => {
      sandbox.state.injectFault({ path: '/api/agent/link/init', status: 500, rawBody: '<html>boom</html>', contentType: 'text/html' });
      const res = await createDistribution();
      expect(res.status).toBe(201);
      expect(res.body.status).toBe('UNKNOWN');
      return res.body.id as string;
    };

    it('a distribution is in the audit trail from its creation', async () => {
      const id = await unknownDistribution();
      const audit = await auditRowsOf(service, id);
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({
        actor: adminSub,
        action: 'distribution.created',
        resourceType: 'distribution',
        details: { kind: 'init', status: 'UNKNOWN', amount: '10000', currency: 'XAF' },
      });
    });

    it.each(['ACCEPTED', 'REJECTED'] as const)('UNKNOWN → %s, then 409 distribution_not_resolvable', async (status) => {
      const id = await unknownDistribution();
      const res = await admin.resolveDistribution(id, { status, note: NOTE });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id,
        status,
        failureReason: status === 'ACCEPTED' ? null : expect.stringMatching(/manual resolution/),
      });
      const row = await service.prisma.distribution.findUniqueOrThrow({ where: { id } });
      expect(row).toMatchObject({ status, resolvedBy: adminSub, resolutionNote: NOTE });
      const audit = await auditRowsOf(service, id);
      expect(audit.map((a) => a.action)).toEqual(['distribution.created', 'distribution.resolved']);
      expect(audit[1]).toMatchObject({
        actor: adminSub,
        note: NOTE,
        requestId: res.headers['x-request-id'],
        details: { kind: 'init', fromStatus: 'UNKNOWN', toStatus: status },
      });

      const again = await admin.resolveDistribution(id, { status: 'ACCEPTED', note: NOTE });
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('distribution_not_resolvable');
      expect(await auditRowsOf(service, id)).toHaveLength(2);
    });

    it('finance and customers get 403, a missing distribution 404, an order status 400, a replay replays', async () => {
      const id = await unknownDistribution();
      expect((await adminCalls(service, alice.token).resolveDistribution(id, { status: 'ACCEPTED', note: NOTE })).status).toBe(403);
      expect(
        (await adminCalls(service, await service.bearer('fin', 'finance')).resolveDistribution(id, { status: 'ACCEPTED', note: NOTE }))
          .status,
      ).toBe(403);
      expect((await admin.resolveDistribution(randomUUID(), { status: 'ACCEPTED', note: NOTE })).status).toBe(404);
      expect((await admin.resolveDistribution(id, { status: 'SUCCEEDED', note: NOTE })).status).toBe(400);
      const key = randomUUID();
      const first = await admin.resolveDistribution(id, { status: 'ACCEPTED', note: NOTE }, key);
      const replay = await admin.resolveDistribution(id, { status: 'ACCEPTED', note: NOTE }, key);
      expect(first.status).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(first.body);
      expect((await auditRowsOf(service, id)).map((a) => a.action)).toEqual(['distribution.created', 'distribution.resolved']);
    });
  });
});
