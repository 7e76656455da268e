import { randomUUID } from 'node:crypto';
import { ID_NUMBER_PURPOSE } from '../../src/cards/card-users.service';
import { SecretBox } from '../../src/common/secret-box';
import type { RunningSandbox } from '../../src/sandbox/sandbox.server';
import { cardsClient, cardUserRequest, userWithCard, type CardsClientOf } from '../support/cards-factories';
import type { TestService } from '../support/test-service';
import { useCardsService } from './cards-harness';

/** The card routes against the sandbox, asserted on the wire: see cards-harness.ts. */
describe('virtual cards end to end', () => {
  const context = useCardsService();
  const { requestsTo, expectProviderAuth } = context;
  let sandbox: RunningSandbox;
  let service: TestService;
  let alice: CardsClientOf;
  beforeAll(() => ({ sandbox, service, alice } = context));

  describe('card users', () => {
    it('POST /v1/card-users sends the provider its snake_case body (billing_adress so spelled) and stores user_id and reference', async () => {
      const body = cardUserRequest({ isBusiness: true, businessName: 'Ndiaye Trading', countryCode: 'cm' });
      const before = requestsTo('/api/action/card/user', 'POST').length;
      const res = await alice.createCardUser(body);
      expect(res.status).toBe(201);
      const sent = requestsTo('/api/action/card/user', 'POST');
      expect(sent).toHaveLength(before + 1);
      const req = sent.at(-1)!;
      expectProviderAuth(req);
      expect(req.headers['content-type']).toMatch(/^application\/json/);
      expect(req.body).toEqual({
        first_name: 'Awa',
        last_name: 'Ndiaye',
        email: body.email,
        country_code: 'CM',
        contact: '237650000000',
        dob: '1990-04-12',
        is_business: true,
        billing_adress: '12 rue de la Joie',
        billing_city: 'Douala',
        billing_country: 'CM',
        id_number: body.idNumber,
        business_name: 'Ndiaye Trading',
        billing_state: 'Littoral',
        billing_postal_code: '00237',
      });

      const providerUser = [...sandbox.state.cardUsers.values()].find((u) => u.email === body.email)!;
      expect(res.body).toMatchObject({
        id: expect.any(String),
        ownerId: alice.sub,
        providerUserId: providerUser.user_id,
        providerReference: providerUser.reference,
        firstName: 'Awa',
        email: body.email,
        countryCode: 'CM',
        isBusiness: true,
        businessName: 'Ndiaye Trading',
        billingAddress: '12 rue de la Joie',
        cardIds: [],
        providerCardIds: [],
      });
      expect(res.body).not.toHaveProperty('idNumber');
      expect(JSON.stringify(res.body)).not.toContain(String(body.idNumber));

      // The id number is stored sealed, and only the data key opens it.
      const row = await service.prisma.cardUser.findUniqueOrThrow({ where: { id: res.body.id } });
      expect(row.idNumberEncrypted).not.toContain(String(body.idNumber));
      expect(new SecretBox(service.config.dataEncryptionKey).decrypt(row.idNumberEncrypted, ID_NUMBER_PURPOSE)).toBe(body.idNumber);
    });

    it('a non-business user is sent with is_business false and an empty business_name, stored with none', async () => {
      const res = await alice.createCardUser({ isBusiness: undefined });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ isBusiness: false, businessName: null });
      expect(requestsTo('/api/action/card/user', 'POST').at(-1)!.body).toMatchObject({ is_business: false, business_name: '' });
    });

    it('GET /v1/card-users/{id} asks the provider by reference and merges its answer, card ids included', async () => {
      const { cardUser, card } = await userWithCard(alice);
      const providerUser = sandbox.state.cardUsers.get(cardUser.providerReference)!;
      providerUser.first_name = 'Aïssatou';
      providerUser.email = 'aissatou@example.com';

      const res = await alice.getCardUser(cardUser.id);
      expect(res.status).toBe(200);
      const req = requestsTo(`/api/action/card/user/${cardUser.providerReference}`, 'GET').at(-1)!;
      expectProviderAuth(req);
      expect(req.body).toBeNull();
      expect(res.body).toMatchObject({
        id: cardUser.id,
        refreshed: true,
        firstName: 'Aïssatou',
        lastName: 'Ndiaye',
        email: 'aissatou@example.com',
        cardIds: [card.id],
        providerCardIds: [card.providerCardId],
        lastSyncedAt: expect.any(String),
      });
      // Merged into what is stored, not only answered.
      const row = await service.prisma.cardUser.findUniqueOrThrow({ where: { id: cardUser.id } });
      expect(row).toMatchObject({ firstName: 'Aïssatou', email: 'aissatou@example.com', providerCardIds: [card.providerCardId] });
    });

    it('GET /v1/card-users/{id} answers the stored copy (refreshed: false) when the provider fails', async () => {
      const { body: cardUser } = await alice.createCardUser();
      sandbox.state.injectFault({ path: `/api/action/card/user/${cardUser.providerReference}`, status: 500, body: { message: 'down' } });
      const res = await alice.getCardUser(cardUser.id);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: cardUser.id, refreshed: false, firstName: 'Awa', lastSyncedAt: null });
    });

    it('GET /v1/card-users lists own card users, newest first, with cursor pagination', async () => {
      const carol = await cardsClient(service);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await carol.createCardUser()).body.id);
      const page1 = await carol.listCardUsers({ limit: '2' });
      expect(page1.status).toBe(200);
      expect(page1.body.items.map((u: { id: string }) => u.id)).toEqual([ids[2], ids[1]]);
      expect(page1.body.nextCursor).toEqual(expect.any(String));
      const page2 = await carol.listCardUsers({ limit: '2', cursor: page1.body.nextCursor });
      expect(page2.body).toEqual({ items: [expect.objectContaining({ id: ids[0], ownerId: carol.sub })], nextCursor: null });
      expect((await carol.listCardUsers({ limit: '201' })).status).toBe(400);
      expect((await carol.listCardUsers({ limit: '0' })).status).toBe(400);
      expect((await carol.listCardUsers({ cursor: 'garbage' })).status).toBe(400);
    });

    it('a replayed card-user creation (same Idempotency-Key) does not ask the provider twice', async () => {
      const key = randomUUID();
      const body = cardUserRequest();
      const before = requestsTo('/api/action/card/user', 'POST').length;
      const first = await alice.createCardUser(body, key);
      const again = await alice.createCardUser(body, key);
      expect(again.status).toBe(201);
      expect(again.body).toEqual(first.body);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(requestsTo('/api/action/card/user', 'POST')).toHaveLength(before + 1);
    });
  });
});
