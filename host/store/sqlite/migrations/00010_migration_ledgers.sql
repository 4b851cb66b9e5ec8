-- The durable migration ledger of each SQLiteDatabase (spec/lane-v1beta1.md
-- §6.7, repo decision 0055), per database UID, never per name. The head
-- row (migration_ledgers) is what PostgreSQL's writers lock; here the one
-- writer serializes them, and the row is kept for a schema identical to
-- PostgreSQL's (storecopy copies table for table). length is the number
-- of entries; migration_ledger_entries holds them at positions 0 to
-- length-1. A ledger only grows; deleting the database's resource deletes
-- its ledger in the same transaction, so a database created again under
-- the same name (a new UID) starts empty. Deleting an application changes
-- nothing here. Nothing here depends on this file's number: it only adds.

-- +goose Up
CREATE TABLE migration_ledgers (
    database TEXT    NOT NULL PRIMARY KEY,
    tenant   TEXT    NOT NULL,
    length   INTEGER NOT NULL
);

CREATE TABLE migration_ledger_entries (
    database TEXT    NOT NULL,
    position INTEGER NOT NULL,
    path     TEXT    NOT NULL,
    digest   TEXT    NOT NULL,
    PRIMARY KEY (database, position)
);

-- +goose StatementBegin
CREATE TRIGGER resources_ledger_delete AFTER DELETE ON resources BEGIN
    DELETE FROM migration_ledger_entries WHERE database = OLD.uid;
    DELETE FROM migration_ledgers WHERE database = OLD.uid;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER resources_ledger_delete;
DROP TABLE migration_ledger_entries;
DROP TABLE migration_ledgers;
