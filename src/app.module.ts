import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import type { Logger } from 'pino';
import { AuthModule } from './auth/auth.module';
import { CallbacksModule } from './callbacks/callbacks.module';
import { CardsModule } from './cards/cards.module';
import { ProblemDetailsFilter } from './http/problem-details.filter';
import type { AppConfig } from './config/app-config';
import { configModuleFor } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { HealthModule } from './health/health.module';
import { IdempotencyModule } from './idempotency/idempotency.module';
import { LoggingModule } from './logging/logging.module';
import { MetricsModule } from './metrics/metrics.module';
import { OrdersModule } from './orders/orders.module';
import { ProviderModule } from './provider/provider.module';
import { ProviderOperationsModule } from './provider-operations/provider-operations.module';
import { ReportsModule } from './reports/reports.module';
import { WalletLinksModule } from './wallet-links/wallet-links.module';
import { DistributionsModule } from './distributions/distributions.module';
import { AuditModule } from './audit/audit.module';
import { ResolutionsModule } from './resolutions/resolutions.module';
import { WebhooksModule } from './webhooks/webhooks.module';
import { CustomerLimitsModule } from './customer-limits/customer-limits.module';
import { RetentionModule } from './retention/retention.module';
import { CustomersModule } from './customers/customers.module';

@Module({})
export class AppModule {
  /** `config` is final: the embedded database and the sandbox, when used, are already running. */
  static forRoot(config: AppConfig, logger: Logger, extraImports: DynamicModule['imports'] = []): DynamicModule {
    return {
      module: AppModule,
      imports: [
        configModuleFor(config),
        LoggingModule.forRoot(logger),
        MetricsModule,
        DatabaseModule,
        AuthModule,
        ProviderModule,
        IdempotencyModule,
        ProviderOperationsModule,
        OrdersModule,
        CallbacksModule,
        CardsModule,
        WalletLinksModule,
        DistributionsModule,
        ReportsModule,
        AuditModule,
        CustomerLimitsModule,
        ResolutionsModule,
        WebhooksModule,
        RetentionModule,
        CustomersModule,
        HealthModule,
        ...extraImports,
      ],
      providers: [{ provide: APP_FILTER, useClass: ProblemDetailsFilter }],
    };
  }
}
