import request from 'supertest';
import { CardsModule } from '../../src/cards/cards.module';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

/** The card routes appear in /docs-json with their auth, their bodies and problem+json errors. */
describe('virtual cards in the OpenAPI document', () => {
  let sandbox: RunningSandbox;
  let service: TestService;
  let document: { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, any> } };

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    service = await startTestService(sandbox, {}, [CardsModule]);
    const res = await request(service.server).get('/docs-json');
    expect(res.status).toBe(200);
    document = res.body;
  });
  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
  });

  const routes: [string, string][] = [
    ['post', '/v1/card-users'],
    ['get', '/v1/card-users'],
    ['get', '/v1/card-users/{id}'],
    ['get', '/v1/card-users/{id}/operations'],
    ['post', '/v1/card-users/{id}/cards'],
    ['get', '/v1/cards'],
    ['get', '/v1/cards/{id}'],
    ['post', '/v1/cards/{id}/topup'],
    ['post', '/v1/cards/{id}/withdraw'],
    ['post', '/v1/cards/{id}/freeze'],
    ['post', '/v1/cards/{id}/unfreeze'],
    ['post', '/v1/cards/{id}/terminate'],
    ['get', '/v1/cards/{id}/transactions'],
    ['get', '/v1/cards/{id}/operations'],
    ['get', '/v1/card-operations/{id}'],
  ];

  it.each(routes)('%s %s is documented, secured by the bearer scheme, with a summary and problem+json errors', (method, path) => {
    const operation = document.paths[path]?.[method];
    expect(operation).toBeDefined();
    expect(operation.summary).toEqual(expect.any(String));
    expect(operation.security).toEqual([{ bearer: [] }]);
    expect(operation.tags).toEqual(['Virtual cards']);
    expect(operation.responses['401'].content['application/problem+json']).toBeDefined();
  });

  it('the Idempotency-Key header is required where money moves or a provider object is created, and only there', () => {
    const keyed = (method: string, path: string) =>
      (document.paths[path][method].parameters ?? []).some(
        (p: { in: string; name: string; required: boolean }) => p.in === 'header' && p.name === 'Idempotency-Key' && p.required,
      );
    for (const [method, path] of routes) {
      const expected =
        ['/v1/card-users', '/v1/card-users/{id}/cards', '/v1/cards/{id}/topup', '/v1/cards/{id}/withdraw'].includes(path) &&
        method === 'post';
      expect({ method, path, keyed: keyed(method, path) }).toEqual({ method, path, keyed: expected });
    }
  });

  it('the card-user body names our camelCase fields; the created card documents its one-time secrets', () => {
    const createUser = document.components.schemas.CreateCardUserDto;
    expect(Object.keys(createUser.properties)).toEqual(
      expect.arrayContaining([
        'firstName',
        'lastName',
        'email',
        'countryCode',
        'contact',
        'dob',
        'isBusiness',
        'billingAddress',
        'billingCity',
        'billingCountry',
        'idNumber',
        'businessName',
        'billingState',
        'billingPostalCode',
      ]),
    );
    expect(createUser.required).toEqual(expect.arrayContaining(['email', 'countryCode', 'dob', 'contact']));
    const created = document.components.schemas.CreatedCardDto;
    expect(created.properties.cardNumber.description).toMatch(/first answer only/);
    expect(created.properties.cvv.description).toMatch(/never stored/);
    expect(document.components.schemas.CardDto.properties.maskedNumber.example).toBe('**** **** **** 4242');
  });
});
