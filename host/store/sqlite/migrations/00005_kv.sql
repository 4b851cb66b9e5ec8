-- edge.kv entries served by the runtime gateway (spec/runtime-v1.md §5.1).
-- One row per (EdgeKVNamespace UID, key); the key is stored as a BLOB of
-- its UTF-8 bytes so the primary key orders a listing by bytes. size is
-- what the entry counts toward its tenant's storage (key + value +
-- metadata bytes), kept in tenant_usage.kv_bytes by triggers. Deleting
-- the namespace resource deletes its entries (and so their usage) in the
-- same transaction. expires_at is Unix milliseconds, NULL without a TTL.
-- Nothing here depends on this file's number: it only adds.

-- +goose Up
CREATE TABLE kv_entries (
    namespace  TEXT    NOT NULL,
    key        BLOB    NOT NULL,
    tenant     TEXT    NOT NULL,
    value      BLOB    NOT NULL,
    metadata   BLOB,
    expires_at INTEGER,
    size       INTEGER NOT NULL,
    PRIMARY KEY (namespace, key)
);
CREATE INDEX kv_entries_expiry ON kv_entries (expires_at) WHERE expires_at IS NOT NULL;
ALTER TABLE tenant_usage ADD COLUMN kv_bytes INTEGER NOT NULL DEFAULT 0;

-- +goose StatementBegin
CREATE TRIGGER kv_entries_usage_insert AFTER INSERT ON kv_entries BEGIN
    INSERT INTO tenant_usage (tenant, kv_bytes) VALUES (NEW.tenant, NEW.size)
        ON CONFLICT (tenant) DO UPDATE SET kv_bytes = kv_bytes + excluded.kv_bytes;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER kv_entries_usage_update AFTER UPDATE OF size ON kv_entries BEGIN
    UPDATE tenant_usage SET kv_bytes = kv_bytes - OLD.size + NEW.size WHERE tenant = NEW.tenant;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER kv_entries_usage_delete AFTER DELETE ON kv_entries BEGIN
    UPDATE tenant_usage SET kv_bytes = kv_bytes - OLD.size WHERE tenant = OLD.tenant;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER resources_kv_delete AFTER DELETE ON resources BEGIN
    DELETE FROM kv_entries WHERE namespace = OLD.uid;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER resources_kv_delete;
DROP TRIGGER kv_entries_usage_delete;
DROP TRIGGER kv_entries_usage_update;
DROP TRIGGER kv_entries_usage_insert;
ALTER TABLE tenant_usage DROP COLUMN kv_bytes;
DROP TABLE kv_entries;
