import { execFile } from 'node:child_process';
import { createCipheriv, randomBytes, randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { ConfigService } from '@nestjs/config';
import request from 'supertest';
import { mintToken } from '../../src/auth/token-minter';
import { ID_NUMBER_PURPOSE } from '../../src/cards/card-users.service';
import { SecretBox, secretKeyId } from '../../src/common/secret-box';
import { loadAppConfig, type AppConfig } from '../../src/config/app-config';
import { Database } from '../../src/database/database';
import { reencryptSealedValues } from '../../src/key-rotation/reencrypt-sealed-values';
import { SEALED_COLUMNS, SealedValuesRepository } from '../../src/key-rotation/sealed-values.repository';
import { CallbackUrlsService } from '../../src/orders/callback-urls.service';
import { TEST_WALLETS, type RunningSandbox } from '../../src/sandbox/sandbox.server';
import { WalletLinksService } from '../../src/wallet-links/wallet-links.service';
import { WebhookEndpointsService } from '../../src/webhooks/webhook-endpoints.service';
import { apiUser, uniqueLinkEmail } from '../wallet-links/link-hosts';
import { cardsClient } from '../support/cards-factories';
import { customer } from '../support/orders-client';
import { databaseOfItsOwn } from '../support/database-of-its-own';
import { orderRequest } from '../support/provider-factories';
import { startTestSandbox, startTestService, type TestService } from '../support/test-service';

const ROOT = resolve(__dirname, '../..');
const run = promisify(execFile);

/** Three generations of every secret: the test rotates from the first to the second, then the data key to the third. */
const CALLBACK = ['callback-signing-secret-one-0123456789abcdef', 'callback-signing-secret-two-0123456789abcdef'];
const JWT = ['bearer-token-secret-one-0123456789abcdefghij', 'bearer-token-secret-two-0123456789abcdefghij'];
const DATA_KEYS = [randomBytes(32), randomBytes(32), randomBytes(32)];
const b64 = (key: Buffer) => key.toString('base64');

const BEFORE = { CALLBACK_SIGNING_SECRET: CALLBACK[0], AUTH_JWT_SECRET: JWT[0], DATA_ENCRYPTION_KEY: b64(DATA_KEYS[0]) };
const DURING = {
  CALLBACK_SIGNING_SECRET: CALLBACK[1],
  CALLBACK_SIGNING_PREVIOUS_SECRETS: CALLBACK[0],
  AUTH_JWT_SECRET: JWT[1],
  AUTH_JWT_PREVIOUS_SECRETS: JWT[0],
  DATA_ENCRYPTION_KEY: b64(DATA_KEYS[1]),
  DATA_ENCRYPTION_PREVIOUS_KEYS: b64(DATA_KEYS[0]),
};
/** The data key rotated once more (to test a stopped re-encryption), the previous ones still listed. */
const THIRD = {
  ...DURING,
  DATA_ENCRYPTION_KEY: b64(DATA_KEYS[2]),
  DATA_ENCRYPTION_PREVIOUS_KEYS: `${b64(DATA_KEYS[1])},${b64(DATA_KEYS[0])}`,
};
/** Every previous key removed. */
const AFTER = { CALLBACK_SIGNING_SECRET: CALLBACK[1], AUTH_JWT_SECRET: JWT[1], DATA_ENCRYPTION_KEY: b64(DATA_KEYS[2]) };

/** What the service stored before key ids existed: `v1.<iv>.<tag>.<ciphertext>`. */
function sealedWithoutKeyId(key: Buffer, plaintext: string, purpose: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(purpose));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
}

describe('rotating every secret with orders, wallet links and tokens in flight', () => {
  let sandbox: RunningSandbox;
  let database: { url: string; drop: () => Promise<void> };
  let service: TestService | undefined;

  /** What was made under the first generation of keys. */
  const made = {
    bearer: '',
    paidOrder: { id: '', successPath: '' },
    failedOrder: { id: '', failurePath: '' },
    idempotent: { key: randomUUID(), body: orderRequest({ wallet: TEST_WALLETS.NO_CALLBACK }), orderId: '' },
    walletLink: { id: '', apikey: '' },
    cardUsers: [] as { id: string; idNumber: string }[],
    webhook: { id: '', secrets: [] as string[] },
    providerTokens: 0,
  };

  const start = async (env: Record<string, string>) => {
    await service?.close();
    service = await startTestService(sandbox, { DATABASE_URL: database.url, ...env });
    return service;
  };
  const sql = <T>(text: string, ...values: unknown[]) => service!.prisma.$queryRawUnsafe<T[]>(text, ...values);
  const pathOf = (url: string) => new URL(url).pathname + new URL(url).search;
  const keysRencrypt = (env: Record<string, string>, ...args: string[]) =>
    run(process.execPath, ['-r', '@swc-node/register', 'src/key-rotation/keys-reencrypt.cli.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, NODE_ENV: 'test', DATABASE_URL: database.url, PROVIDER_BASE_URL: sandbox.url, ...env },
    });
  /** Every sealed value of the database, by column. */
  const sealedValues = async () => {
    const values: Record<string, string[]> = {};
    for (const { table, column, name } of SEALED_COLUMNS) {
      const rows = await sql<{ sealed: string }>(`SELECT ${column} AS sealed FROM ${table} WHERE ${column} IS NOT NULL`);
      values[name] = rows.map((row) => row.sealed);
    }
    return values;
  };
  /** Every stored value (wallet-link apikey, provider token, identity numbers, webhook secrets) opened by the running service. */
  const expectEverythingReadable = async (box: SecretBox) => {
    expect(await service!.get(WalletLinksService).apikeyOf(made.walletLink.id)).toBe(made.walletLink.apikey);
    for (const { id, idNumber } of made.cardUsers) {
      const [row] = await sql<{ sealed: string }>('SELECT id_number_encrypted AS sealed FROM card_users WHERE id = $1::uuid', id);
      expect(box.decrypt(row.sealed, ID_NUMBER_PURPOSE)).toBe(idNumber);
    }
    expect((await service!.get(WebhookEndpointsService).signingTarget(made.webhook.id))?.secrets).toEqual(made.webhook.secrets);
    // The stored provider token is opened and used: a new order is paid in without asking the provider for another.
    const order = await (await customer(service!)).createOrder({ wallet: TEST_WALLETS.NO_CALLBACK });
    expect(order.status).toBe(201);
    expect(sandbox.state.tokens.size).toBe(made.providerTokens);
  };

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    // Its own: the re-encryption goes over every row of every sealed column, and the other files' rows are sealed with the development key.
    database = await databaseOfItsOwn('key_rotation');
  });
  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
    await database?.drop();
  });

  it('before the rotation: pay-ins awaiting their callbacks, an idempotent order, a wallet link, card users, a webhook endpoint and a bearer token', async () => {
    const s = await start(BEFORE);
    const alice = await customer(s);
    made.bearer = alice.token;
    const orders = [];
    for (let i = 0; i < 2; i++) {
      const res = await alice.createOrder({ wallet: TEST_WALLETS.NO_CALLBACK });
      expect(res.body.status).toBe('PROCESSING');
      orders.push({ id: res.body.id as string, ...s.get(CallbackUrlsService).urlsFor(res.body.id) });
    }
    made.paidOrder = { id: orders[0].id, successPath: pathOf(orders[0].successUrl) };
    made.failedOrder = { id: orders[1].id, failurePath: pathOf(orders[1].failureUrl) };
    const first = await alice.createOrder(made.idempotent.body, made.idempotent.key);
    expect(first.status).toBe(201);
    made.idempotent.orderId = first.body.id;

    const linker = await apiUser(s);
    const email = uniqueLinkEmail('rotation');
    const link = await linker.createLink({ email, phone: '650000001', phoneCountry: '+237' });
    expect(link.status).toBe(201);
    made.walletLink = { id: link.body.id, apikey: sandbox.state.walletLinks.get(email)!.apikey };

    const cards = await cardsClient(s);
    for (let i = 0; i < 2; i++) {
      const idNumber = `ID${randomUUID().replace(/-/g, '').slice(0, 10).toUpperCase()}`;
      const res = await cards.createCardUser({ idNumber });
      expect(res.status).toBe(201);
      made.cardUsers.push({ id: res.body.id, idNumber });
    }
    // The second one as the service stored it before key ids: a v1 value, which names no key.
    await sql(
      'UPDATE card_users SET id_number_encrypted = $2 WHERE id = $1::uuid',
      made.cardUsers[1].id,
      sealedWithoutKeyId(DATA_KEYS[0], made.cardUsers[1].idNumber, ID_NUMBER_PURPOSE),
    );

    const admin = await s.bearer(`adm_${randomUUID().slice(0, 8)}`, 'admin');
    const endpoint = await request(s.server)
      .post('/v1/webhook-endpoints')
      .auth(admin, { type: 'bearer' })
      .send({ url: 'https://127.0.0.1:9/hooks/rotation', events: ['order.review_needed'] });
    expect(endpoint.status).toBe(201);
    const rotated = await request(s.server).post(`/v1/webhook-endpoints/${endpoint.body.id}/rotate-secret`).auth(admin, { type: 'bearer' });
    expect(rotated.status).toBe(200);
    made.webhook = { id: endpoint.body.id, secrets: [rotated.body.secret, endpoint.body.secret] };
    made.providerTokens = sandbox.state.tokens.size;
    expect(made.providerTokens).toBe(1);

    const oldKeyId = secretKeyId(DATA_KEYS[0]);
    for (const [column, values] of Object.entries(await sealedValues())) {
      expect([column, values.every((v) => v.startsWith(`v2.${oldKeyId}.`) || v.startsWith('v1.'))]).toEqual([column, true]);
    }
  });

  it('after the rotation (new keys current, the old ones previous): callbacks apply, tokens are accepted, every secret opens, a retry replays', async () => {
    const s = await start(DURING);
    // The provider calls back for the orders created before the change.
    const paid = await request(s.server).post(made.paidOrder.successPath).send({ status: 'SUCCESS' });
    expect(paid.status).toBe(200);
    const failed = await request(s.server).post(made.failedOrder.failurePath).send({ status: 'FAILED' });
    expect(failed.status).toBe(200);
    const results = await sql<{ result: string }>(
      'SELECT result::text AS result FROM provider_callbacks WHERE id = ANY($1::uuid[]) ORDER BY received_at',
      [paid.body.callbackId, failed.body.callbackId],
    );
    expect(results.map((r) => r.result)).toEqual(['APPLIED', 'APPLIED']);

    // A bearer token signed with the old secret is still accepted.
    const order = await request(s.server).get(`/v1/orders/${made.paidOrder.id}`).auth(made.bearer, { type: 'bearer' });
    expect(order.status).toBe(200);
    expect(order.body.status).toBe('SUCCEEDED');
    expect((await request(s.server).get(`/v1/orders/${made.failedOrder.id}`).auth(made.bearer, { type: 'bearer' })).body.status).toBe(
      'FAILED',
    );

    // The same Idempotency-Key and body, fingerprinted under the old data key, replays.
    const retry = await request(s.server)
      .post('/v1/orders')
      .auth(made.bearer, { type: 'bearer' })
      .set('Idempotency-Key', made.idempotent.key)
      .send(made.idempotent.body);
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body.id).toBe(made.idempotent.orderId);

    await expectEverythingReadable(new SecretBox(DATA_KEYS[1], [DATA_KEYS[0]]));
    // New tokens and URLs are signed with the new secrets only.
    const fresh = s.get(CallbackUrlsService).urlsFor(made.paidOrder.id).successUrl;
    expect(fresh).not.toBe(
      new CallbackUrlsService(new ConfigService({ ...s.config, callbackSigningSecret: CALLBACK[0] })).urlsFor(made.paidOrder.id).successUrl,
    );
  });

  it('npm run keys:reencrypt, while the service runs, re-seals every value under the current key and prints its counts; a second run re-seals 0', async () => {
    const { stdout } = await keysRencrypt(DURING, '--batch-size=1');
    expect(stdout).toContain('wallet_links.apikey_encrypted: 1 re-sealed');
    expect(stdout).toContain('provider_tokens.token_encrypted: 1 re-sealed');
    expect(stdout).toContain('card_users.id_number_encrypted: 2 re-sealed');
    expect(stdout).toContain('webhook_endpoints.secret_encrypted: 1 re-sealed');
    expect(stdout).toContain('webhook_endpoints.previous_secret_encrypted: 1 re-sealed');
    expect(stdout).toContain(`re-sealed: 6 (current key id ${secretKeyId(DATA_KEYS[1])})`);
    expect(stdout).not.toContain(made.walletLink.apikey);
    const currentPrefix = `v2.${secretKeyId(DATA_KEYS[1])}.`;
    for (const [column, values] of Object.entries(await sealedValues())) {
      expect([column, values.length > 0 && values.every((v) => v.startsWith(currentPrefix))]).toEqual([column, true]);
    }
    // The running service still opens everything.
    await expectEverythingReadable(new SecretBox(DATA_KEYS[1]));

    const again = await keysRencrypt(DURING);
    expect(again.stdout).toContain('re-sealed: 0');
    expect(again.stdout).toContain('DATA_ENCRYPTION_PREVIOUS_KEYS can be removed');
  });

  it('a re-encryption stopped after its first batch keeps what it did; the next run does the rest, never overwriting a concurrent write', async () => {
    const s = await start(THIRD);
    const config = loadAppConfig({ NODE_ENV: 'test', PROVIDER_BASE_URL: sandbox.url, ...THIRD, DATABASE_URL: database.url });
    const prisma = new Database(new ConfigService<AppConfig, true>(config));
    const repository = new SealedValuesRepository(prisma);
    const box = new SecretBox(config.dataEncryptionKey, config.dataEncryptionPreviousKeys);
    const currentPrefix = `v2.${box.currentKeyId}.`;
    const notCurrent = async () =>
      Object.values(await sealedValues())
        .flat()
        .filter((v) => !v.startsWith(currentPrefix)).length;
    try {
      expect(await notCurrent()).toBe(6);
      const stop = new Error('stopped');
      await expect(
        reencryptSealedValues(repository, box, {
          batchSize: 1,
          afterBatch: () => {
            throw stop;
          },
        }),
      ).rejects.toBe(stop);
      expect(await notCurrent()).toBe(5);

      // A running instance rewrites a value between the read and the write: the stale write is refused.
      const [walletLinks] = SEALED_COLUMNS;
      const [other] = await repository.batch(SEALED_COLUMNS[2], currentPrefix, undefined, 1);
      expect(
        await repository.reseal(SEALED_COLUMNS[2], [{ key: other.key, sealed: `${other.sealed}stale`, resealed: 'overwritten' }]),
      ).toBe(0);
      expect(await repository.batch(walletLinks, currentPrefix, undefined, 10)).toEqual([]);

      const results = await reencryptSealedValues(repository, box, { batchSize: 2 });
      expect(results.map((r) => [r.column, r.resealed, r.batches])).toEqual([
        ['wallet_links.apikey_encrypted', 0, 0],
        ['provider_tokens.token_encrypted', 1, 1],
        ['card_users.id_number_encrypted', 2, 1],
        ['webhook_endpoints.secret_encrypted', 1, 1],
        ['webhook_endpoints.previous_secret_encrypted', 1, 1],
      ]);
      expect(await notCurrent()).toBe(0);
      expect(Object.values(await sealedValues()).flat()).not.toContain('overwritten');
    } finally {
      await prisma.onApplicationShutdown();
    }
    expect(s.config.dataEncryptionKey).toEqual(DATA_KEYS[2]);
  });

  it('with every previous key removed, everything still opens; what only the old keys signed is refused', async () => {
    const s = await start(AFTER);
    await expectEverythingReadable(new SecretBox(DATA_KEYS[2]));
    const newBearer = await mintToken({ sub: 'cust_after', roles: ['customer'], ttl: '1h', secret: JWT[1] });
    expect((await request(s.server).get('/v1/orders').auth(newBearer, { type: 'bearer' })).status).toBe(200);
    expect((await request(s.server).get('/v1/orders').auth(made.bearer, { type: 'bearer' })).status).toBe(401);
    // A callback URL signed with the removed secret no longer opens anything.
    expect((await request(s.server).post(made.paidOrder.successPath).send({ status: 'SUCCESS' })).status).toBe(404);
  });
});
