import type { Prisma } from '../generated/prisma/client';
import type {
  CardOperationKind as DbCardOperationKind,
  CardOperationStatus as DbCardOperationStatus,
  CardStatus as DbCardStatus,
} from '../generated/prisma/enums';
import type { Proven, SameValues } from '../database/same-values';
import type {
  CardOperationKind,
  CardOperationRecord,
  CardOperationStatus,
  CardRecord,
  CardStatus,
  CardUserRecord,
  OperationOutcome,
} from './card.types';

// The rows of the cards tables and their mapping to the area's records: the repository's side of the boundary.

/** The unions of card.types.ts are the database enums, value for value: the rows are mapped without casts. */
export type CardEnumsMatch = [
  Proven<SameValues<CardStatus, DbCardStatus>>,
  Proven<SameValues<CardOperationKind, DbCardOperationKind>>,
  Proven<SameValues<CardOperationStatus, DbCardOperationStatus>>,
];

export type CardUserRow = Prisma.CardUserGetPayload<object>;
export type CardRow = Prisma.CardGetPayload<object>;
export type OperationRow = Prisma.CardOperationGetPayload<{ include: { cardUser: { select: { ownerId: true } } } }>;

export const WITH_OWNER = { cardUser: { select: { ownerId: true } } } as const;

export function outcomeData(outcome: OperationOutcome): Prisma.CardOperationUncheckedUpdateInput {
  const response =
    outcome.providerResponse === undefined
      ? undefined
      : (JSON.parse(JSON.stringify(outcome.providerResponse ?? null)) as Prisma.InputJsonValue);
  if (outcome.status === 'SUCCEEDED') {
    return {
      status: 'SUCCEEDED',
      completedAt: new Date(),
      providerResponse: response,
      providerTransactionId: outcome.providerTransactionId ?? undefined,
      newBalance: outcome.newBalance ?? undefined,
    };
  }
  return {
    status: outcome.status,
    completedAt: new Date(),
    failureReason: outcome.failureReason.slice(0, 1000),
    providerResponse: response,
  };
}

function decimalText(value: { toFixed(): string } | null): string | null {
  return value === null ? null : value.toFixed();
}

export function toCardUser(row: CardUserRow): CardUserRecord {
  // The sealed id number stays in the repository: nothing above it needs it back.
  const { idNumberEncrypted: _sealed, ...user } = row;
  return user;
}

export function toCard(row: CardRow): CardRecord {
  return { ...row, lastKnownBalance: decimalText(row.lastKnownBalance) };
}

export function toOperation(row: OperationRow): CardOperationRecord {
  const { cardUser, ...operation } = row;
  return {
    ...operation,
    ownerId: cardUser.ownerId,
    amount: decimalText(row.amount),
    newBalance: decimalText(row.newBalance),
  };
}
