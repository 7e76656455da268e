import { applyDecorators } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';

/**
 * The tasks of finance staff, in the order `/docs/finance` shows them: each is a tag of that
 * document, and each operation the finance role may call belongs to exactly one (`@FinanceTask`).
 * Which operations appear there is decided by the roles of their `@Auth`, never by this list.
 */
export const FINANCE_TASKS = {
  payments: {
    name: 'Find a payment',
    description:
      'Pay-in orders, distributions, virtual cards and their operations, wallet links: find one by status, currency or date, open it, follow an order live; link a wallet user so that distributions can pay them',
  },
  export: { name: 'Export to a spreadsheet', description: 'Orders as a CSV file that Excel opens as is' },
  callbacks: { name: 'Provider callbacks', description: 'What the payment provider told the service about each order, as received' },
  reports: { name: 'Reports', description: 'Counts and totals of orders per status and currency over a period' },
  attention: {
    name: 'What waits for a person',
    // Every operation on the provider has its queues there (each registered operation table's): named as such, not listed.
    description: 'Operations on the payment provider that it left undecided, or that were flagged for review (an admin decides them)',
  },
  audit: { name: 'Audit trail', description: 'Who resolved, reviewed, distributed or exported what, and when' },
  events: { name: 'Events', description: 'Every status change of an order, card operation or distribution, and its delivery to webhooks' },
} as const;

export type FinanceTaskKey = keyof typeof FINANCE_TASKS;

/** The OpenAPI extension an operation's finance task is written in. */
export const FINANCE_TASK_EXTENSION = 'x-finance-task';
/** Its one-line summary in plain words, shown instead of the developer's summary in `/docs/finance`. */
export const FINANCE_SUMMARY_EXTENSION = 'x-finance-summary';

/**
 * Files a route under a finance task in `/docs/finance`, with a one-line summary in plain words.
 * Only routes whose `@Auth` admits the finance role appear there; this only says where.
 */
export function FinanceTask(task: FinanceTaskKey, summary: string): MethodDecorator {
  return applyDecorators(ApiExtension(FINANCE_TASK_EXTENSION, FINANCE_TASKS[task].name), ApiExtension(FINANCE_SUMMARY_EXTENSION, summary));
}
