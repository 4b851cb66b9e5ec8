-- edge.objects bodies in the database (spec/runtime-v1.md §10.5, repo
-- decision 0061): every replica serves every object, so a body is no
-- longer a file under one replica's data directory but a run of BYTEA
-- chunks of at most 1 MiB (store.ObjectChunkBytes) keyed by (ObjectBucket
-- UID, body name, chunk number), the body name being what objects.file
-- and object_parts.file hold. stored_at (Unix milliseconds) lets the
-- sweep remove the chunks of a body nothing names once its newest chunk
-- is an hour old; the indexes on file make that check cheap. Deleting
-- the bucket resource deletes its chunks in the same transaction.
-- Nothing here depends on this file's number.

-- +goose Up
CREATE TABLE object_chunks (
    bucket    TEXT   NOT NULL,
    name      TEXT   NOT NULL,
    seq       BIGINT NOT NULL,
    data      BYTEA  NOT NULL,
    stored_at BIGINT NOT NULL,
    PRIMARY KEY (bucket, name, seq)
);
ALTER TABLE object_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
CREATE INDEX objects_file ON objects (bucket, file);
CREATE INDEX object_parts_file ON object_parts (bucket, file);

-- +goose StatementBegin
CREATE FUNCTION takoform_resources_object_chunks_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM object_chunks WHERE bucket = OLD.uid;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER resources_object_chunks_delete AFTER DELETE ON resources FOR EACH ROW EXECUTE FUNCTION takoform_resources_object_chunks_delete();

-- +goose Down
DROP TRIGGER resources_object_chunks_delete ON resources;
DROP FUNCTION takoform_resources_object_chunks_delete();
DROP INDEX object_parts_file;
DROP INDEX objects_file;
DROP TABLE object_chunks;
