import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { DatabaseModule } from '../database/database.module';
import { MetricsModule } from '../metrics/metrics.module';
import { EventsController } from './events.controller';
import { EventsRepository } from './events.repository';
import { EventsService } from './events.service';
import { WebhookEndpointsController } from './webhook-endpoints.controller';
import { WebhookEndpointsRepository } from './webhook-endpoints.repository';
import { WebhookEndpointsService } from './webhook-endpoints.service';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { WebhookDeliveryJob } from './webhook-delivery.job';

/** Events and webhooks: the endpoints the merchant registers, the events, their delivery. */
@Module({
  imports: [AuthModule, DatabaseModule, MetricsModule],
  controllers: [WebhookEndpointsController, EventsController],
  providers: [
    EventsService,
    EventsRepository,
    WebhookEndpointsService,
    WebhookEndpointsRepository,
    WebhookDeliveriesRepository,
    WebhookDeliveryJob,
  ],
  exports: [WebhookEndpointsService],
})
export class WebhooksModule {}
