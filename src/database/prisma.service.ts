import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client';
import type { AppConfig } from '../config/app-config';
import { InjectConfig } from '../config/config.module';

export const DATABASE_POOL_SIZE = 10;
/** How long a query waits for a connection (a free slot of the pool, or a new one) before it fails: answered 503, never a request hanging forever on a lost database. */
export const DATABASE_CONNECT_TIMEOUT_MS = 10_000;

/** The one Prisma client of the process, connected through adapter-pg (real PostgreSQL or the embedded one). */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleInit, OnModuleDestroy {
  constructor(@InjectConfig() config: AppConfig) {
    if (!config.databaseUrl) throw new Error('PrismaService needs a database URL (the embedded database is started before the app)');
    super({
      adapter: new PrismaPg({
        connectionString: config.databaseUrl,
        max: DATABASE_POOL_SIZE,
        connectionTimeoutMillis: DATABASE_CONNECT_TIMEOUT_MS,
      }),
    });
  }

  async onModuleInit() {
    await this.$connect();
  }

  async onModuleDestroy() {
    await this.$disconnect();
  }
}
