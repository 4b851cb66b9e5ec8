-- The durable migration ledger of each SQLiteDatabase (spec/lane-v1beta1.md
-- §6.7, repo decision 0055), per database UID, never per name. The head
-- row (migration_ledgers) is what serializes the ledger's writers across
-- replicas: LockMigrationLedger creates it if absent and reads it FOR
-- UPDATE before reading the entries. length is the number of entries;
-- migration_ledger_entries holds them at positions 0 to length-1. A
-- ledger only grows; deleting the database's resource deletes its ledger
-- in the same transaction, so a database created again under the same
-- name (a new UID) starts empty. Deleting an application changes nothing
-- here. Nothing here depends on this file's number: it only adds.

-- +goose Up
CREATE TABLE migration_ledgers (
    database TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    tenant   TEXT COLLATE "C" NOT NULL,
    length   BIGINT           NOT NULL
);

CREATE TABLE migration_ledger_entries (
    database TEXT COLLATE "C" NOT NULL,
    position BIGINT           NOT NULL,
    path     TEXT COLLATE "C" NOT NULL,
    digest   TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (database, position)
);

-- +goose StatementBegin
CREATE FUNCTION takoform_resources_ledger_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM migration_ledger_entries WHERE database = OLD.uid;
    DELETE FROM migration_ledgers WHERE database = OLD.uid;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER resources_ledger_delete AFTER DELETE ON resources FOR EACH ROW EXECUTE FUNCTION takoform_resources_ledger_delete();

-- +goose Down
DROP TRIGGER resources_ledger_delete ON resources;
DROP FUNCTION takoform_resources_ledger_delete();
DROP TABLE migration_ledger_entries;
DROP TABLE migration_ledgers;
