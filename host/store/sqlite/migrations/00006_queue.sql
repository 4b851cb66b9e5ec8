-- edge.queue messages a producer binding sent (spec/runtime-v1.md §5.4),
-- durable for the consumers that deliver them (§2.6). One row per
-- (AtLeastOnceQueue UID, message id); body is the producer's exact
-- bytes; times are Unix milliseconds; attempts counts deliveries so far.
-- size (the body's bytes) counts toward tenant_usage.queue_bytes, kept by
-- triggers; deleting the queue resource deletes its messages in the same
-- transaction. Nothing here depends on this file's number: it only adds.

-- +goose Up
CREATE TABLE queue_messages (
    queue          TEXT    NOT NULL,
    id             TEXT    NOT NULL,
    tenant         TEXT    NOT NULL,
    body           BLOB    NOT NULL,
    accepted_at    INTEGER NOT NULL,
    deliverable_at INTEGER NOT NULL,
    attempts       INTEGER NOT NULL DEFAULT 0,
    size           INTEGER NOT NULL,
    PRIMARY KEY (queue, id)
);
CREATE INDEX queue_messages_deliverable ON queue_messages (queue, deliverable_at, id);
ALTER TABLE tenant_usage ADD COLUMN queue_bytes INTEGER NOT NULL DEFAULT 0;

-- +goose StatementBegin
CREATE TRIGGER queue_messages_usage_insert AFTER INSERT ON queue_messages BEGIN
    INSERT INTO tenant_usage (tenant, queue_bytes) VALUES (NEW.tenant, NEW.size)
        ON CONFLICT (tenant) DO UPDATE SET queue_bytes = queue_bytes + excluded.queue_bytes;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER queue_messages_usage_delete AFTER DELETE ON queue_messages BEGIN
    UPDATE tenant_usage SET queue_bytes = queue_bytes - OLD.size WHERE tenant = OLD.tenant;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER resources_queue_delete AFTER DELETE ON resources BEGIN
    DELETE FROM queue_messages WHERE queue = OLD.uid;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER resources_queue_delete;
DROP TRIGGER queue_messages_usage_delete;
DROP TRIGGER queue_messages_usage_insert;
ALTER TABLE tenant_usage DROP COLUMN queue_bytes;
DROP TABLE queue_messages;
