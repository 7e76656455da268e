import { Module } from '@nestjs/common';
import { PrismaService } from './prisma.service';
import { ReplicaReads } from './replica-reads.service';

/** PrismaService (the primary) and ReplicaReads (the finance reads) for the repositories of the modules that import it. */
@Module({ providers: [PrismaService, ReplicaReads], exports: [PrismaService, ReplicaReads] })
export class DatabaseModule {}
