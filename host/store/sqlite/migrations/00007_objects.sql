-- edge.objects metadata (spec/runtime-v1.md §5.2): one row per (ObjectBucket
-- UID, key) naming the file under the host's data directory that holds
-- the object's bytes; multipart uploads and their parts likewise. Keys
-- are BLOBs of their UTF-8 bytes (listing in byte order); times are Unix
-- milliseconds. Object and part sizes count toward
-- tenant_usage.object_bytes, kept by triggers; deleting the bucket
-- resource deletes its rows in the same transaction (its files go with
-- the data-plane sweep). Nothing here depends on this file's number.

-- +goose Up
CREATE TABLE objects (
    bucket       TEXT    NOT NULL,
    key          BLOB    NOT NULL,
    tenant       TEXT    NOT NULL,
    file         TEXT    NOT NULL,
    size         INTEGER NOT NULL,
    etag         TEXT    NOT NULL,
    content_type TEXT    NOT NULL,
    uploaded_at  INTEGER NOT NULL,
    PRIMARY KEY (bucket, key)
);
CREATE TABLE object_uploads (
    bucket       TEXT    NOT NULL,
    id           TEXT    NOT NULL,
    key          BLOB    NOT NULL,
    tenant       TEXT    NOT NULL,
    content_type TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (bucket, id)
);
CREATE TABLE object_parts (
    bucket TEXT    NOT NULL,
    upload TEXT    NOT NULL,
    number INTEGER NOT NULL,
    tenant TEXT    NOT NULL,
    file   TEXT    NOT NULL,
    size   INTEGER NOT NULL,
    etag   TEXT    NOT NULL,
    PRIMARY KEY (bucket, upload, number)
);
ALTER TABLE tenant_usage ADD COLUMN object_bytes INTEGER NOT NULL DEFAULT 0;

-- +goose StatementBegin
CREATE TRIGGER objects_usage_insert AFTER INSERT ON objects BEGIN
    INSERT INTO tenant_usage (tenant, object_bytes) VALUES (NEW.tenant, NEW.size)
        ON CONFLICT (tenant) DO UPDATE SET object_bytes = object_bytes + excluded.object_bytes;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER objects_usage_update AFTER UPDATE OF size ON objects BEGIN
    UPDATE tenant_usage SET object_bytes = object_bytes - OLD.size + NEW.size WHERE tenant = NEW.tenant;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER objects_usage_delete AFTER DELETE ON objects BEGIN
    UPDATE tenant_usage SET object_bytes = object_bytes - OLD.size WHERE tenant = OLD.tenant;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER object_parts_usage_insert AFTER INSERT ON object_parts BEGIN
    INSERT INTO tenant_usage (tenant, object_bytes) VALUES (NEW.tenant, NEW.size)
        ON CONFLICT (tenant) DO UPDATE SET object_bytes = object_bytes + excluded.object_bytes;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER object_parts_usage_update AFTER UPDATE OF size ON object_parts BEGIN
    UPDATE tenant_usage SET object_bytes = object_bytes - OLD.size + NEW.size WHERE tenant = NEW.tenant;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER object_parts_usage_delete AFTER DELETE ON object_parts BEGIN
    UPDATE tenant_usage SET object_bytes = object_bytes - OLD.size WHERE tenant = OLD.tenant;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER object_uploads_delete AFTER DELETE ON object_uploads BEGIN
    DELETE FROM object_parts WHERE bucket = OLD.bucket AND upload = OLD.id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER resources_objects_delete AFTER DELETE ON resources BEGIN
    DELETE FROM objects WHERE bucket = OLD.uid;
    DELETE FROM object_uploads WHERE bucket = OLD.uid;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER resources_objects_delete;
DROP TRIGGER object_uploads_delete;
DROP TRIGGER object_parts_usage_delete;
DROP TRIGGER object_parts_usage_update;
DROP TRIGGER object_parts_usage_insert;
DROP TRIGGER objects_usage_delete;
DROP TRIGGER objects_usage_update;
DROP TRIGGER objects_usage_insert;
ALTER TABLE tenant_usage DROP COLUMN object_bytes;
DROP TABLE object_parts;
DROP TABLE object_uploads;
DROP TABLE objects;
