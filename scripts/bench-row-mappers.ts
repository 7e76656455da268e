/**
 * `node -r @swc-node/register scripts/bench-row-mappers.ts`: the mappers defineRow derives against the
 * hand-written ones they replaced, over 1e6 rows each (ADR 0007). Each pair runs alternately, three
 * times, after a warm-up; the median ns per row is printed.
 */
import { defineRow, pickFields } from '../src/database/row-declaration';
import { column } from '../src/database/sql-statement';

const ROWS = 1_000_000;
const now = new Date();

// A card operation beside its card (the old toOperation copied it field by field).
const OPERATION = defineRow({
  id: column.uuid.from('id'),
  cardUserId: column.uuid.from('card_user_id'),
  cardId: column.uuid.orNull.from('card_id'),
  ownerId: column.text.from('owner_id'),
  requestedBy: column.text.from('requested_by'),
  kind: column.text.from('kind'),
  amount: column.text.orNull.from('amount'),
  currency: column.text.orNull.from('currency'),
  status: column.text.from('status'),
  providerTransactionId: column.text.orNull.from('provider_transaction_id'),
  newBalance: column.text.orNull.from('new_balance'),
  providerResponse: column.jsonb.orNull.from('provider_response'),
  failureReason: column.text.orNull.from('failure_reason'),
  createdAt: column.timestamptz.from('created_at'),
  completedAt: column.timestamptz.orNull.from('completed_at'),
});
type OperationRow = Parameters<typeof OPERATION.pick>[0];
const operationRow = (i: number) => ({
  id: `op-${i}`,
  cardUserId: 'u',
  cardId: 'c',
  ownerId: 'owner',
  requestedBy: 'owner',
  kind: 'TOPUP',
  amount: '10',
  currency: 'USD',
  status: 'SUCCEEDED',
  providerTransactionId: 't',
  newBalance: '20',
  providerResponse: null,
  failureReason: null,
  createdAt: now,
  completedAt: now,
  'card.id': 'c',
});
function toOperation(row: OperationRow) {
  return {
    id: row.id,
    cardUserId: row.cardUserId,
    cardId: row.cardId,
    ownerId: row.ownerId,
    requestedBy: row.requestedBy,
    kind: row.kind,
    amount: row.amount,
    currency: row.currency,
    status: row.status,
    providerTransactionId: row.providerTransactionId,
    newBalance: row.newBalance,
    providerResponse: row.providerResponse,
    failureReason: row.failureReason,
    createdAt: row.createdAt,
    completedAt: row.completedAt,
  };
}

// An order's change: the old mapper spread the row to read its bigint id.
const CHANGE = defineRow({
  id: column.int8.from('id').as(BigInt),
  orderId: column.text.from('order_id'),
  fromStatus: column.text.orNull.from('from_status'),
  toStatus: column.text.from('to_status'),
  reason: column.text.from('reason'),
  detail: column.text.orNull.from('detail'),
  callbackId: column.text.orNull.from('callback_id'),
  actor: column.text.orNull.from('actor'),
  note: column.text.orNull.from('note'),
  at: column.timestamptz.from('at'),
});
const changeRow = (i: number) => ({
  id: String(1000 + i),
  orderId: 'o',
  fromStatus: 'PENDING',
  toStatus: 'PROCESSING',
  reason: 'provider_accepted',
  detail: null,
  callbackId: null,
  actor: null,
  note: null,
  at: now,
});
const withBigIntId = (row: ReturnType<typeof changeRow>) => ({ ...row, id: BigInt(row.id) });

// The submission columns of an order (the old withoutChange: a rest spread dropping four columns).
const SUBMISSION = defineRow(
  pickFields(
    {
      status: column.text.from('status'),
      providerReference: column.text.orNull.from('provider_reference'),
      providerTransactionReference: column.text.orNull.from('provider_transaction_reference'),
      failureReason: column.text.orNull.from('failure_reason'),
      needsReview: column.bool.from('needs_review'),
      submittedAt: column.timestamptz.orNull.from('submitted_at'),
      processingSince: column.timestamptz.orNull.from('processing_since'),
      updatedAt: column.timestamptz.from('updated_at'),
    },
    [
      'status',
      'providerReference',
      'providerTransactionReference',
      'failureReason',
      'needsReview',
      'submittedAt',
      'processingSince',
      'updatedAt',
    ],
  ),
);
const submissionRow = (i: number) => ({
  status: 'PROCESSING',
  providerReference: `p${i}`,
  providerTransactionReference: 't',
  failureReason: null,
  needsReview: false,
  submittedAt: now,
  processingSince: now,
  updatedAt: now,
  changeId: '1',
  changeAt: now,
  notified: true,
  answerStored: true,
});
function withoutChange(row: ReturnType<typeof submissionRow>) {
  const { changeId: _a, changeAt: _b, notified: _c, answerStored: _d, ...order } = row;
  return order;
}

function time<R>(rows: R[], map: (row: R) => unknown): number {
  let sink = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < rows.length; i++) if (map(rows[i]) !== undefined) sink++;
  const ns = Number(process.hrtime.bigint() - start) / rows.length;
  if (sink !== rows.length) throw new Error('lost a row');
  return ns;
}

function compare<R>(name: string, make: (i: number) => R, old: (row: R) => unknown, derived: (row: R) => unknown): void {
  const rows = Array.from({ length: ROWS }, (_, i) => make(i));
  time(rows.slice(0, 100_000), old);
  time(rows.slice(0, 100_000), derived);
  const olds: number[] = [];
  const news: number[] = [];
  for (let run = 0; run < 3; run++) {
    olds.push(time(rows, old));
    news.push(time(rows, derived));
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[1];
  console.log(`${name}: hand-written ${median(olds).toFixed(1)} ns/row, derived ${median(news).toFixed(1)} ns/row`);
}

compare('card operation (15 fields, copied out of an operation+card row)', operationRow, toOperation, OPERATION.pick);
compare('order change (10 fields, int8 -> bigint)', changeRow, withBigIntId, CHANGE.read);
compare('order submission columns (8 of 12)', submissionRow, withoutChange, SUBMISSION.pick);
compare('card (identity: nothing converts)', operationRow, (row) => row, OPERATION.read);
