import { Module } from '@nestjs/common';
import { PrismaService } from './prisma.service';

/** PrismaService for the repositories of the modules that import it. */
@Module({ providers: [PrismaService], exports: [PrismaService] })
export class DatabaseModule {}
