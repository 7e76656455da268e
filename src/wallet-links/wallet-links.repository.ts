import type { PageRequest } from '../common/pagination';
import { keysetPage } from '../database/list-queries';
import { Injectable } from '@nestjs/common';
import { isUniqueViolation } from '../database/unique-violation';
import type { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../database/prisma.service';
import type { LinkedWallet, WalletLinkClaim, WalletLinkFilter, WalletLinkRecord } from './wallet-link.types';

type WalletLinkRow = Prisma.WalletLinkGetPayload<object>;

/** Only links whose provider answer is stored are links; PENDING rows are claims on an email. */
const LINKED = { status: 'LINKED' } as const;

/** Wallet links as stored: the apikey only ever as ciphertext. */
@Injectable()
export class WalletLinksRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Claims the email for one request, on whatever instance: a PENDING row keyed by lower(email),
   * inserted before the provider is asked. Undefined when the email is linked or claimed by a live
   * claim; a claim whose holder died (lapsed `claim_expires_at`) is taken over, under a new id.
   */
  async claim(claim: WalletLinkClaim, leaseMs: number): Promise<string | undefined> {
    const rows = await this.prisma.$queryRaw<{ id: string }[]>`
      INSERT INTO wallet_links (id, owner_id, email, email_key, phone, phone_country, status, claim_expires_at, created_at)
      VALUES (gen_random_uuid(), ${claim.ownerId}, ${claim.email}, lower(${claim.email}), ${claim.phone}, ${claim.phoneCountry}, 'PENDING',
              now() + make_interval(secs => ${leaseMs / 1000}), now())
      ON CONFLICT (email_key) DO UPDATE
        SET id = EXCLUDED.id, owner_id = EXCLUDED.owner_id, email = EXCLUDED.email, phone = EXCLUDED.phone,
            phone_country = EXCLUDED.phone_country, claim_expires_at = EXCLUDED.claim_expires_at, created_at = EXCLUDED.created_at
        WHERE wallet_links.status = 'PENDING' AND wallet_links.claim_expires_at < now()
      RETURNING id::text AS id`;
    return rows[0]?.id;
  }

  /**
   * Turns the claim into the link. Undefined when the matricule is already stored (the unique
   * index decided) or the claim is no longer ours (it lapsed and was taken over).
   */
  async completeClaim(id: string, linked: LinkedWallet): Promise<WalletLinkRecord | undefined> {
    try {
      const { count } = await this.prisma.walletLink.updateMany({
        where: { id, status: 'PENDING' },
        data: { ...linked, status: 'LINKED', claimExpiresAt: null },
      });
      return count === 1 ? this.findById(id) : undefined;
    } catch (error) {
      if (isUniqueViolation(error)) return undefined;
      throw error;
    }
  }

  /** Gives the email back after the provider was not asked, refused, or could not be read. */
  async releaseClaim(id: string): Promise<void> {
    await this.prisma.walletLink.deleteMany({ where: { id, status: 'PENDING' } });
  }

  async findById(id: string): Promise<WalletLinkRecord | undefined> {
    const row = await this.prisma.walletLink.findFirst({ where: { id, ...LINKED } });
    return row ? toRecord(row) : undefined;
  }

  /** Links of this email, compared without case (the provider keys its users by email that way). */
  async findByEmail(email: string): Promise<WalletLinkRecord[]> {
    const rows = await this.prisma.walletLink.findMany({
      where: { email: { equals: email, mode: 'insensitive' }, ...LINKED },
      orderBy: { createdAt: 'asc' },
    });
    return rows.map(toRecord);
  }

  async list(filter: WalletLinkFilter, page: PageRequest): Promise<WalletLinkRecord[]> {
    const where: Prisma.WalletLinkWhereInput = { ...(filter.ownerId ? { ownerId: filter.ownerId } : {}), ...LINKED };
    const rows = await this.prisma.walletLink.findMany(keysetPage('createdAt', where, page));
    return rows.map(toRecord);
  }
}

/** A LINKED row (the reads above select only those) always has its matricule and apikey. */
function toRecord(row: WalletLinkRow): WalletLinkRecord {
  return {
    id: row.id,
    ownerId: row.ownerId,
    email: row.email,
    phone: row.phone,
    phoneCountry: row.phoneCountry,
    matricule: row.matricule ?? '',
    apikeyEncrypted: row.apikeyEncrypted ?? '',
    createdAt: row.createdAt,
  };
}
