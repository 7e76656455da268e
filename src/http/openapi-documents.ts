import type { OpenAPIObject } from '@nestjs/swagger';
import { ALLOWED_ROLES_EXTENSION } from '../auth/auth.decorator';
import type { Role } from '../auth/auth.types';
import { FINANCE_SUMMARY_EXTENSION, FINANCE_TASK_EXTENSION, FINANCE_TASKS } from '../common/finance-tasks';

/** The methods an OpenAPI path item may hold operations under. */
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

type Operation = Record<string, unknown> & { summary?: string; description?: string; tags?: string[] };

/** What `/docs` adds to the summary of an operation only admins may call. */
export const ADMIN_ONLY_SUFFIX = ' (admin only)';
const ADMIN_ONLY_NOTE = '**Admin only**: a customer or finance token is answered 403.';

/**
 * The tag of a finance operation that names no task (`@FinanceTask`): it still appears, last, so
 * that no route the finance role may call is ever left out (test/docs/finance-docs.e2e-spec.ts
 * fails while any operation sits there).
 */
export const UNSORTED_FINANCE_TAG = 'Other';

/** The roles an operation's `@Auth` lets through; undefined on a public operation (no token). */
export function allowedRolesOf(operation: object): readonly Role[] | undefined {
  const roles = (operation as Record<string, unknown>)[ALLOWED_ROLES_EXTENSION];
  return Array.isArray(roles) ? (roles as Role[]) : undefined;
}

/** Every operation of `document` with its path and method. */
export function operationsOf(document: OpenAPIObject): { path: string; method: string; operation: Operation }[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    HTTP_METHODS.flatMap((method) => {
      const operation = (item as Record<string, unknown>)[method] as Operation | undefined;
      return operation ? [{ path, method, operation }] : [];
    }),
  );
}

/**
 * The full document for developers (`/docs`), with the operations only an admin may call marked as
 * such: `(admin only)` after the summary and a first line in the description.
 */
export function markAdminOnly(document: OpenAPIObject): OpenAPIObject {
  for (const { operation } of operationsOf(document)) {
    const roles = allowedRolesOf(operation);
    if (roles?.length !== 1 || roles[0] !== 'admin') continue;
    operation.summary = `${operation.summary ?? ''}${ADMIN_ONLY_SUFFIX}`;
    operation.description = operation.description ? `${ADMIN_ONLY_NOTE}\n\n${operation.description}` : ADMIN_ONLY_NOTE;
  }
  return document;
}

/**
 * The finance document (`/docs/finance`): exactly the operations whose `@Auth` admits the finance
 * role (public routes, which are the provider's, the orchestrator's and monitoring's, are left
 * out), each under its task's tag with its plain-words summary; the tasks in their working order.
 */
export function financeDocumentOf(full: OpenAPIObject): OpenAPIObject {
  const document = structuredClone(full);
  let unsorted = false;
  for (const [path, item] of Object.entries(document.paths)) {
    const kept = item as Record<string, unknown>;
    for (const method of HTTP_METHODS) {
      const operation = kept[method] as Operation | undefined;
      if (!operation) continue;
      if (!allowedRolesOf(operation)?.includes('finance')) {
        delete kept[method];
        continue;
      }
      const task = operation[FINANCE_TASK_EXTENSION];
      const summary = operation[FINANCE_SUMMARY_EXTENSION];
      unsorted ||= typeof task !== 'string';
      operation.tags = [typeof task === 'string' ? task : UNSORTED_FINANCE_TAG];
      if (typeof summary === 'string') operation.summary = summary;
    }
    if (!HTTP_METHODS.some((method) => kept[method])) delete document.paths[path];
  }
  document.info = {
    ...document.info,
    title: 'Payments BFF: finance',
    description:
      'What finance staff can do, grouped by task. Sign in with **Authorize** (a token with the finance role), open an operation, press **Try it out**, then **Execute**. Dates in `from` and `to` are a day (`2026-11-01`: `from` starts at its first moment, `to` includes all of it) or a moment (`2026-11-01T08:30:00Z`), in the reports’ time zone unless an offset is given. The CSV export opens in Excel as it is. Errors come as `application/problem+json` with a stable `code` and the `requestId` to quote. Everything else (admin decisions, customers’ operations) is in the full document at `/docs`.',
  };
  document.tags = [
    ...Object.values(FINANCE_TASKS).map(({ name, description }) => ({ name, description })),
    ...(unsorted ? [{ name: UNSORTED_FINANCE_TAG, description: 'Operations not filed under a task yet' }] : []),
  ];
  return document;
}
