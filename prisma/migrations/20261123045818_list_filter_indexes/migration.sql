-- DropIndex
DROP INDEX "card_users_created_at_id_idx";

-- DropIndex
DROP INDEX "card_users_owner_id_created_at_id_idx";

-- DropIndex
DROP INDEX "cards_owner_id_created_at_id_idx";

-- DropIndex
DROP INDEX "distributions_created_at_id_idx";

-- DropIndex
DROP INDEX "orders_created_at_id_idx";

-- DropIndex
DROP INDEX "orders_customer_id_created_at_id_idx";

-- DropIndex
DROP INDEX "provider_callbacks_received_at_id_idx";

-- DropIndex
DROP INDEX "wallet_links_created_at_id_idx";

-- DropIndex
DROP INDEX "wallet_links_owner_id_created_at_id_idx";

-- CreateIndex
CREATE INDEX "card_users_owner_id_created_at_id_idx" ON "card_users"("owner_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "card_users_created_at_id_idx" ON "card_users"("created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "cards_owner_id_created_at_id_idx" ON "cards"("owner_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "distributions_created_at_id_idx" ON "distributions"("created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "orders_customer_id_created_at_id_idx" ON "orders"("customer_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "orders_created_at_id_idx" ON "orders"("created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "orders_status_created_at_id_idx" ON "orders"("status", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "orders_currency_created_at_id_idx" ON "orders"("currency", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "orders_needs_review_created_at_id_idx" ON "orders"("needs_review", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "provider_callbacks_received_at_id_idx" ON "provider_callbacks"("received_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "provider_callbacks_result_received_at_id_idx" ON "provider_callbacks"("result", "received_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "provider_callbacks_outcome_received_at_id_idx" ON "provider_callbacks"("outcome", "received_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "wallet_links_owner_id_created_at_id_idx" ON "wallet_links"("owner_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "wallet_links_created_at_id_idx" ON "wallet_links"("created_at" DESC, "id" DESC);
