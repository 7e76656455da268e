-- A wallet link is claimed (a PENDING row, unique by lower(email)) before the provider is asked,
-- so that concurrent requests for one email, on any instance, make one provider call.

-- AlterTable
ALTER TABLE "wallet_links" ADD COLUMN     "claim_expires_at" TIMESTAMPTZ(3),
ADD COLUMN     "email_key" TEXT,
ADD COLUMN     "status" TEXT NOT NULL DEFAULT 'LINKED',
ALTER COLUMN "matricule" DROP NOT NULL,
ALTER COLUMN "apikey_encrypted" DROP NOT NULL;

-- Existing links keep their email as the key. Where a race already stored one email twice, only
-- the oldest link holds the key (the others stay readable and still count as links of that email).
UPDATE "wallet_links" AS w SET "email_key" = lower(w."email")
WHERE w."id" = (
  SELECT x."id" FROM "wallet_links" AS x WHERE lower(x."email") = lower(w."email") ORDER BY x."created_at", x."id" LIMIT 1
);

-- CreateIndex
CREATE UNIQUE INDEX "wallet_links_email_key_key" ON "wallet_links"("email_key");
