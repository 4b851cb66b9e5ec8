-- SQLiteDatabase bytes in the database (spec/runtime-v1.md §10.5, repo
-- decision 0063): one replica owns a database at a time under the lease
-- 'sql/' || uid and runs it from a local copy; before answering a call
-- that changed it, the owner stores the pages the SQLite transaction
-- changed here, under that lease's fence, so another replica can rebuild
-- the database from these rows once the owner is gone. sql_databases
-- holds each database's page count; sql_pages its 4096-byte pages by
-- page number (1-based). peer_keys holds the key replicas authenticate
-- their forwarded calls with. Deleting the SQLiteDatabase resource
-- deletes its pages, its row and its lease in the same transaction.
-- Nothing here depends on this file's number.

-- +goose Up
CREATE TABLE sql_databases (
    uid       TEXT   NOT NULL PRIMARY KEY,
    pages     BIGINT NOT NULL,
    commits   BIGINT NOT NULL,
    stored_at BIGINT NOT NULL
);
CREATE TABLE sql_pages (
    uid  TEXT   NOT NULL,
    pgno BIGINT NOT NULL,
    data BYTEA  NOT NULL,
    PRIMARY KEY (uid, pgno)
);
ALTER TABLE sql_pages ALTER COLUMN data SET STORAGE EXTERNAL;
CREATE TABLE peer_keys (
    name       TEXT   NOT NULL PRIMARY KEY,
    key        BYTEA  NOT NULL,
    created_at BIGINT NOT NULL
);

-- +goose StatementBegin
CREATE FUNCTION takoform_resources_sql_pages_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM sql_pages WHERE uid = OLD.uid;
    DELETE FROM sql_databases WHERE uid = OLD.uid;
    DELETE FROM leases WHERE name = 'sql/' || OLD.uid;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER resources_sql_pages_delete AFTER DELETE ON resources FOR EACH ROW
    WHEN (OLD.kind = 'SQLiteDatabase') EXECUTE FUNCTION takoform_resources_sql_pages_delete();

-- +goose Down
DROP TRIGGER resources_sql_pages_delete ON resources;
DROP FUNCTION takoform_resources_sql_pages_delete();
DROP TABLE peer_keys;
DROP TABLE sql_pages;
DROP TABLE sql_databases;
