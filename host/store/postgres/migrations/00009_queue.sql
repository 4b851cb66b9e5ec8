-- edge.queue messages a producer binding sent (spec/runtime-v1.md §5.4),
-- durable for the consumers that deliver them (§2.6). One row per
-- (AtLeastOnceQueue UID, message id); body is the producer's exact
-- bytes; times are Unix milliseconds; attempts counts deliveries so far.
-- size (the body's bytes) is added to tenant_usage.queue_bytes on the
-- session's shard row by a trigger, as 00007 does for KV; deleting the
-- queue resource deletes its messages in the same transaction. Nothing
-- here depends on this file's number: it only adds.

-- +goose Up
CREATE TABLE queue_messages (
    queue          TEXT    NOT NULL,
    id             TEXT    NOT NULL,
    tenant         TEXT    NOT NULL,
    body           BYTEA   NOT NULL,
    accepted_at    BIGINT  NOT NULL,
    deliverable_at BIGINT  NOT NULL,
    attempts       INTEGER NOT NULL DEFAULT 0,
    size           BIGINT  NOT NULL,
    PRIMARY KEY (queue, id)
);
CREATE INDEX queue_messages_deliverable ON queue_messages (queue, deliverable_at, id);
ALTER TABLE tenant_usage ADD COLUMN queue_bytes BIGINT NOT NULL DEFAULT 0;

-- +goose StatementBegin
CREATE FUNCTION takoform_queue_usage() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    row_tenant TEXT := NEW.tenant;
    delta BIGINT := NEW.size;
BEGIN
    IF TG_OP = 'DELETE' THEN
        row_tenant := OLD.tenant;
        delta := -OLD.size;
    END IF;
    INSERT INTO tenant_usage (tenant, resources, artifact_bytes, queue_bytes)
        VALUES (row_tenant || E'\x1f' || (pg_backend_pid() % 128)::TEXT, 0, 0, delta)
        ON CONFLICT (tenant) DO UPDATE SET queue_bytes = tenant_usage.queue_bytes + excluded.queue_bytes;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION takoform_resources_queue_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM queue_messages WHERE queue = OLD.uid;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER queue_messages_usage AFTER INSERT OR DELETE ON queue_messages FOR EACH ROW EXECUTE FUNCTION takoform_queue_usage();
CREATE TRIGGER resources_queue_delete AFTER DELETE ON resources FOR EACH ROW EXECUTE FUNCTION takoform_resources_queue_delete();

-- +goose Down
DROP TRIGGER resources_queue_delete ON resources;
DROP TRIGGER queue_messages_usage ON queue_messages;
DROP FUNCTION takoform_resources_queue_delete();
DROP FUNCTION takoform_queue_usage();
ALTER TABLE tenant_usage DROP COLUMN queue_bytes;
DROP TABLE queue_messages;
