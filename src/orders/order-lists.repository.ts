import { Injectable } from '@nestjs/common';
import type { PageRequest } from '../common/pagination';
import { keysetListStatementFor, keysetListValues } from '../database/list-queries';
import { ReplicaReads, type ListReader } from '../database/replica-reads.service';
import type { StatementRow } from '../database/sql-statement';
import type { OrderFilter } from './order.types';
import { LIST_FILTERS, LIST_ORDERS } from './orders.statements';

/**
 * An order as lists and the CSV export read it (LIST_ORDERS): what they show, the times already as
 * ISO text (the format of Date#toISOString), the amount as stored.
 */
export type OrderListRow = StatementRow<(typeof LIST_ORDERS)[number]>;

/** The order list and the CSV export's batches: finance's on the replica while it is fresh, a customer's own on the primary. */
@Injectable()
export class OrderListsRepository {
  constructor(private readonly reads: ReplicaReads) {}

  /**
   * A page of orders (or a batch of the CSV export), newest first; every set of filters is served by
   * its index in keyset order (see LIST_ORDERS).
   */
  async list(filter: OrderFilter, page: PageRequest, reader: ListReader): Promise<OrderListRow[]> {
    const statement = keysetListStatementFor(LIST_ORDERS, LIST_FILTERS, filter);
    return this.reads.runFor(reader, statement, keysetListValues(LIST_FILTERS, filter, page));
  }
}
