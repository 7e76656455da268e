import { ApiProperty } from '@nestjs/swagger';

export class LivenessDto {
  @ApiProperty({ example: 'ok' })
  status: 'ok';
}

class ReadinessChecksDto {
  @ApiProperty({ example: 'up' })
  database: 'up';

  @ApiProperty({ example: 'applied' })
  migrations: 'applied';
}

export class ReadinessDto {
  @ApiProperty({ example: 'ok' })
  status: 'ok';

  @ApiProperty({ type: ReadinessChecksDto })
  checks: ReadinessChecksDto;
}
