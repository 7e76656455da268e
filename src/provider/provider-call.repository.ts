import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service';
import { storableJson, storableText } from '../logging/redaction';

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
 * The provider call log. Callers pass records that are already redacted. Every call gets its row:
 * text PostgreSQL cannot hold (NUL, lone surrogates) is stored replaced by U+FFFD.
 */
@Injectable()
export class ProviderCallRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** One INSERT for the whole batch (rows made by `storableCall`). */
  async recordMany(calls: readonly StorableCall[]): Promise<void> {
    await this.prisma.providerCall.createMany({ data: [...calls] });
  }
}

/** A call as its row will hold it, made when the call ends (its bodies copied then); throws on a body JSON cannot hold. */
export type StorableCall = ReturnType<typeof storableCall>;

export function storableCall(call: ProviderCallRecord, at: Date) {
  return {
    ...call,
    url: storableText(call.url),
    outcome: storableText(call.outcome),
    requestBody: toJson(call.requestBody),
    responseBody: toJson(call.responseBody),
    createdAt: at,
  };
}

function toJson(value: unknown) {
  return value === undefined ? undefined : storableJson(JSON.parse(JSON.stringify(value)) as object);
}
