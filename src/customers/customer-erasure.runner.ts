import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Logger } from 'pino';
import { ID_NUMBER_PURPOSE } from '../cards/card-users.service';
import { outsideScopes } from '../common/async-scope';
import { ScheduledJob } from '../common/scheduled-job';
import { SecretBox } from '../common/secret-box';
import type { AppConfig } from '../config/app-config';
import { APP_LOGGER } from '../logging/logging.module';
import { CALL_LOG_FLUSH_DELAY_MS } from '../provider/provider-call-log';
import { BODY_TABLES, ErasureBodiesRepository, type BodyRow, type BodyTable } from './erasure-bodies.repository';
import { CustomerErasureRepository } from './customer-erasure.repository';
import type { CustomerFootprint, ErasureCounts, ErasureRecord } from './customer-erasure.types';
import { KnownValues } from './known-values';
import { ERASED_MARK, PERSONAL_DATA_REGISTER, type ErasureMethod } from './personal-data.register';

/** An erasure is held this long by the instance working on it (renewed between tables); past it, another takes it over. */
const LEASE_SECONDS = 300;
const TAKE_OVER_INTERVAL_MS = 60_000;
const PAGE_SIZE = 500;
/**
 * Every instance writes its provider calls in batches, CALL_LOG_FLUSH_DELAY_MS after the call: the
 * last call of an operation that has just ended may not be in the table yet when the erasure is
 * asked. It waits this long first (no operation of the customer is open, so no new call comes).
 */
export const CALL_LOG_SETTLE_MS = 5 * CALL_LOG_FLUSH_DELAY_MS;

/** Which of the customer's rows each body table holds: the statement's parameters before the cursor. */
function scopeOf(table: string, subject: string, footprint: CustomerFootprint, known: KnownValues): unknown[] | undefined {
  const resources = [...footprint.orderIds, ...footprint.cardOperationIds, ...footprint.distributionIds];
  switch (table) {
    case 'provider_calls':
      return known.needles.length ? [known.needles] : undefined;
    case 'provider_callbacks':
    case 'order_status_changes':
      return [footprint.orderIds];
    case 'card_operations':
      return [footprint.cardUserIds];
    case 'distributions':
      return [footprint.distributionIds];
    case 'events':
    case 'webhook_attempts':
      return [resources];
    case 'idempotency_records':
      return [subject, resources, known.needles];
    default:
      throw new Error(`no scope for ${table}`);
  }
}

/** How the register says each column of a body table is erased. */
const methodOf = (table: string, column: string): ErasureMethod => {
  const entry = PERSONAL_DATA_REGISTER.find((e) => e.table === table && e.column === column);
  if (!entry) throw new Error(`${table}.${column} is not in the personal-data register`);
  return entry.erasure;
};

/**
 * Works an erasure through: the bodies first (while the records still hold the values to look
 * for), then the records, DONE and audited in one transaction. Re-running one is harmless (what is
 * erased stays so), so an erasure whose instance died is taken over by any instance once its lease
 * lapses, by this job, every minute.
 */
@Injectable()
export class CustomerErasureRunner extends ScheduledJob<number> {
  private readonly box: SecretBox;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly erasures: CustomerErasureRepository,
    private readonly bodies: ErasureBodiesRepository,
    config: ConfigService<AppConfig, true>,
    @Inject(APP_LOGGER) logger: Logger,
  ) {
    super('customer-erasure', TAKE_OVER_INTERVAL_MS, logger.child({ component: 'customer-erasure' }));
    this.box = new SecretBox(config.get('dataEncryptionKey', { infer: true }), config.get('dataEncryptionPreviousKeys', { infer: true }));
  }

  static readonly leaseSeconds = LEASE_SECONDS;

  /** Starts `erasure` now, off the request that asked for it; a failure leaves it PENDING for the job. */
  start(erasure: ErasureRecord): void {
    const work = outsideScopes(() =>
      this.erase(erasure).catch((error: unknown) =>
        this.log.error({ err: error, erasureId: erasure.id }, 'erasure failed; it is taken over once its lease lapses'),
      ),
    );
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  override async onModuleDestroy() {
    await super.onModuleDestroy();
    await Promise.all(this.inFlight);
  }

  protected async work(): Promise<number> {
    let done = 0;
    for (
      let erasure = await this.erasures.takeOverLapsed(LEASE_SECONDS);
      erasure;
      erasure = await this.erasures.takeOverLapsed(LEASE_SECONDS)
    ) {
      await this.erase(erasure);
      done++;
    }
    return done;
  }

  async erase(erasure: ErasureRecord): Promise<ErasureRecord | undefined> {
    await new Promise((resolve) => setTimeout(resolve, CALL_LOG_SETTLE_MS));
    const footprint = await this.erasures.footprint(erasure.subject);
    const known = new KnownValues([...footprint.distinctiveValues, ...this.idNumbersOf(footprint)], footprint.contextValues);
    const counts: ErasureCounts = {};
    for (const table of BODY_TABLES) {
      const scope = scopeOf(table.table, erasure.subject, footprint, known);
      counts[table.table] = scope ? await this.scrubTable(table, scope, known) : 0;
      await this.erasures.renewLease(erasure.id, LEASE_SECONDS);
    }
    const done = await this.erasures.markRecordsAndFinish(
      { id: erasure.id, subject: erasure.subject, mark: ERASED_MARK, sealedMark: this.box.encrypt(ERASED_MARK, ID_NUMBER_PURPOSE) },
      counts,
      (total) => ({
        actor: erasure.requestedBy,
        action: 'customer.erased',
        resourceType: 'customer',
        resourceId: erasure.subject,
        requestId: erasure.requestId,
        note: erasure.note,
        details: { erasureId: erasure.id, counts: total },
      }),
    );
    if (done) this.log.info({ erasureId: erasure.id, counts: done.counts }, 'customer erased');
    return done;
  }

  /** The identity numbers, opened: the provider call that created a card user carried one. */
  private idNumbersOf(footprint: CustomerFootprint): string[] {
    return footprint.sealedIdNumbers.flatMap((sealed) => {
      try {
        const idNumber = this.box.decrypt(sealed, ID_NUMBER_PURPOSE);
        return idNumber === ERASED_MARK ? [] : [idNumber];
      } catch (error) {
        // A value no configured key opens cannot be looked for; its column is still replaced.
        this.log.warn({ err: error }, 'an identity number could not be opened for the erasure');
        return [];
      }
    });
  }

  /** Every page of the table's rows of the customer; the rows that changed are written back. How many changed. */
  private async scrubTable(table: BodyTable, scope: unknown[], known: KnownValues): Promise<number> {
    let changedRows = 0;
    let after = table.firstCursor;
    for (;;) {
      const page = await this.bodies.page(table, scope, after, PAGE_SIZE);
      const changed = page.flatMap((row) => {
        const scrubbed = scrubRow(table, row, known);
        return scrubbed ? [scrubbed] : [];
      });
      await this.bodies.write(table, changed);
      changedRows += changed.length;
      if (page.length < PAGE_SIZE) return changedRows;
      after = page[page.length - 1].id;
    }
  }
}

/** The row with its columns erased as the register says, or undefined when nothing changed. */
export function scrubRow(table: BodyTable, row: BodyRow, known: KnownValues): BodyRow | undefined {
  const scrubbed: BodyRow = { ...row };
  let changed = false;
  for (const { name, json } of table.columns) {
    const value = row[name];
    if (value === null) continue;
    let next: string;
    if (methodOf(table.table, name) === 'mark') next = ERASED_MARK;
    else if (json) {
      const parsed: unknown = JSON.parse(value);
      const after = JSON.stringify(known.scrubJson(parsed));
      next = after === JSON.stringify(parsed) ? value : after;
    } else next = known.scrubText(value);
    if (next !== value) {
      scrubbed[name] = next;
      changed = true;
    }
  }
  return changed ? scrubbed : undefined;
}
