import { ApiProperty } from '@nestjs/swagger';
import { REPLICA_STATES, type ReplicaState } from '../database/replica-lag';

export class LivenessDto {
  @ApiProperty({ example: 'ok' })
  status: 'ok';
}

class ReplicaCheckDto {
  @ApiProperty({
    enum: REPLICA_STATES,
    example: 'ok',
    description:
      "The finance reads' streaming replica (DATABASE_REPLICA_URL): `disabled` (none), `ok` (finance reads run there), `lagging` (more than DATABASE_REPLICA_MAX_LAG_SECONDS behind, or not known: they run on the primary), `unreachable` (down, or no longer a standby: they run on the primary). Never makes the instance unready.",
  })
  state: ReplicaState;

  @ApiProperty({
    type: Number,
    nullable: true,
    example: 0.4,
    description: 'How far behind the primary it may be at most, in seconds; null when disabled, unreachable or not known.',
  })
  lagSeconds: number | null;
}

class ReadinessChecksDto {
  @ApiProperty({ example: 'up' })
  database: 'up';

  @ApiProperty({ example: 'applied' })
  migrations: 'applied';

  @ApiProperty({ type: ReplicaCheckDto })
  replica: ReplicaCheckDto;
}

export class ReadinessDto {
  @ApiProperty({ example: 'ok' })
  status: 'ok';

  @ApiProperty({ type: ReadinessChecksDto })
  checks: ReadinessChecksDto;
}
