-- AlterTable
ALTER TABLE "distributions" ADD COLUMN     "provider_request" JSONB,
ADD COLUMN     "provider_response" JSONB,
ADD COLUMN     "receiver_share_minor" BIGINT;
