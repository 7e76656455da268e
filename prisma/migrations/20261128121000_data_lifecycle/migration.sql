-- CreateEnum
CREATE TYPE "CustomerErasureStatus" AS ENUM ('PENDING', 'DONE');

-- CreateTable
CREATE TABLE "customer_erasures" (
    "id" UUID NOT NULL,
    "subject" TEXT NOT NULL,
    "status" "CustomerErasureStatus" NOT NULL DEFAULT 'PENDING',
    "requested_by" TEXT NOT NULL,
    "note" TEXT NOT NULL,
    "request_id" TEXT,
    "counts" JSONB,
    "lease_until" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "customer_erasures_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "customer_erasures_subject_created_at_idx" ON "customer_erasures"("subject", "created_at" DESC);

-- CreateIndex
CREATE INDEX "customer_erasures_status_lease_until_idx" ON "customer_erasures"("status", "lease_until");

-- CreateIndex
CREATE INDEX "distributions_payment_receiver_idx" ON "distributions"("payment_receiver");

-- CreateIndex
CREATE INDEX "distribution_shares_matricule_idx" ON "distribution_shares"("matricule");
