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
    worker     TEXT COLLATE "C" NOT NULL,
    name       TEXT COLLATE "C" NOT NULL,
    tenant     TEXT COLLATE "C" NOT NULL,
    space      TEXT COLLATE "C" NOT NULL,
    sealed     BYTEA            NOT NULL,
    key_id     TEXT             NOT NULL,
    updated_at BIGINT           NOT NULL,
    PRIMARY KEY (worker, name)
);

-- +goose StatementBegin
CREATE FUNCTION takoform_resources_secrets_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM worker_secrets WHERE worker = OLD.uid;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER resources_secrets_delete AFTER DELETE ON resources FOR EACH ROW EXECUTE FUNCTION takoform_resources_secrets_delete();

-- +goose Down
DROP TRIGGER resources_secrets_delete ON resources;
DROP FUNCTION takoform_resources_secrets_delete();
DROP TABLE worker_secrets;
