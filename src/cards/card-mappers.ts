import { hasRole, type AuthUser } from '../auth/auth.types';
import { formatStoredAmount } from '../common/money';
import type { CurrencyRule } from '../config/app-config';
import { maskCardNumber } from '../logging/redaction';
import type { CardOperationRecord, CardRecord, CardUserRecord } from './card.types';
import type { CardUserDto } from './card-users.dto';
import type { CardDto } from './cards.dto';
import type { CardOperationDto } from './card-operations.dto';

/** Money and card state change only at the owner's or an admin's request. */
export function mayOperate(user: AuthUser, ownerId: string): boolean {
  return ownerId === user.id || hasRole(user, 'admin');
}

export function toCardUserDto(user: CardUserRecord, cards: CardRecord[]): CardUserDto {
  return {
    id: user.id,
    ownerId: user.ownerId,
    providerUserId: user.providerUserId,
    providerReference: user.providerReference,
    firstName: user.firstName,
    lastName: user.lastName,
    email: user.email,
    countryCode: user.countryCode,
    contact: user.contact,
    dob: user.dob,
    isBusiness: user.isBusiness,
    businessName: user.businessName,
    billingAddress: user.billingAddress,
    billingCity: user.billingCity,
    billingCountry: user.billingCountry,
    billingState: user.billingState,
    billingPostalCode: user.billingPostalCode,
    cardIds: cards.map((c) => c.id),
    providerCardIds: user.providerCardIds,
    lastSyncedAt: user.lastSyncedAt?.toISOString() ?? null,
    createdAt: user.createdAt.toISOString(),
    updatedAt: user.updatedAt.toISOString(),
  };
}

export function toCardDto(card: CardRecord, currencies: Record<string, CurrencyRule>): CardDto {
  return {
    id: card.id,
    cardUserId: card.cardUserId,
    ownerId: card.ownerId,
    providerCardId: card.providerCardId,
    maskedNumber: maskCardNumber(card.last4),
    last4: card.last4,
    expiry: card.expiry,
    currency: card.currency,
    balance: formatStoredAmount(card.lastKnownBalance, card.currency, currencies),
    balanceSyncedAt: card.balanceSyncedAt?.toISOString() ?? null,
    status: card.status,
    terminatedAt: card.terminatedAt?.toISOString() ?? null,
    createdAt: card.createdAt.toISOString(),
    updatedAt: card.updatedAt.toISOString(),
  };
}

/** What a card operation's answer is made from: never the provider's answer, nor the owner (an access check's). */
export type CardOperationDtoSource = Omit<CardOperationRecord, 'ownerId' | 'providerResponse'>;

export function toOperationDto(operation: CardOperationDtoSource, currencies: Record<string, CurrencyRule>): CardOperationDto {
  return {
    operationId: operation.id,
    kind: operation.kind,
    status: operation.status,
    cardUserId: operation.cardUserId,
    cardId: operation.cardId,
    requestedBy: operation.requestedBy,
    amount: formatStoredAmount(operation.amount, operation.currency, currencies),
    currency: operation.currency,
    newBalance: formatStoredAmount(operation.newBalance, operation.currency, currencies),
    providerTransactionId: operation.providerTransactionId,
    failureReason: operation.failureReason,
    createdAt: operation.createdAt.toISOString(),
    completedAt: operation.completedAt?.toISOString() ?? null,
  };
}
