import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { DatabaseModule } from '../database/database.module';

/** Events and webhooks: the endpoints the merchant registers, the events, their delivery. */
@Module({
  imports: [AuthModule, DatabaseModule],
  controllers: [],
  providers: [],
  exports: [],
})
export class WebhooksModule {}
