import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Body, Controller, HttpCode, Module, Post } from '@nestjs/common';
import { IsInt, IsObject, IsOptional, IsString, Max, Min } from 'class-validator';
import { Auth, CurrentUser } from '../../src/auth/auth.decorator';
import { AuthModule } from '../../src/auth/auth.module';
import type { AuthUser } from '../../src/auth/auth.types';
import { DomainError } from '../../src/common/domain-error';
import { IdempotencyModule } from '../../src/idempotency/idempotency.module';
import { Idempotent } from '../../src/idempotency/idempotent.decorator';
import { AgentBudgetExhaustedError } from '../../src/provider/provider.errors';

/** How many times each probe handler really ran, per `ref` of the body: what the tests count. */
const runs = new Map<string, number>();
export const runsOf = (ref: string) => runs.get(ref) ?? 0;

function run(ref: string): number {
  const count = runsOf(ref) + 1;
  runs.set(ref, count);
  return count;
}

class ChargeDto {
  @IsString()
  ref: string;

  @IsInt()
  @Min(1)
  amount: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(10_000)
  delayMs?: number;

  @IsOptional()
  @IsObject()
  meta?: Record<string, unknown>;

  @IsOptional()
  @IsString({ each: true })
  tags?: string[];
}

class ProbeDeclinedError extends DomainError {
  readonly status = 402;
  readonly code = 'probe_declined';
  readonly title = 'The probe declined the charge';
  // Random, so that a replay is told apart from a second run that produced the same error.
  readonly declineId = randomUUID();

  get problemExtensions(): Record<string, unknown> {
    return { declineId: this.declineId, outcomeKnown: true };
  }
}

/** Routes that exist only in the idempotency tests; each counts its runs and answers something unique per run. */
@Controller('idempotency-probe')
class IdempotencyProbeController {
  @Post('charge')
  @Auth()
  @Idempotent('probe.charge')
  async charge(@Body() body: ChargeDto, @CurrentUser() user: AuthUser) {
    return this.perform(body, user);
  }

  /** Another route of the operation of `charge` (same scope), whose callers wait only briefly for a request in flight. */
  @Post('charge-impatient')
  @Auth()
  @Idempotent('probe.charge', { waitMs: 150 })
  async chargeImpatient(@Body() body: ChargeDto, @CurrentUser() user: AuthUser) {
    return this.perform(body, user);
  }

  @Post('charge-elsewhere')
  @Auth()
  @Idempotent('probe.charge-elsewhere')
  async chargeElsewhere(@Body() body: ChargeDto, @CurrentUser() user: AuthUser) {
    return this.perform(body, user);
  }

  @Post('confirm')
  @HttpCode(200)
  @Auth()
  @Idempotent('probe.confirm')
  async confirm(@Body() body: ChargeDto, @CurrentUser() user: AuthUser) {
    return this.perform(body, user);
  }

  @Post('decline')
  @Auth()
  @Idempotent('probe.decline')
  async decline(@Body() body: ChargeDto): Promise<never> {
    run(body.ref);
    throw new ProbeDeclinedError('The probe declines every charge.');
  }

  @Post('crash')
  @Auth()
  @Idempotent('probe.crash')
  async crash(@Body() body: ChargeDto): Promise<never> {
    run(body.ref);
    throw new Error('socket hang up after the provider call');
  }

  @Post('budget')
  @Auth()
  @Idempotent('probe.budget', { releaseOn: (error) => error instanceof AgentBudgetExhaustedError })
  async budget(@Body() body: ChargeDto): Promise<never> {
    run(body.ref);
    throw new AgentBudgetExhaustedError(60);
  }

  @Post('card')
  @Auth()
  @Idempotent('probe.card', {
    storeBody: (body) => {
      const { cvv: _cvv, ...kept } = body as { cvv: string };
      return { ...kept, note: 'The CVV is shown only in the first answer.' };
    },
  })
  async card(@Body() body: ChargeDto) {
    return { cardId: randomUUID(), cvv: String(100 + run(body.ref)) };
  }

  @Post('open')
  @Idempotent('probe.open')
  async open(@Body() body: ChargeDto) {
    return { run: run(body.ref) };
  }

  private async perform(body: ChargeDto, user: AuthUser) {
    const count = run(body.ref);
    if (body.delayMs) await sleep(body.delayMs);
    return { chargeId: randomUUID(), ref: body.ref, amount: body.amount, userId: user.id, run: count };
  }
}

@Module({ imports: [AuthModule, IdempotencyModule], controllers: [IdempotencyProbeController] })
export class IdempotencyProbeModule {}
