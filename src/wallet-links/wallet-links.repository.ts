import { Injectable } from '@nestjs/common';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../database/prisma.service';
import type { NewWalletLink, WalletLinkFilter, WalletLinkPageRequest, WalletLinkRecord } from './wallet-link.types';

type WalletLinkRow = Prisma.WalletLinkGetPayload<object>;

/** Wallet links as stored: the apikey only ever as ciphertext. */
@Injectable()
export class WalletLinksRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Stores a link; `undefined` when its matricule is already stored (the unique index decided). */
  async create(link: NewWalletLink): Promise<WalletLinkRecord | undefined> {
    try {
      return toRecord(await this.prisma.walletLink.create({ data: link }));
    } catch (error) {
      if ((error as { code?: unknown })?.code === 'P2002') return undefined;
      throw error;
    }
  }

  async findById(id: string): Promise<WalletLinkRecord | undefined> {
    const row = await this.prisma.walletLink.findUnique({ where: { id } });
    return row ? toRecord(row) : undefined;
  }

  /** Links of this email, compared without case (the provider keys its users by email that way). */
  async findByEmail(email: string): Promise<WalletLinkRecord[]> {
    const rows = await this.prisma.walletLink.findMany({ where: { email: { equals: email, mode: 'insensitive' } }, orderBy: { createdAt: 'asc' } });
    return rows.map(toRecord);
  }

  async list(filter: WalletLinkFilter, page: WalletLinkPageRequest): Promise<WalletLinkRecord[]> {
    const where: Prisma.WalletLinkWhereInput = filter.ownerId ? { ownerId: filter.ownerId } : {};
    const after = page.after;
    const rows = await this.prisma.walletLink.findMany({
      where: after ? { AND: [where, { OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }] }] } : where,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: page.limit,
    });
    return rows.map(toRecord);
  }
}

function toRecord(row: WalletLinkRow): WalletLinkRecord {
  return { ...row };
}
