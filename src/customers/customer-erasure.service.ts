import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../auth/auth.types';
import { NotFoundError, ValidationFailedError } from '../common/domain-error';
import { currentRequestId } from '../logging/request-context';
import type { ErasureDto, RequestErasureDto } from './customer-erasure.dto';
import { ErasureBlockedError } from './customer-erasure.errors';
import { CustomerErasureRepository } from './customer-erasure.repository';
import { CustomerErasureRunner } from './customer-erasure.runner';
import type { ErasureRecord } from './customer-erasure.types';

/** A subject as identity providers issue them: printable, no control characters, at most 255. */
const SUBJECT = /^[^\p{Cc}\p{Cs}]{1,255}$/u;

/** Asking for a customer's erasure, and reading where it stands. */
@Injectable()
export class CustomerErasureService {
  constructor(
    private readonly erasures: CustomerErasureRepository,
    private readonly runner: CustomerErasureRunner,
  ) {}

  /**
   * Refused (nothing changed) while one of the customer's operations is open; a PENDING erasure of
   * the customer is answered as it is rather than asked twice. Otherwise stored PENDING and started.
   */
  async request(user: AuthUser, subject: string, body: RequestErasureDto): Promise<ErasureDto> {
    checkSubject(subject);
    const blocking = await this.erasures.blockingOperations(subject);
    if (blocking.length) throw new ErasureBlockedError(blocking);
    const latest = await this.erasures.latest(subject);
    if (latest?.status === 'PENDING') return toDto(latest);
    const erasure = await this.erasures.request(
      { id: randomUUID(), subject, requestedBy: user.id, note: body.note, requestId: currentRequestId() ?? null },
      CustomerErasureRunner.leaseSeconds,
    );
    this.runner.start(erasure);
    return toDto(erasure);
  }

  async latest(subject: string): Promise<ErasureDto> {
    checkSubject(subject);
    const erasure = await this.erasures.latest(subject);
    if (!erasure) throw new NotFoundError('No erasure was asked for this customer.');
    return toDto(erasure);
  }
}

function checkSubject(subject: string): void {
  if (!SUBJECT.test(subject))
    throw new ValidationFailedError([{ field: 'subject', message: 'subject must be 1 to 255 printable characters' }]);
}

function toDto(erasure: ErasureRecord): ErasureDto {
  return {
    id: erasure.id,
    subject: erasure.subject,
    status: erasure.status,
    requestedBy: erasure.requestedBy,
    note: erasure.note,
    counts: erasure.counts,
    createdAt: erasure.createdAt.toISOString(),
    completedAt: erasure.completedAt?.toISOString() ?? null,
  };
}
