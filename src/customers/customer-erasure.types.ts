/** Domain shapes of a customer's erasure; the repository's rows stay inside it. */

export const ERASURE_STATUSES = ['PENDING', 'DONE'] as const;
export type ErasureStatus = (typeof ERASURE_STATUSES)[number];

/** Rows replaced, per table (the register's tables). */
export type ErasureCounts = Record<string, number>;

export interface ErasureRecord {
  id: string;
  subject: string;
  status: ErasureStatus;
  requestedBy: string;
  note: string;
  requestId: string | null;
  counts: ErasureCounts | null;
  createdAt: Date;
  completedAt: Date | null;
}

/** An operation of the customer whose outcome is still open: the erasure waits for it. */
export interface BlockingOperation {
  type: string;
  id: string;
  status: string;
}

/** Where a customer's data is: its rows' ids and the personal values they hold. */
export interface CustomerFootprint {
  orderIds: string[];
  cardUserIds: string[];
  cardOperationIds: string[];
  distributionIds: string[];
  /** The card users' identity numbers, as stored (sealed): opened by the service, which holds the key. */
  sealedIdNumbers: string[];
  /** Values that name this customer alone (emails, phone and wallet numbers, full names, street addresses): a row holding one is the customer's. */
  distinctiveValues: string[];
  /** Values many share (a first name, a city, a date of birth): replaced in the rows found, never used to find rows. */
  contextValues: string[];
}
