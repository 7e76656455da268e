import { Injectable } from '@nestjs/common';
import { appendAuditEvent } from '../audit/audit.repository';
import type { NewAuditEvent } from '../audit/audit.types';
import { Database } from '../database/database';
import { column, sqlStatement, type RowOf } from '../database/sql-statement';
import type { BlockingOperation, CustomerFootprint, ErasureCounts, ErasureRecord } from './customer-erasure.types';

const repository = 'customer-erasure.repository';

const ERASURE_COLUMNS = {
  id: column.uuid,
  subject: column.text,
  status: column.enum('CustomerErasureStatus', ['PENDING', 'DONE'] as const),
  requestedBy: column.text,
  note: column.text,
  requestId: column.text.orNull,
  counts: column.jsonb.orNull,
  createdAt: column.timestamptz,
  completedAt: column.timestamptz.orNull,
};
const RETURNING = `id, subject, status, requested_by AS "requestedBy", note, request_id AS "requestId", counts,
  created_at AS "createdAt", completed_at AS "completedAt"`;

/** Asked by this instance, which holds it for `$6` seconds while it works through it. */
const INSERT = sqlStatement(
  repository,
  'request',
  'customer_erasures_insert',
  `
  INSERT INTO customer_erasures (id, subject, requested_by, note, request_id, lease_until)
  VALUES ($1::uuid, $2::text, $3::text, $4::text, $5::text, now() + make_interval(secs => $6::int))
  RETURNING ${RETURNING}`,
  ERASURE_COLUMNS,
);

const LATEST = sqlStatement(
  repository,
  'latest',
  'customer_erasures_latest',
  `
  SELECT ${RETURNING} FROM customer_erasures WHERE subject = $1::text ORDER BY created_at DESC LIMIT 1`,
  ERASURE_COLUMNS,
);

/** A PENDING erasure whose lease lapsed (its instance died, or never began): taken over for `$1` seconds. */
const TAKE_OVER = sqlStatement(
  repository,
  'takeOverLapsed',
  'customer_erasures_take_over',
  `
  UPDATE customer_erasures SET lease_until = now() + make_interval(secs => $1::int)
  WHERE id = (SELECT id FROM customer_erasures WHERE status = 'PENDING' AND (lease_until IS NULL OR lease_until < now())
              ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
  RETURNING ${RETURNING}`,
  ERASURE_COLUMNS,
);

const RENEW = sqlStatement(
  repository,
  'renewLease',
  'customer_erasures_renew',
  `
  UPDATE customer_erasures SET lease_until = now() + make_interval(secs => $2::int) WHERE id = $1::uuid AND status = 'PENDING'`,
);

const FINISH = sqlStatement(
  repository,
  'finish',
  'customer_erasures_finish',
  `
  UPDATE customer_erasures SET status = 'DONE', counts = $2::jsonb, completed_at = now(), lease_until = NULL
  WHERE id = $1::uuid AND status = 'PENDING'
  RETURNING ${RETURNING}`,
  ERASURE_COLUMNS,
);

/** What stops an erasure: the customer's operations whose outcome is still open (at most 100 named). */
const BLOCKING = sqlStatement(
  repository,
  'blockingOperations',
  'customer_erasure_blocking',
  `
  WITH links AS (SELECT matricule FROM wallet_links WHERE owner_id = $1::text AND matricule IS NOT NULL)
  SELECT 'order' AS type, id::text AS id, status::text AS status FROM orders
  WHERE customer_id = $1::text AND status IN ('PENDING', 'PROCESSING', 'UNKNOWN')
  UNION ALL
  SELECT 'card_operation', o.id::text, o.status::text FROM card_operations o JOIN card_users u ON u.id = o.card_user_id
  WHERE u.owner_id = $1::text AND o.status IN ('PENDING', 'UNKNOWN')
  UNION ALL
  SELECT 'wallet_link', id::text, status::text FROM wallet_links
  WHERE owner_id = $1::text AND status = 'PENDING' AND claim_expires_at > now()
  UNION ALL
  SELECT 'distribution', d.id::text, d.status::text FROM distributions d
  WHERE d.status IN ('PENDING', 'UNKNOWN')
    AND d.id IN (SELECT id FROM distributions WHERE payment_receiver IN (SELECT matricule FROM links)
                 UNION SELECT distribution_id FROM distribution_shares WHERE matricule IN (SELECT matricule FROM links))
  LIMIT 100`,
  { type: column.text, id: column.text, status: column.text },
);

const ORDERS_OF = sqlStatement(
  repository,
  'footprint',
  'customer_erasure_orders',
  `
  SELECT id::text AS id, payer, payer_email AS "payerEmail", wallet FROM orders WHERE customer_id = $1::text`,
  { id: column.text, payer: column.text, payerEmail: column.text, wallet: column.text },
);

const CARD_USERS_OF = sqlStatement(
  repository,
  'footprint',
  'customer_erasure_card_users',
  `
  SELECT u.id::text AS id, u.first_name AS "firstName", u.last_name AS "lastName", u.email, u.contact, u.dob,
         u.billing_address AS "billingAddress", u.billing_city AS "billingCity", u.billing_state AS "billingState",
         u.billing_postal_code AS "billingPostalCode", u.billing_country AS "billingCountry", u.business_name AS "businessName",
         u.id_number_encrypted AS "idNumberEncrypted",
         ARRAY(SELECT o.id::text FROM card_operations o WHERE o.card_user_id = u.id) AS "operationIds"
  FROM card_users u WHERE u.owner_id = $1::text`,
  {
    id: column.text,
    firstName: column.text,
    lastName: column.text,
    email: column.text,
    contact: column.text,
    dob: column.varchar,
    billingAddress: column.text,
    billingCity: column.text,
    billingState: column.text,
    billingPostalCode: column.text,
    billingCountry: column.text,
    businessName: column.text.orNull,
    idNumberEncrypted: column.text,
    operationIds: column.textArray,
  },
);

const WALLET_LINKS_OF = sqlStatement(
  repository,
  'footprint',
  'customer_erasure_wallet_links',
  `
  SELECT id::text AS id, email, phone, matricule FROM wallet_links WHERE owner_id = $1::text`,
  { id: column.text, email: column.text, phone: column.text, matricule: column.text.orNull },
);

const DISTRIBUTIONS_PAYING = sqlStatement(
  repository,
  'footprint',
  'customer_erasure_distributions',
  `
  SELECT id::text AS id FROM distributions WHERE payment_receiver = ANY($1::text[])
  UNION SELECT distribution_id::text FROM distribution_shares WHERE matricule = ANY($1::text[])`,
  { id: column.text },
);

/** The records themselves: the mark in every personal column of the customer's rows ($2 the mark). */
const MARK_ORDERS = sqlStatement(
  repository,
  'markRecords',
  'customer_erasure_mark_orders',
  `
  UPDATE orders SET payer = $2::text, payer_email = $2::text, wallet = $2::text
  WHERE customer_id = $1::text AND (payer <> $2::text OR payer_email <> $2::text OR wallet <> $2::text)`,
);

/** `$3`: the mark sealed for the identity number column. */
const MARK_CARD_USERS = sqlStatement(
  repository,
  'markRecords',
  'customer_erasure_mark_card_users',
  `
  UPDATE card_users SET first_name = $2::text, last_name = $2::text, email = $2::text, contact = $2::text, dob = $2::text,
    billing_address = $2::text, billing_city = $2::text, billing_state = $2::text, billing_postal_code = $2::text,
    billing_country = $2::text, business_name = CASE WHEN business_name IS NULL THEN NULL ELSE $2::text END,
    id_number_encrypted = $3::text
  WHERE owner_id = $1::text AND (first_name <> $2::text OR last_name <> $2::text OR email <> $2::text OR contact <> $2::text
    OR dob <> $2::text OR billing_address <> $2::text OR billing_city <> $2::text OR billing_state <> $2::text
    OR billing_postal_code <> $2::text OR billing_country <> $2::text OR business_name <> $2::text)`,
);

/** The email key is cleared: the email may be linked again, by whoever owns it now. */
const MARK_WALLET_LINKS = sqlStatement(
  repository,
  'markRecords',
  'customer_erasure_mark_wallet_links',
  `
  UPDATE wallet_links SET email = $2::text, email_key = NULL, phone = $2::text
  WHERE owner_id = $1::text AND (email <> $2::text OR phone <> $2::text OR email_key IS NOT NULL)`,
);

const toRecord = (row: RowOf<typeof ERASURE_COLUMNS>): ErasureRecord => ({
  ...row,
  counts: row.counts !== null && typeof row.counts === 'object' ? (row.counts as ErasureCounts) : null,
});

/** The erasures, what blocks one, where a customer's data is, and the records' own columns. */
@Injectable()
export class CustomerErasureRepository {
  constructor(private readonly database: Database) {}

  async blockingOperations(subject: string): Promise<BlockingOperation[]> {
    return this.database.run(BLOCKING, [subject]);
  }

  async request(
    erasure: { id: string; subject: string; requestedBy: string; note: string; requestId: string | null },
    leaseSeconds: number,
  ) {
    const [row] = await this.database.run(INSERT, [
      erasure.id,
      erasure.subject,
      erasure.requestedBy,
      erasure.note,
      erasure.requestId,
      leaseSeconds,
    ]);
    return toRecord(row);
  }

  async latest(subject: string): Promise<ErasureRecord | undefined> {
    const [row] = await this.database.run(LATEST, [subject]);
    return row && toRecord(row);
  }

  async takeOverLapsed(leaseSeconds: number): Promise<ErasureRecord | undefined> {
    const [row] = await this.database.run(TAKE_OVER, [leaseSeconds]);
    return row && toRecord(row);
  }

  async renewLease(id: string, leaseSeconds: number): Promise<void> {
    await this.database.runCounted(RENEW, [id, leaseSeconds]);
  }

  /** The customer's rows and the personal values they hold (the identity numbers still sealed). */
  async footprint(subject: string): Promise<CustomerFootprint> {
    const orders = await this.database.run(ORDERS_OF, [subject]);
    const cardUsers = await this.database.run(CARD_USERS_OF, [subject]);
    const links = await this.database.run(WALLET_LINKS_OF, [subject]);
    const matricules = links.flatMap((link) => (link.matricule === null ? [] : [link.matricule]));
    const distributions = matricules.length ? await this.database.run(DISTRIBUTIONS_PAYING, [matricules]) : [];
    return {
      orderIds: orders.map((order) => order.id),
      cardUserIds: cardUsers.map((user) => user.id),
      cardOperationIds: cardUsers.flatMap((user) => user.operationIds),
      distributionIds: distributions.map((distribution) => distribution.id),
      sealedIdNumbers: cardUsers.map((user) => user.idNumberEncrypted),
      distinctiveValues: [
        ...orders.flatMap((order) => [order.payer, order.payerEmail, order.wallet]),
        ...cardUsers.flatMap((user) => [
          `${user.firstName} ${user.lastName}`,
          user.email,
          user.contact,
          user.billingAddress,
          user.businessName ?? '',
        ]),
        ...links.flatMap((link) => [link.email, link.phone]),
      ],
      contextValues: cardUsers.flatMap((user) => [
        user.firstName,
        user.lastName,
        user.dob,
        user.billingCity,
        user.billingState,
        user.billingPostalCode,
        user.billingCountry,
      ]),
    };
  }

  /**
   * The records' personal columns get the mark, the erasure becomes DONE with its counts, and the
   * audit trail says so: one transaction, so that DONE never shows with a record left as it was.
   */
  async markRecordsAndFinish(
    erasure: { id: string; subject: string; mark: string; sealedMark: string },
    bodyCounts: ErasureCounts,
    audit: (counts: ErasureCounts) => NewAuditEvent,
  ): Promise<ErasureRecord | undefined> {
    return this.database.inTransaction(async (run) => {
      const counts: ErasureCounts = {
        ...bodyCounts,
        orders: (await run(MARK_ORDERS, [erasure.subject, erasure.mark])).count,
        card_users: (await run(MARK_CARD_USERS, [erasure.subject, erasure.mark, erasure.sealedMark])).count,
        wallet_links: (await run(MARK_WALLET_LINKS, [erasure.subject, erasure.mark])).count,
      };
      const {
        rows: [done],
      } = await run(FINISH, [erasure.id, JSON.stringify(counts)]);
      if (!done) return undefined;
      await appendAuditEvent(run, audit(counts));
      return toRecord(done);
    });
  }
}
