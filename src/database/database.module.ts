import { Module } from '@nestjs/common';
import { Database } from './database';
import { ReplicaReads } from './replica-reads.service';

/** Database (the primary) and ReplicaReads (the finance reads) for the repositories of the modules that import it. */
@Module({ providers: [Database, ReplicaReads], exports: [Database, ReplicaReads] })
export class DatabaseModule {}
