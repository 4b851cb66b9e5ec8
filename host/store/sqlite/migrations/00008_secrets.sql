-- Sealed sensitive-variable values (spec/runtime-v1.md §3.2). One row per
-- (ModuleWorker UID, env name); sealed is the AEAD nonce and ciphertext
-- (the host seals the value before the store sees it: no plaintext is
-- ever stored), key_id names the key that sealed it, updated_at is Unix
-- milliseconds. Deleting the worker resource deletes its secrets in the
-- same transaction, so a worker created again under the same name (a new
-- UID) inherits none. Nothing here depends on this file's number: it only
-- adds.

-- +goose Up
CREATE TABLE worker_secrets (
    worker     TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    tenant     TEXT    NOT NULL,
    space      TEXT    NOT NULL,
    sealed     BLOB    NOT NULL,
    key_id     TEXT    NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (worker, name)
);

-- +goose StatementBegin
CREATE TRIGGER resources_secrets_delete AFTER DELETE ON resources BEGIN
    DELETE FROM worker_secrets WHERE worker = OLD.uid;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER resources_secrets_delete;
DROP TABLE worker_secrets;
