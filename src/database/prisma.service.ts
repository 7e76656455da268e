import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client';
import type { AppConfig } from '../config/app-config';
import { InjectConfig } from '../config/config.module';

export const DATABASE_POOL_SIZE = 10;

/** The one Prisma client of the process, connected through adapter-pg (real PostgreSQL or the embedded one). */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleInit, OnModuleDestroy {
  constructor(@InjectConfig() config: AppConfig) {
    if (!config.databaseUrl) throw new Error('PrismaService needs a database URL (the embedded database is started before the app)');
    super({ adapter: new PrismaPg({ connectionString: config.databaseUrl, max: DATABASE_POOL_SIZE }) });
  }

  async onModuleInit() {
    await this.$connect();
  }

  async onModuleDestroy() {
    await this.$disconnect();
  }
}
