import { Injectable } from '@nestjs/common';
import { PrismaService } from '../database/prisma.service';

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

/** The provider call log. Callers pass records that are already redacted. */
@Injectable()
export class ProviderCallRepository {
  constructor(private readonly prisma: PrismaService) {}

  async record(call: ProviderCallRecord): Promise<void> {
    await this.prisma.providerCall.create({
      data: {
        ...call,
        requestBody: toJson(call.requestBody),
        responseBody: toJson(call.responseBody),
      },
    });
  }
}

function toJson(value: unknown) {
  return value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as object);
}
