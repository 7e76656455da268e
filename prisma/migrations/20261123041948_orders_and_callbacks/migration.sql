-- CreateEnum
CREATE TYPE "OrderStatus" AS ENUM ('PENDING', 'PROCESSING', 'SUCCEEDED', 'FAILED', 'UNKNOWN', 'EXPIRED');

-- CreateEnum
CREATE TYPE "CallbackResult" AS ENUM ('APPLIED', 'DUPLICATE', 'CONFLICT', 'REJECTED');

-- CreateTable
CREATE TABLE "orders" (
    "id" UUID NOT NULL,
    "reference" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "status" "OrderStatus" NOT NULL DEFAULT 'PENDING',
    "amount" DECIMAL(24,4) NOT NULL,
    "currency" VARCHAR(3) NOT NULL,
    "service" INTEGER NOT NULL,
    "wallet" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "payer" TEXT NOT NULL,
    "payer_email" TEXT NOT NULL,
    "provider_reference" TEXT,
    "provider_transaction_reference" TEXT,
    "failure_reason" TEXT,
    "needs_review" BOOLEAN NOT NULL DEFAULT false,
    "submitted_at" TIMESTAMPTZ(3),
    "processing_since" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "orders_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "order_status_changes" (
    "id" BIGSERIAL NOT NULL,
    "order_id" UUID NOT NULL,
    "from_status" "OrderStatus",
    "to_status" "OrderStatus" NOT NULL,
    "reason" TEXT NOT NULL,
    "detail" TEXT,
    "callback_id" UUID,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "order_status_changes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "provider_callbacks" (
    "id" UUID NOT NULL,
    "order_id" UUID,
    "path_order_id" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "result" "CallbackResult" NOT NULL,
    "method" TEXT NOT NULL,
    "query" JSONB NOT NULL,
    "headers" JSONB NOT NULL,
    "content_type" TEXT,
    "raw_body" TEXT,
    "remote_ip" TEXT,
    "request_id" TEXT,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "provider_callbacks_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "orders_reference_key" ON "orders"("reference");

-- CreateIndex
CREATE INDEX "orders_customer_id_created_at_id_idx" ON "orders"("customer_id", "created_at" DESC, "id");

-- CreateIndex
CREATE INDEX "orders_created_at_id_idx" ON "orders"("created_at" DESC, "id");

-- CreateIndex
CREATE INDEX "orders_status_processing_since_idx" ON "orders"("status", "processing_since");

-- CreateIndex
CREATE INDEX "order_status_changes_order_id_id_idx" ON "order_status_changes"("order_id", "id");

-- CreateIndex
CREATE INDEX "provider_callbacks_order_id_received_at_idx" ON "provider_callbacks"("order_id", "received_at");

-- CreateIndex
CREATE INDEX "provider_callbacks_received_at_id_idx" ON "provider_callbacks"("received_at" DESC, "id");

-- AddForeignKey
ALTER TABLE "order_status_changes" ADD CONSTRAINT "order_status_changes_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "provider_callbacks" ADD CONSTRAINT "provider_callbacks_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE SET NULL ON UPDATE CASCADE;
