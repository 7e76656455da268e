-- CreateTable
CREATE TABLE "provider_tokens" (
    "cache_key" TEXT NOT NULL,
    "token_encrypted" TEXT,
    "expires_at" TIMESTAMPTZ(3),
    "obtained_at" TIMESTAMPTZ(3),
    "refresh_lease_until" TIMESTAMPTZ(3),
    "refresh_lease_owner" TEXT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "provider_tokens_pkey" PRIMARY KEY ("cache_key")
);

-- CreateTable
CREATE TABLE "provider_calls" (
    "id" UUID NOT NULL,
    "area" TEXT NOT NULL,
    "method" TEXT NOT NULL,
    "endpoint" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "http_status" INTEGER,
    "outcome" TEXT NOT NULL,
    "error_code" TEXT,
    "duration_ms" INTEGER NOT NULL,
    "request_id" TEXT,
    "request_body" JSONB,
    "response_body" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "provider_calls_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "agent_budget_slots" (
    "id" BIGSERIAL NOT NULL,
    "taken_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "endpoint" TEXT NOT NULL,

    CONSTRAINT "agent_budget_slots_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "idempotency_records" (
    "id" UUID NOT NULL,
    "user_id" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "response_status" INTEGER,
    "response_body" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "idempotency_records_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "provider_calls_created_at_idx" ON "provider_calls"("created_at");

-- CreateIndex
CREATE INDEX "provider_calls_endpoint_created_at_idx" ON "provider_calls"("endpoint", "created_at");

-- CreateIndex
CREATE INDEX "agent_budget_slots_taken_at_idx" ON "agent_budget_slots"("taken_at");

-- CreateIndex
CREATE INDEX "idempotency_records_expires_at_idx" ON "idempotency_records"("expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "idempotency_records_user_id_scope_key_key" ON "idempotency_records"("user_id", "scope", "key");
