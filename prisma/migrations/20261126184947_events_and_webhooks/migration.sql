-- CreateEnum
CREATE TYPE "WebhookEndpointStatus" AS ENUM ('ENABLED', 'DISABLED');

-- CreateEnum
CREATE TYPE "WebhookDeliveryStatus" AS ENUM ('PENDING', 'DELIVERED', 'FAILED');

-- CreateTable
CREATE TABLE "events" (
    "id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "resource_type" TEXT NOT NULL,
    "resource_id" UUID NOT NULL,
    "previous_status" TEXT,
    "snapshot" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_endpoints" (
    "id" UUID NOT NULL,
    "url" TEXT NOT NULL,
    "events" TEXT[],
    "description" TEXT,
    "status" "WebhookEndpointStatus" NOT NULL DEFAULT 'ENABLED',
    "secret_encrypted" TEXT NOT NULL,
    "previous_secret_encrypted" TEXT,
    "previous_secret_until" TIMESTAMPTZ(3),
    "disabled_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" UUID NOT NULL,
    "event_id" TEXT NOT NULL,
    "endpoint_id" UUID NOT NULL,
    "status" "WebhookDeliveryStatus" NOT NULL DEFAULT 'PENDING',
    "attempt_count" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "claimed_until" TIMESTAMPTZ(3),
    "claimed_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_attempts" (
    "id" BIGSERIAL NOT NULL,
    "delivery_id" UUID NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "http_status" INTEGER,
    "duration_ms" INTEGER NOT NULL,
    "error" TEXT,
    "response_body" TEXT,

    CONSTRAINT "webhook_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "events_created_at_id_idx" ON "events"("created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "events_type_created_at_id_idx" ON "events"("type", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "events_resource_id_created_at_id_idx" ON "events"("resource_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "webhook_endpoints_created_at_id_idx" ON "webhook_endpoints"("created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "webhook_deliveries_event_id_idx" ON "webhook_deliveries"("event_id");

-- CreateIndex
CREATE INDEX "webhook_deliveries_endpoint_id_idx" ON "webhook_deliveries"("endpoint_id");

-- CreateIndex
CREATE INDEX "webhook_deliveries_status_next_attempt_at_idx" ON "webhook_deliveries"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "webhook_attempts_delivery_id_id_idx" ON "webhook_attempts"("delivery_id", "id");

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "events"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_delivery_id_fkey" FOREIGN KEY ("delivery_id") REFERENCES "webhook_deliveries"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Events are written by the database, in the transaction of the change they describe: whatever
-- statement moves a status (a provider answer, a callback, a sweep, a person's decision, one written
-- later), its event commits with it or not at all, and a table that gets this trigger gets its
-- events. The snapshot is the row as the change left it, every number as its exact text (a JSON
-- number would reach JavaScript as a double). PENDING is where rows start: no event.
-- Bodies are escape strings with each semicolon written \073: the migration runner splits scripts
-- on semicolons and does not know dollar quoting.
CREATE FUNCTION "events_record_status"() RETURNS trigger LANGUAGE plpgsql AS
E'DECLARE
  previous text\073
  snapshot jsonb\073
BEGIN
  IF TG_OP = ''UPDATE'' THEN previous := OLD.status::text\073 END IF\073
  IF NEW.status::text = ''PENDING'' OR previous IS NOT DISTINCT FROM NEW.status::text THEN RETURN NULL\073 END IF\073
  SELECT jsonb_object_agg(key, CASE WHEN jsonb_typeof(value) = ''number'' THEN to_jsonb(value #>> ''{}'') ELSE value END)
    INTO snapshot FROM jsonb_each(to_jsonb(NEW))\073
  INSERT INTO events (id, type, resource_type, resource_id, previous_status, snapshot, created_at)
  VALUES (''evt_'' || replace(gen_random_uuid()::text, ''-'', ''''), TG_ARGV[0] || ''.'' || lower(NEW.status::text),
          TG_ARGV[0], NEW.id, previous, snapshot, now())\073
  RETURN NULL\073
END\073';

-- An order flagged for a person (a callback contradicting its final status) is an event of its own.
CREATE FUNCTION "events_record_review_needed"() RETURNS trigger LANGUAGE plpgsql AS
E'DECLARE
  snapshot jsonb\073
BEGIN
  IF NOT NEW.needs_review OR OLD.needs_review THEN RETURN NULL\073 END IF\073
  SELECT jsonb_object_agg(key, CASE WHEN jsonb_typeof(value) = ''number'' THEN to_jsonb(value #>> ''{}'') ELSE value END)
    INTO snapshot FROM jsonb_each(to_jsonb(NEW))\073
  INSERT INTO events (id, type, resource_type, resource_id, previous_status, snapshot, created_at)
  VALUES (''evt_'' || replace(gen_random_uuid()::text, ''-'', ''''), ''order.review_needed'', ''order'', NEW.id, OLD.status::text,
          snapshot, now())\073
  RETURN NULL\073
END\073';

CREATE TRIGGER "orders_events" AFTER INSERT OR UPDATE OF status ON "orders"
  FOR EACH ROW EXECUTE FUNCTION "events_record_status"('order');

CREATE TRIGGER "orders_review_events" AFTER UPDATE OF needs_review ON "orders"
  FOR EACH ROW EXECUTE FUNCTION "events_record_review_needed"();

CREATE TRIGGER "card_operations_events" AFTER INSERT OR UPDATE OF status ON "card_operations"
  FOR EACH ROW EXECUTE FUNCTION "events_record_status"('card_operation');

CREATE TRIGGER "distributions_events" AFTER INSERT OR UPDATE OF status ON "distributions"
  FOR EACH ROW EXECUTE FUNCTION "events_record_status"('distribution');

-- Each event is to be delivered to every enabled endpoint subscribed to its type (none: all types),
-- in the same transaction: an endpoint registered later does not receive earlier events.
CREATE FUNCTION "events_fan_out"() RETURNS trigger LANGUAGE plpgsql AS
E'BEGIN
  INSERT INTO webhook_deliveries (id, event_id, endpoint_id, status, attempt_count, next_attempt_at, created_at)
  SELECT gen_random_uuid(), NEW.id, e.id, ''PENDING'', 0, now(), now()
  FROM webhook_endpoints e
  WHERE e.status = ''ENABLED'' AND (e.events IS NULL OR cardinality(e.events) = 0 OR NEW.type = ANY(e.events))\073
  RETURN NULL\073
END\073';

CREATE TRIGGER "events_deliveries" AFTER INSERT ON "events"
  FOR EACH ROW EXECUTE FUNCTION "events_fan_out"();
