-- CreateTable
CREATE TABLE "card_users" (
    "id" UUID NOT NULL,
    "owner_id" TEXT NOT NULL,
    "provider_user_id" TEXT NOT NULL,
    "provider_reference" TEXT NOT NULL,
    "first_name" TEXT NOT NULL,
    "last_name" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "country_code" VARCHAR(2) NOT NULL,
    "contact" TEXT NOT NULL,
    "dob" VARCHAR(10) NOT NULL,
    "is_business" BOOLEAN NOT NULL,
    "billing_address" TEXT NOT NULL,
    "billing_city" TEXT NOT NULL,
    "billing_country" TEXT NOT NULL,
    "id_number_encrypted" TEXT NOT NULL,
    "business_name" TEXT,
    "billing_state" TEXT NOT NULL,
    "billing_postal_code" TEXT NOT NULL,
    "provider_card_ids" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "last_synced_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "card_users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "cards" (
    "id" UUID NOT NULL,
    "card_user_id" UUID NOT NULL,
    "owner_id" TEXT NOT NULL,
    "provider_card_id" TEXT NOT NULL,
    "last4" VARCHAR(4) NOT NULL,
    "expiry" TEXT NOT NULL,
    "currency" VARCHAR(3) NOT NULL,
    "status" TEXT NOT NULL,
    "last_known_balance" DECIMAL(24,4),
    "balance_synced_at" TIMESTAMPTZ(3),
    "terminated_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "cards_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "card_operations" (
    "id" UUID NOT NULL,
    "card_user_id" UUID NOT NULL,
    "card_id" UUID,
    "requested_by" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "amount" DECIMAL(24,4),
    "currency" VARCHAR(3),
    "status" TEXT NOT NULL,
    "provider_transaction_id" TEXT,
    "new_balance" DECIMAL(24,4),
    "provider_response" JSONB,
    "failure_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "card_operations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "wallet_links" (
    "id" UUID NOT NULL,
    "owner_id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "phone" TEXT NOT NULL,
    "phone_country" TEXT NOT NULL,
    "matricule" TEXT NOT NULL,
    "apikey_encrypted" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "wallet_links_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "distributions" (
    "id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "created_by" TEXT NOT NULL,
    "payment_receiver" TEXT,
    "payment_id" TEXT,
    "payer" TEXT,
    "amount" DECIMAL(24,4) NOT NULL,
    "currency" VARCHAR(3) NOT NULL,
    "status" TEXT NOT NULL,
    "provider_message" TEXT,
    "failure_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "distributions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "distribution_shares" (
    "id" BIGSERIAL NOT NULL,
    "distribution_id" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "matricule" TEXT NOT NULL,
    "rate" DECIMAL(7,4) NOT NULL,
    "share_minor" BIGINT NOT NULL,

    CONSTRAINT "distribution_shares_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "card_users_provider_user_id_key" ON "card_users"("provider_user_id");

-- CreateIndex
CREATE UNIQUE INDEX "card_users_provider_reference_key" ON "card_users"("provider_reference");

-- CreateIndex
CREATE INDEX "card_users_owner_id_created_at_id_idx" ON "card_users"("owner_id", "created_at" DESC, "id");

-- CreateIndex
CREATE INDEX "card_users_created_at_id_idx" ON "card_users"("created_at" DESC, "id");

-- CreateIndex
CREATE UNIQUE INDEX "cards_provider_card_id_key" ON "cards"("provider_card_id");

-- CreateIndex
CREATE INDEX "cards_owner_id_created_at_id_idx" ON "cards"("owner_id", "created_at" DESC, "id");

-- CreateIndex
CREATE INDEX "cards_card_user_id_idx" ON "cards"("card_user_id");

-- CreateIndex
CREATE INDEX "card_operations_card_id_created_at_idx" ON "card_operations"("card_id", "created_at" DESC);

-- CreateIndex
CREATE INDEX "card_operations_card_user_id_created_at_idx" ON "card_operations"("card_user_id", "created_at" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "wallet_links_matricule_key" ON "wallet_links"("matricule");

-- CreateIndex
CREATE INDEX "wallet_links_owner_id_created_at_id_idx" ON "wallet_links"("owner_id", "created_at" DESC, "id");

-- CreateIndex
CREATE INDEX "wallet_links_created_at_id_idx" ON "wallet_links"("created_at" DESC, "id");

-- CreateIndex
CREATE UNIQUE INDEX "distributions_payment_id_key" ON "distributions"("payment_id");

-- CreateIndex
CREATE INDEX "distributions_created_at_id_idx" ON "distributions"("created_at" DESC, "id");

-- CreateIndex
CREATE UNIQUE INDEX "distribution_shares_distribution_id_position_key" ON "distribution_shares"("distribution_id", "position");

-- CreateIndex
CREATE UNIQUE INDEX "distribution_shares_distribution_id_matricule_key" ON "distribution_shares"("distribution_id", "matricule");

-- AddForeignKey
ALTER TABLE "cards" ADD CONSTRAINT "cards_card_user_id_fkey" FOREIGN KEY ("card_user_id") REFERENCES "card_users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "card_operations" ADD CONSTRAINT "card_operations_card_user_id_fkey" FOREIGN KEY ("card_user_id") REFERENCES "card_users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "card_operations" ADD CONSTRAINT "card_operations_card_id_fkey" FOREIGN KEY ("card_id") REFERENCES "cards"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "distribution_shares" ADD CONSTRAINT "distribution_shares_distribution_id_fkey" FOREIGN KEY ("distribution_id") REFERENCES "distributions"("id") ON DELETE CASCADE ON UPDATE CASCADE;
