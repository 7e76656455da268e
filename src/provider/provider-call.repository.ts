import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Database } from '../database/database';
import { sqlStatement } from '../database/sql-statement';
import { storableJson, storableText } from '../logging/storable-text';

export interface ProviderCallRecord {
  area: string;
  method: string;
  endpoint: string;
  url: string;
  httpStatus?: number;
  outcome: string;
  errorCode?: string;
  durationMs: number;
  requestId?: string;
  requestBody?: unknown;
  responseBody?: unknown;
}

/**
 * The batch as one array per column, zipped back into rows by unnest. A body is its JSON text:
 * `null` for a body that is JSON null, SQL NULL for no body (as Prisma's createMany stored them).
 */
const RECORD_MANY = sqlStatement(
  'provider-call.repository',
  'recordMany',
  'provider_calls_record_many',
  `
  INSERT INTO provider_calls (id, area, method, endpoint, url, http_status, outcome, error_code, duration_ms, request_id,
                              request_body, response_body, created_at)
  SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::text[], $9::int[],
                       $10::text[], $11::jsonb[], $12::jsonb[], $13::timestamptz[])`,
);

/**
 * The provider call log. Callers pass records that are already redacted. Every call gets its row:
 * text PostgreSQL cannot hold (NUL, lone surrogates) is stored replaced by U+FFFD.
 */
@Injectable()
export class ProviderCallRepository {
  constructor(private readonly database: Database) {}

  /** One INSERT for the whole batch (rows made by `storableCall`). */
  async recordMany(calls: readonly StorableCall[]): Promise<void> {
    const column = <T>(value: (call: StorableCall) => T) => calls.map(value);
    await this.database.runCounted(RECORD_MANY, [
      column(() => randomUUID()),
      column((c) => c.area),
      column((c) => c.method),
      column((c) => c.endpoint),
      column((c) => c.url),
      column((c) => c.httpStatus ?? null),
      column((c) => c.outcome),
      column((c) => c.errorCode ?? null),
      // An int column: Prisma dropped a fraction, never refused it.
      column((c) => Math.trunc(c.durationMs)),
      column((c) => c.requestId ?? null),
      column((c) => c.requestBody ?? null),
      column((c) => c.responseBody ?? null),
      column((c) => c.createdAt),
    ]);
  }
}

/**
 * A call as its row will hold it, made when the call ends: its bodies are their JSON text from
 * then on (a later change to the objects cannot reach the row). Throws on a body JSON cannot hold.
 */
export interface StorableCall extends Omit<ProviderCallRecord, 'requestBody' | 'responseBody'> {
  /** JSON text; `null` for a body that is JSON null, undefined (SQL NULL) for no body. */
  requestBody?: string;
  responseBody?: string;
  createdAt: Date;
}

export function storableCall(call: ProviderCallRecord, at: Date): StorableCall {
  return {
    ...call,
    url: storableText(call.url),
    outcome: storableText(call.outcome),
    requestBody: storableJsonText(call.requestBody),
    responseBody: storableJsonText(call.responseBody),
    createdAt: at,
  };
}

/**
 * JSON.stringify writes NUL and lone surrogates as escapes (`\u0000`, `\ud800`), which jsonb
 * refuses as it refuses the characters. Rare: only a text holding one is parsed and made storable.
 */
const ESCAPE_JSONB_REFUSES = /\\u(?:0000|d[89a-f])/i;

function storableJsonText(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const text = JSON.stringify(value);
  if (text === undefined) return undefined;
  return ESCAPE_JSONB_REFUSES.test(text) ? JSON.stringify(storableJson(JSON.parse(text) as unknown)) : text;
}
