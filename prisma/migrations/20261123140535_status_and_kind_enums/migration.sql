-- The status and kind columns of cards, card operations, wallet links and distributions become
-- enums. Existing rows are converted in place (text to enum), never dropped: a value outside the
-- enum makes the migration fail rather than lose the row. Indexes on these columns are rebuilt by
-- ALTER COLUMN ... TYPE itself.

-- CreateEnum
CREATE TYPE "CardStatus" AS ENUM ('ACTIVE', 'FROZEN', 'TERMINATED');

-- CreateEnum
CREATE TYPE "CardOperationKind" AS ENUM ('CREATE', 'TOPUP', 'WITHDRAW', 'FREEZE', 'UNFREEZE', 'TERMINATE', 'TRANSACTIONS');

-- CreateEnum
CREATE TYPE "CardOperationStatus" AS ENUM ('PENDING', 'SUCCEEDED', 'FAILED', 'UNKNOWN');

-- CreateEnum
CREATE TYPE "WalletLinkStatus" AS ENUM ('PENDING', 'LINKED');

-- CreateEnum
CREATE TYPE "DistributionKind" AS ENUM ('init', 'fiat');

-- CreateEnum
CREATE TYPE "DistributionStatus" AS ENUM ('PENDING', 'ACCEPTED', 'REJECTED', 'UNKNOWN');

-- AlterTable
ALTER TABLE "card_operations"
ALTER COLUMN "kind" TYPE "CardOperationKind" USING "kind"::text::"CardOperationKind",
ALTER COLUMN "status" TYPE "CardOperationStatus" USING "status"::text::"CardOperationStatus";

-- AlterTable
ALTER TABLE "cards" ALTER COLUMN "status" TYPE "CardStatus" USING "status"::text::"CardStatus";

-- AlterTable
ALTER TABLE "distributions"
ALTER COLUMN "kind" TYPE "DistributionKind" USING "kind"::text::"DistributionKind",
ALTER COLUMN "status" TYPE "DistributionStatus" USING "status"::text::"DistributionStatus";

-- AlterTable: the text default cannot be cast with the column, so it is dropped and set again.
ALTER TABLE "wallet_links" ALTER COLUMN "status" DROP DEFAULT;
ALTER TABLE "wallet_links" ALTER COLUMN "status" TYPE "WalletLinkStatus" USING "status"::text::"WalletLinkStatus";
ALTER TABLE "wallet_links" ALTER COLUMN "status" SET DEFAULT 'LINKED';
