import { Injectable } from '@nestjs/common';
import { auditEventOf } from '../audit/audit.service';
import type { AuthUser } from '../auth/auth.types';
import { NotFoundError } from '../common/domain-error';
import { UUID_PATTERN } from '../common/pagination';
import type { DistributionDto } from '../distributions/distributions.dto';
import { DISTRIBUTIONS_TABLE, DistributionsRepository } from '../distributions/distributions.repository';
import { DistributionsService } from '../distributions/distributions.service';
import type { ResolveDistributionDto } from './resolutions.dto';
import { DistributionNotResolvableError } from './resolution-rules';

/**
 * `POST /v1/distributions/{id}/resolution`: a person decides an UNKNOWN distribution, through the
 * provider-operation lifecycle's resolution (resolveProviderOperation, in
 * DistributionsRepository.resolveUnknown: guarded, audited in the same transaction).
 */
@Injectable()
export class ResolveDistributionUseCase {
  constructor(
    private readonly distributions: DistributionsRepository,
    private readonly distributionsService: DistributionsService,
  ) {}

  async execute(user: AuthUser, id: string, dto: ResolveDistributionDto): Promise<DistributionDto> {
    const distribution = UUID_PATTERN.test(id) ? await this.distributions.findById(id) : undefined;
    if (!distribution) throw new NotFoundError(`No distribution ${id}.`);
    if (distribution.status !== 'UNKNOWN') throw new DistributionNotResolvableError(id, distribution.status);
    const resolved = await this.distributions.resolveUnknown(
      id,
      { status: dto.status, actor: user.id, note: dto.note },
      auditEventOf(
        user,
        DISTRIBUTIONS_TABLE.resolutionAudit.action,
        { type: DISTRIBUTIONS_TABLE.resolutionAudit.resourceType, id },
        { note: dto.note, details: { kind: distribution.kind } },
      ),
    );
    if (!resolved) {
      const now = await this.distributions.findById(id);
      throw new DistributionNotResolvableError(id, now?.status ?? distribution.status);
    }
    return this.distributionsService.get(id);
  }
}
