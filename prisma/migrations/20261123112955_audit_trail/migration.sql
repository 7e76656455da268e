-- AlterTable
ALTER TABLE "card_operations" ADD COLUMN     "resolution_note" TEXT,
ADD COLUMN     "resolved_at" TIMESTAMPTZ(3),
ADD COLUMN     "resolved_by" TEXT;

-- AlterTable
ALTER TABLE "distributions" ADD COLUMN     "resolution_note" TEXT,
ADD COLUMN     "resolved_at" TIMESTAMPTZ(3),
ADD COLUMN     "resolved_by" TEXT;

-- AlterTable
ALTER TABLE "order_status_changes" ADD COLUMN     "actor" TEXT,
ADD COLUMN     "note" TEXT;

-- CreateTable
CREATE TABLE "audit_events" (
    "id" UUID NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actor" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "resource_type" TEXT NOT NULL,
    "resource_id" TEXT,
    "request_id" TEXT,
    "note" TEXT,
    "details" JSONB,

    CONSTRAINT "audit_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "audit_events_at_id_idx" ON "audit_events"("at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "audit_events_actor_at_id_idx" ON "audit_events"("actor", "at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "audit_events_action_at_id_idx" ON "audit_events"("action", "at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "audit_events_resource_id_at_id_idx" ON "audit_events"("resource_id", "at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "card_operations_status_created_at_id_idx" ON "card_operations"("status", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "distributions_status_created_at_id_idx" ON "distributions"("status", "created_at" DESC, "id" DESC);

-- The audit trail is append-only at the database level: whoever holds the service's credentials
-- (the API, a script, a migration written later) cannot rewrite or erase what people did.
-- The body is an escape string with each semicolon written \073: the migration runner splits
-- scripts on semicolons and does not know dollar quoting.
CREATE FUNCTION "audit_events_refuse_change"() RETURNS trigger LANGUAGE plpgsql AS
E'BEGIN RAISE EXCEPTION ''audit_events is append-only: % refused'', TG_OP USING ERRCODE = ''insufficient_privilege''\073 END\073';

CREATE TRIGGER "audit_events_no_update_or_delete" BEFORE UPDATE OR DELETE ON "audit_events"
  FOR EACH ROW EXECUTE FUNCTION "audit_events_refuse_change"();

CREATE TRIGGER "audit_events_no_truncate" BEFORE TRUNCATE ON "audit_events"
  FOR EACH STATEMENT EXECUTE FUNCTION "audit_events_refuse_change"();
