-- The delivery state of the events dispatcher (spec/runtime-v1.md §2.5,
-- §2.6; repo decision 0060). cron_firings holds one row per
-- (WorkerCronTrigger UID, matched minute in Unix milliseconds): recorded
-- before dispatch, so a minute fires at most once across restarts; state
-- is recorded, dispatching, ok, failed, missed or lost; version is the
-- WorkerVersion UID drawn. Settled rows are swept once their minute is
-- long past. queue_messages gains claim: the batch holding a message in
-- flight ('' when none); a claimed message's deliverable_at is its
-- claim's deadline. Deleting a trigger's resource deletes its firings in
-- the same transaction. Nothing here depends on this file's number: it
-- only adds.

-- +goose Up
CREATE TABLE cron_firings (
    trigger_uid TEXT   NOT NULL,
    minute     INTEGER NOT NULL,
    tenant     TEXT    NOT NULL,
    state      TEXT    NOT NULL,
    version    TEXT    NOT NULL DEFAULT '',
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (trigger_uid, minute)
);
CREATE INDEX cron_firings_open ON cron_firings (minute, trigger_uid) WHERE state IN ('recorded', 'dispatching');
CREATE INDEX cron_firings_minute ON cron_firings (minute);
ALTER TABLE queue_messages ADD COLUMN claim TEXT NOT NULL DEFAULT '';

-- +goose StatementBegin
CREATE TRIGGER resources_firings_delete AFTER DELETE ON resources BEGIN
    DELETE FROM cron_firings WHERE trigger_uid = OLD.uid;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER resources_firings_delete;
ALTER TABLE queue_messages DROP COLUMN claim;
DROP TABLE cron_firings;
