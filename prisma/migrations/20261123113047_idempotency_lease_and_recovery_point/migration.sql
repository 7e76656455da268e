-- AlterTable
ALTER TABLE "idempotency_records" ADD COLUMN     "lease_until" TIMESTAMPTZ(3),
ADD COLUMN     "resource_id" UUID,
ADD COLUMN     "resource_type" TEXT;
