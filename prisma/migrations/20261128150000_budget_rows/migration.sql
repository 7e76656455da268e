-- The rolling hour of the /api/agent/* budget, merchant-wide and per customer, becomes one row each
-- instead of a row per minute: `totals` holds how many calls had been taken by the end of each of
-- the last 62 minutes (newest first, `minute` the newest in minutes since the Unix epoch), so a take
-- reads and locks one row per budget and counts with one subtraction instead of summing up to 61
-- buckets, and every take locks the same rows in the same order (ADR 0009). The calls of the last
-- hour are carried over, so the budgets hold through the upgrade.

-- CreateTable
CREATE TABLE "agent_budgets" (
    "api" TEXT NOT NULL,
    "minute" INTEGER NOT NULL,
    "totals" INTEGER[],

    CONSTRAINT "agent_budgets_pkey" PRIMARY KEY ("api")
);

-- CreateTable
CREATE TABLE "customer_budgets" (
    "subject" TEXT NOT NULL,
    "minute" INTEGER NOT NULL,
    "totals" INTEGER[],

    CONSTRAINT "customer_budgets_pkey" PRIMARY KEY ("subject")
);

-- CreateIndex
CREATE INDEX "customer_budgets_minute_idx" ON "customer_budgets"("minute");

WITH counted AS (
  SELECT 'agent' AS "api", floor(date_part('epoch', "bucket") / 60)::int AS "minute", "used"
  FROM "agent_budget_buckets" WHERE "bucket" > now() - interval '61 minutes' AND "used" > 0
)
INSERT INTO "agent_budgets" ("api", "minute", "totals")
SELECT s."api", s."newest",
  ARRAY(SELECT COALESCE(sum(c."used") FILTER (WHERE c."minute" <= s."newest" + 1 - k), 0)::int
        FROM generate_series(1, 62) k CROSS JOIN counted c WHERE c."api" = s."api" GROUP BY k ORDER BY k)
FROM (SELECT "api", max("minute") AS "newest" FROM counted GROUP BY "api") s;

WITH counted AS (
  SELECT "subject", floor(date_part('epoch', "bucket") / 60)::int AS "minute", "used"
  FROM "customer_budget_buckets" WHERE "bucket" > now() - interval '61 minutes' AND "used" > 0
)
INSERT INTO "customer_budgets" ("subject", "minute", "totals")
SELECT s."subject", s."newest",
  ARRAY(SELECT COALESCE(sum(c."used") FILTER (WHERE c."minute" <= s."newest" + 1 - k), 0)::int
        FROM generate_series(1, 62) k CROSS JOIN counted c WHERE c."subject" = s."subject" GROUP BY k ORDER BY k)
FROM (SELECT "subject", max("minute") AS "newest" FROM counted GROUP BY "subject") s;

-- DropTable
DROP TABLE "agent_budget_buckets";

-- DropTable
DROP TABLE "customer_budget_buckets";
