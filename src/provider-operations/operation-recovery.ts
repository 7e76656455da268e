import type { IdempotencyService, ResourceAnswer } from '../idempotency/idempotency.service';
import type { OperationLink, OperationTable } from './operation-tables';

/**
 * The link of the operation a request stores to its idempotency record (its recovery point), as a
 * resource of `resource`, one of its table's recovery types; none outside an idempotent request.
 */
export function operationLink<Resource extends string>(
  idempotency: Pick<IdempotencyService, 'pendingClaim'>,
  table: OperationTable<string, string, Resource>,
  resource: Resource,
): OperationLink | undefined {
  const claim = idempotency.pendingClaim();
  return claim ? { claim, type: resource } : undefined;
}

/**
 * The one recovery wiring: what a retry answers when the request it repeats died after storing its
 * operation, for every resource type of the table's `recovery` (with the scopes declared there):
 * `answers[type]`, the operation as it now is (UNKNOWN once swept), shaped as the route's answer.
 */
export function registerRecoveries<Resource extends string>(
  idempotency: Pick<IdempotencyService, 'registerRecovery'>,
  table: OperationTable<string, string, Resource>,
  answers: Readonly<Record<Resource, ResourceAnswer>>,
): void {
  for (const type of Object.keys(table.recovery) as Resource[]) {
    idempotency.registerRecovery({ type, scopes: table.recovery[type], answer: answers[type] });
  }
}
