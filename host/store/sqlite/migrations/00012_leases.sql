-- Leases with a fencing epoch (spec/runtime-v1.md §10.5; repo decision
-- 0062). leases holds one row per named lease: its holder, its epoch (1
-- at the first acquisition, + 1 at each takeover) and its deadline in
-- Unix milliseconds. cron_firings.epoch and queue_messages.claim_epoch
-- record the epoch a firing was last written and a claim taken under, so
-- a new holder releases the claims of earlier epochs. Rows written
-- before this migration carry epoch 0, earlier than any lease's. Nothing
-- here depends on this file's number: it only adds.

-- +goose Up
CREATE TABLE leases (
    name       TEXT    NOT NULL PRIMARY KEY,
    holder     TEXT    NOT NULL,
    epoch      INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
ALTER TABLE cron_firings ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0;
ALTER TABLE queue_messages ADD COLUMN claim_epoch INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE queue_messages DROP COLUMN claim_epoch;
ALTER TABLE cron_firings DROP COLUMN epoch;
DROP TABLE leases;
