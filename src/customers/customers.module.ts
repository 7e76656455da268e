import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { DatabaseModule } from '../database/database.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { CustomerErasureRepository } from './customer-erasure.repository';
import { CustomerErasureRunner } from './customer-erasure.runner';
import { CustomerErasureService } from './customer-erasure.service';
import { CustomersController } from './customers.controller';
import { ErasureBodiesRepository } from './erasure-bodies.repository';

/** A customer's personal data: its erasure, and the register of where it is stored. */
@Module({
  imports: [AuthModule, DatabaseModule, IdempotencyModule],
  controllers: [CustomersController],
  providers: [CustomerErasureRepository, ErasureBodiesRepository, CustomerErasureRunner, CustomerErasureService],
})
export class CustomersModule {}
