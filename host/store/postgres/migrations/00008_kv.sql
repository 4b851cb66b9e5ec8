-- edge.kv entries served by the runtime gateway (spec/runtime-v1.md §5.1).
-- One row per (EdgeKVNamespace UID, key); the key is BYTEA holding its
-- UTF-8 bytes so the primary key orders a listing by bytes. size is what
-- the entry counts toward its tenant's storage (key + value + metadata
-- bytes), added to tenant_usage.kv_bytes by a trigger on the session's
-- shard row as 00004's usage triggers do, so KV writes of one tenant never
-- queue on one row. Deleting the namespace resource deletes its entries
-- (and so their usage) in the same transaction. expires_at is Unix
-- milliseconds, NULL without a TTL. Nothing here depends on this file's
-- number: it only adds.

-- +goose Up
CREATE TABLE kv_entries (
    namespace  TEXT   NOT NULL,
    key        BYTEA  NOT NULL,
    tenant     TEXT   NOT NULL,
    value      BYTEA  NOT NULL,
    metadata   BYTEA,
    expires_at BIGINT,
    size       BIGINT NOT NULL,
    PRIMARY KEY (namespace, key)
);
CREATE INDEX kv_entries_expiry ON kv_entries (expires_at) WHERE expires_at IS NOT NULL;
ALTER TABLE tenant_usage ADD COLUMN kv_bytes BIGINT NOT NULL DEFAULT 0;

-- +goose StatementBegin
CREATE FUNCTION takoform_kv_usage() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    row_tenant TEXT;
    delta BIGINT;
BEGIN
    IF TG_OP = 'INSERT' THEN
        row_tenant := NEW.tenant;
        delta := NEW.size;
    ELSIF TG_OP = 'UPDATE' THEN
        row_tenant := NEW.tenant;
        delta := NEW.size - OLD.size;
    ELSE
        row_tenant := OLD.tenant;
        delta := -OLD.size;
    END IF;
    IF delta <> 0 THEN
        INSERT INTO tenant_usage (tenant, resources, artifact_bytes, kv_bytes)
            VALUES (row_tenant || E'\x1f' || (pg_backend_pid() % 128)::TEXT, 0, 0, delta)
            ON CONFLICT (tenant) DO UPDATE SET kv_bytes = tenant_usage.kv_bytes + excluded.kv_bytes;
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION takoform_resources_kv_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM kv_entries WHERE namespace = OLD.uid;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER kv_entries_usage AFTER INSERT OR UPDATE OR DELETE ON kv_entries FOR EACH ROW EXECUTE FUNCTION takoform_kv_usage();
CREATE TRIGGER resources_kv_delete AFTER DELETE ON resources FOR EACH ROW EXECUTE FUNCTION takoform_resources_kv_delete();

-- +goose Down
DROP TRIGGER resources_kv_delete ON resources;
DROP TRIGGER kv_entries_usage ON kv_entries;
DROP FUNCTION takoform_resources_kv_delete();
DROP FUNCTION takoform_kv_usage();
ALTER TABLE tenant_usage DROP COLUMN kv_bytes;
DROP TABLE kv_entries;
