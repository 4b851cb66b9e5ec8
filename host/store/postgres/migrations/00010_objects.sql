-- edge.objects metadata (spec/runtime-v1.md §5.2): one row per (ObjectBucket
-- UID, key) naming the file under the host's data directory that holds
-- the object's bytes; multipart uploads and their parts likewise. Keys
-- are BYTEA of their UTF-8 bytes (listing in byte order); times are Unix
-- milliseconds. Object and part sizes are added to
-- tenant_usage.object_bytes on the session's shard row by triggers;
-- deleting the bucket resource deletes its rows in the same transaction
-- (its files go with the data-plane sweep). Nothing here depends on this
-- file's number.

-- +goose Up
CREATE TABLE objects (
    bucket       TEXT   NOT NULL,
    key          BYTEA  NOT NULL,
    tenant       TEXT   NOT NULL,
    file         TEXT   NOT NULL,
    size         BIGINT NOT NULL,
    etag         TEXT   NOT NULL,
    content_type TEXT   NOT NULL,
    uploaded_at  BIGINT NOT NULL,
    PRIMARY KEY (bucket, key)
);
CREATE TABLE object_uploads (
    bucket       TEXT   NOT NULL,
    id           TEXT   NOT NULL,
    key          BYTEA  NOT NULL,
    tenant       TEXT   NOT NULL,
    content_type TEXT   NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (bucket, id)
);
CREATE TABLE object_parts (
    bucket TEXT    NOT NULL,
    upload TEXT    NOT NULL,
    number INTEGER NOT NULL,
    tenant TEXT    NOT NULL,
    file   TEXT    NOT NULL,
    size   BIGINT  NOT NULL,
    etag   TEXT    NOT NULL,
    PRIMARY KEY (bucket, upload, number)
);
ALTER TABLE tenant_usage ADD COLUMN object_bytes BIGINT NOT NULL DEFAULT 0;

-- +goose StatementBegin
CREATE FUNCTION takoform_object_usage() RETURNS trigger LANGUAGE plpgsql AS $$
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
        INSERT INTO tenant_usage (tenant, resources, artifact_bytes, object_bytes)
            VALUES (row_tenant || E'\x1f' || (pg_backend_pid() % 128)::TEXT, 0, 0, delta)
            ON CONFLICT (tenant) DO UPDATE SET object_bytes = tenant_usage.object_bytes + excluded.object_bytes;
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION takoform_object_uploads_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM object_parts WHERE bucket = OLD.bucket AND upload = OLD.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION takoform_resources_objects_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM objects WHERE bucket = OLD.uid;
    DELETE FROM object_uploads WHERE bucket = OLD.uid;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER objects_usage AFTER INSERT OR UPDATE OR DELETE ON objects FOR EACH ROW EXECUTE FUNCTION takoform_object_usage();
CREATE TRIGGER object_parts_usage AFTER INSERT OR UPDATE OR DELETE ON object_parts FOR EACH ROW EXECUTE FUNCTION takoform_object_usage();
CREATE TRIGGER object_uploads_delete AFTER DELETE ON object_uploads FOR EACH ROW EXECUTE FUNCTION takoform_object_uploads_delete();
CREATE TRIGGER resources_objects_delete AFTER DELETE ON resources FOR EACH ROW EXECUTE FUNCTION takoform_resources_objects_delete();

-- +goose Down
DROP TRIGGER resources_objects_delete ON resources;
DROP TRIGGER object_uploads_delete ON object_uploads;
DROP TRIGGER object_parts_usage ON object_parts;
DROP TRIGGER objects_usage ON objects;
DROP FUNCTION takoform_resources_objects_delete();
DROP FUNCTION takoform_object_uploads_delete();
DROP FUNCTION takoform_object_usage();
ALTER TABLE tenant_usage DROP COLUMN object_bytes;
DROP TABLE object_parts;
DROP TABLE object_uploads;
DROP TABLE objects;
