import { auditEventOf } from '../audit/audit.service';
import type { NewAuditEvent } from '../audit/audit.types';
import type { AuthUser } from '../auth/auth.types';
import { ConflictError, NotFoundError } from '../common/domain-error';
import { UUID_PATTERN } from '../common/pagination';
import { interruptedAfterSeconds } from '../common/scheduled-job';
import type { OperationTable, ResolutionRules } from '../provider-operations/operation-tables';
import type { ManualDecision } from '../provider-operations/resolve-provider-operation';

/** An operation as a resolution reads it: its status, and the fields its audit event may keep. */
export type FoundOperation = { status: string } & object;

/** Which statuses a person may decide from, and how old a PENDING one must be (ResolutionRules.stalePending). */
export interface ResolvableGuard {
  statuses: readonly string[];
  pendingOlderThanSeconds: number;
}

/**
 * What a resolution needs of an operation type beyond its rules (data, on its registry entry):
 * reading one, writing a decision (guarded, with its audit event, in one transaction), and the
 * route's answer once decided.
 */
export interface OperationResolver<Decided extends string, Found extends FoundOperation, Answer> {
  readonly table: OperationTable<string, Decided>;
  find(id: string): Promise<Found | undefined>;
  /** False when the guard refused: decided meanwhile (a callback, another person), or a PENDING one still too young. */
  decide(id: string, decision: ManualDecision<Decided>, found: Found, audit: NewAuditEvent, guard: ResolvableGuard): Promise<boolean>;
  answer(user: AuthUser, id: string): Promise<Answer>;
}

/** 409 `<type>_not_resolvable`: the operation's status (now) is none a person may decide from. */
export class OperationNotResolvableError extends ConflictError {
  constructor(rules: ResolutionRules<string>, id: string, status: string, pendingWindowSeconds: number) {
    const { code, noun } = rules.notResolvable;
    const name = `${noun[0].toUpperCase()}${noun.slice(1)} ${id}`;
    super(
      code,
      rules.stalePending && status === 'PENDING'
        ? `${name} is PENDING for less than ${pendingWindowSeconds} seconds: its provider call may still be answered. Try again later.`
        : rules.stalePending
          ? `${name} is ${status}: only ${rules.resolvable.join(', ')} or PENDING ${noun}s older than ${pendingWindowSeconds} seconds can be resolved by hand.`
          : `${name} is ${status}: only an ${rules.resolvable.join(' or ')} ${noun} can be resolved by hand.`,
    );
  }
}

/** Whether a person may decide an operation of these rules in this status at all (a PENDING one still depends on its age). */
export function mayBeResolved(rules: ResolutionRules<string>, status: string): boolean {
  return rules.resolvable.includes(status) || (rules.stalePending === true && status === 'PENDING');
}

/**
 * `POST /v1/<operations>/{id}/resolution`, for every operation type: a person decides what the
 * provider left undecided, by the rules of its registry entry. The resolver's guarded write is the
 * judge (a callback or another person may decide first); the read before it only spares a
 * transaction for what can never be resolved.
 */
export class ResolveOperationUseCase<Decided extends string, Found extends FoundOperation, Answer> {
  constructor(
    private readonly resolver: OperationResolver<Decided, Found, Answer>,
    private readonly providerTimeoutMs: number,
  ) {}

  async execute(user: AuthUser, id: string, dto: { status: Decided; note: string }): Promise<Answer> {
    const rules = this.resolver.table.resolution;
    const found = UUID_PATTERN.test(id) ? await this.resolver.find(id) : undefined;
    if (!found) throw new NotFoundError(`No ${rules.notResolvable.noun} ${id}.`);
    const window = interruptedAfterSeconds(this.providerTimeoutMs);
    if (!mayBeResolved(rules, found.status)) throw new OperationNotResolvableError(rules, id, found.status, window);
    const details: Record<string, unknown> = Object.fromEntries(
      rules.auditDetails.map((field) => [field, (found as Record<string, unknown>)[field]]),
    );
    const audit = auditEventOf(
      user,
      rules.audit.action,
      { type: rules.audit.resourceType, id },
      { note: dto.note, details: rules.auditDetails.length > 0 ? details : null },
    );
    const decision = { status: dto.status, actor: user.id, note: dto.note };
    const decided = await this.resolver.decide(id, decision, found, audit, { statuses: rules.resolvable, pendingOlderThanSeconds: window });
    if (!decided) {
      const now = await this.resolver.find(id);
      throw new OperationNotResolvableError(rules, id, now?.status ?? found.status, window);
    }
    return this.resolver.answer(user, id);
  }
}
