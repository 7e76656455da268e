-- The agent budget becomes a counter per minute, taken in one statement (no advisory lock held
-- across statements). The calls of the last hour are carried over, so the budget holds through
-- the upgrade.

-- CreateTable
CREATE TABLE "agent_budget_buckets" (
    "bucket" TIMESTAMPTZ(3) NOT NULL,
    "used" INTEGER NOT NULL,

    CONSTRAINT "agent_budget_buckets_pkey" PRIMARY KEY ("bucket")
);

INSERT INTO "agent_budget_buckets" ("bucket", "used")
SELECT date_trunc('minute', "taken_at"), count(*)::int FROM "agent_budget_slots"
WHERE "taken_at" > now() - interval '61 minutes'
GROUP BY 1;

-- DropTable
DROP TABLE "agent_budget_slots";
