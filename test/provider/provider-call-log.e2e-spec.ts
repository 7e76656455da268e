import { CardsClient } from '../../src/provider/clients/cards.client';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { cardsClient, userWithCard } from '../support/cards-factories';
import { cardUserBody } from '../support/provider-factories';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';
import { ProviderCallLog } from '../../src/provider/provider-call-log';
import { ProviderCallRepository, storableCall } from '../../src/provider/provider-call.repository';

/**
 * Every provider call has its row in the call log, even when what was sent or answered holds
 * text PostgreSQL refuses (`\u0000` in jsonb or text, a lone surrogate in jsonb): it is stored
 * with U+FFFD in its place, and the service's own records of the answer are kept the same way.
 */
describe('provider call log keeps every call', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  const calls = async (endpoint: string) => {
    await service.get(ProviderCallLog).flush();
    return service.prisma.providerCall.findMany({ where: { endpoint }, orderBy: { createdAt: 'asc' } });
  };

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox);
  });
  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
  });

  it('a batch is stored column for column: a JSON null body as JSON null, a missing body as NULL', async () => {
    const endpoint = `/batch-test/${Date.now()}`;
    const at = new Date('2026-01-02T03:04:05.678Z');
    await service.get(ProviderCallRepository).recordMany([
      storableCall(
        {
          area: 'payin',
          method: 'POST',
          endpoint,
          url: 'https://provider.example/pay?x="1"\\',
          httpStatus: 502,
          outcome: 'provider_server_error',
          errorCode: 'provider_server_error',
          durationMs: 1234,
          requestId: 'req-1',
          requestBody: { amount: '10.50', nested: [1, null, 'a"b\\c', { deep: true }], empty: {} },
          responseBody: null,
        },
        at,
      ),
      storableCall({ area: 'cards', method: 'GET', endpoint, url: 'u', outcome: 'answered', durationMs: 0 }, at),
    ]);
    const rows = await service.prisma.$queryRaw<Record<string, unknown>[]>`
      SELECT area, method, url, http_status AS "httpStatus", outcome, error_code AS "errorCode", duration_ms AS "durationMs",
             request_id AS "requestId", request_body AS "requestBody", jsonb_typeof(response_body) AS "responseBodyType",
             response_body IS NULL AS "noResponseBody", request_body IS NULL AS "noRequestBody", created_at AS "createdAt", id::text AS id
      FROM provider_calls WHERE endpoint = ${endpoint} ORDER BY area DESC`;
    expect(rows).toEqual([
      {
        area: 'payin',
        method: 'POST',
        url: 'https://provider.example/pay?x="1"\\',
        httpStatus: 502,
        outcome: 'provider_server_error',
        errorCode: 'provider_server_error',
        durationMs: 1234,
        requestId: 'req-1',
        requestBody: { amount: '10.50', nested: [1, null, 'a"b\\c', { deep: true }], empty: {} },
        responseBodyType: 'null',
        noResponseBody: false,
        noRequestBody: false,
        createdAt: at,
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      },
      {
        area: 'cards',
        method: 'GET',
        url: 'u',
        httpStatus: null,
        outcome: 'answered',
        errorCode: null,
        durationMs: 0,
        requestId: null,
        requestBody: null,
        responseBodyType: null,
        noResponseBody: true,
        noRequestBody: true,
        createdAt: at,
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      },
    ]);
    expect(rows[0].id).not.toBe(rows[1].id);
  });

  it('a body holding text jsonb refuses (NUL, a lone surrogate) is stored with U+FFFD; look-alike text is kept as it was', async () => {
    const endpoint = `/storable-test/${Date.now()}`;
    await service.get(ProviderCallRepository).recordMany([
      storableCall(
        {
          area: 'payin',
          method: 'POST',
          endpoint,
          url: 'u',
          outcome: 'answered',
          durationMs: 1,
          requestBody: { ['k\u0000ey']: 'a\u0000b', half: 'x\ud800y', low: '\udc00', pair: '\ud83d\ude00' },
          // Backslash-u written out as text: no character to replace.
          responseBody: { text: '\\u0000 and \\ud800' },
        },
        new Date(),
      ),
    ]);
    const rows = await service.prisma.$queryRaw<Record<string, unknown>[]>`
      SELECT request_body AS "requestBody", response_body AS "responseBody" FROM provider_calls WHERE endpoint = ${endpoint}`;
    expect(rows).toEqual([
      {
        requestBody: { ['k\uFFFDey']: 'a\uFFFDb', half: 'x\uFFFDy', low: '\uFFFD', pair: '\ud83d\ude00' },
        responseBody: { text: '\\u0000 and \\ud800' },
      },
    ]);
  });

  it('an answer with NUL in its JSON: the row is stored, NUL shown as U+FFFD', async () => {
    sandbox.state.injectFault({
      path: '/api/action/card/nul-card',
      rawBody: '{"error":400,"message":"bad\\u0000byte"}',
      contentType: 'application/json',
      status: 400,
    });
    const before = (await calls('cards.card.get')).length;
    await expect(service.get(CardsClient).getCard('nul-card')).rejects.toMatchObject({ providerMessage: 'bad\uFFFDbyte' });
    const rows = await calls('cards.card.get');
    expect(rows).toHaveLength(before + 1);
    expect(rows.at(-1)!.responseBody).toEqual({ error: 400, message: 'bad\uFFFDbyte' });
  });

  it('a non-JSON answer with a raw NUL and a JSON answer with a lone surrogate: both rows stored', async () => {
    sandbox.state.injectFault({ path: '/api/action/card/raw-nul', rawBody: 'broken\u0000page', status: 500 });
    sandbox.state.injectFault({
      path: '/api/action/card/surrogate',
      rawBody: '{"error":400,"message":"half \\ud800 pair"}',
      contentType: 'application/json',
      status: 400,
    });
    const before = (await calls('cards.card.get')).length;
    await expect(service.get(CardsClient).getCard('raw-nul')).rejects.toMatchObject({ code: 'provider_unavailable' });
    await expect(service.get(CardsClient).getCard('surrogate')).rejects.toMatchObject({ code: 'provider_rejected' });
    const rows = (await calls('cards.card.get')).slice(before);
    expect(rows.map((r) => r.responseBody)).toEqual([{ text: 'broken\uFFFDpage' }, { error: 400, message: 'half \uFFFD pair' }]);
  });

  it('a request body with NUL: the row is stored', async () => {
    const before = (await calls('cards.user.create')).length;
    await service.get(CardsClient).createUser(cardUserBody({ billing_city: 'Dou\u0000ala' }));
    const rows = await calls('cards.user.create');
    expect(rows).toHaveLength(before + 1);
    expect((rows.at(-1)!.requestBody as Record<string, unknown>).billing_city).toBe('Dou\uFFFDala');
  });

  it('through the API: a refusal with NUL in its message is a 422 and a stored FAILED operation, not a 500', async () => {
    const alice = await cardsClient(service);
    const { card } = await userWithCard(alice);
    sandbox.state.injectFault({
      path: `/api/action/card/transaction/${card.providerCardId}`,
      rawBody: '{"error":400,"message":"no\\u0000pe"}',
      contentType: 'application/json',
      status: 400,
    });
    const res = await alice.topUp(card.id, '100');
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'provider_rejected', operationStatus: 'FAILED' });
    expect((await alice.operation(res.body.operationId)).body).toMatchObject({ status: 'FAILED', failureReason: 'no\uFFFDpe' });
  });
});
