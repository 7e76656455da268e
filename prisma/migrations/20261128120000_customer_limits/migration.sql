-- CreateTable
CREATE TABLE "customer_budget_buckets" (
    "subject" TEXT NOT NULL,
    "bucket" TIMESTAMPTZ(3) NOT NULL,
    "used" INTEGER NOT NULL,

    CONSTRAINT "customer_budget_buckets_pkey" PRIMARY KEY ("subject","bucket")
);

-- CreateTable
CREATE TABLE "customer_limits" (
    "subject" TEXT NOT NULL,
    "provider_calls_per_hour" INTEGER NOT NULL,
    "note" TEXT NOT NULL,
    "set_by" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "customer_limits_pkey" PRIMARY KEY ("subject")
);

-- CreateIndex
CREATE INDEX "customer_budget_buckets_bucket_idx" ON "customer_budget_buckets"("bucket");
