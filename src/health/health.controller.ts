import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { LivenessDto, ReadinessDto } from './health.dto';
import { HealthService } from './health.service';

@ApiTags('Operations')
@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get('live')
  @ApiOperation({
    operationId: 'getHealthLive',
    summary: 'Liveness: the process answers',
    description: 'No token, no database access: 200 as long as the process serves HTTP.',
  })
  @ApiOkResponse({ type: LivenessDto })
  live(): LivenessDto {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({
    operationId: 'getHealthReady',
    summary: 'Readiness: database reachable and every migration applied',
    description:
      "No token. 200 when the database answers and every migration shipped with this build is applied; otherwise 503 `not_ready` with Retry-After. From SIGTERM on, 503 at once while the instance keeps serving for SHUTDOWN_DRAIN_MS, so that a load balancer takes it out of rotation. `checks.replica` shows the finance reads' replica (state and lag); it never makes the instance unready.",
  })
  @ApiOkResponse({ type: ReadinessDto })
  @ApiServiceUnavailableResponse({ description: 'problem+json `not_ready`' })
  ready(): Promise<ReadinessDto> {
    return this.health.readiness();
  }
}
