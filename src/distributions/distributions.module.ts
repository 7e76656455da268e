import { DistributionsSweeper } from './distributions.sweeper';
import { Module } from '@nestjs/common';
import { DistributionsController } from './distributions.controller';
import { DistributionsRepository } from './distributions.repository';
import { DistributionsService } from './distributions.service';

@Module({
  controllers: [DistributionsController],
  providers: [DistributionsService, DistributionsRepository, DistributionsSweeper],
  exports: [DistributionsService, DistributionsRepository],
})
export class DistributionsModule {}
