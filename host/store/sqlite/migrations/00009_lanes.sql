-- Lanes (spec/lane-v1beta1.md §2.5 rules 4–5, repo decision 0053): an
-- operation answers only on the lane whose mutation created it, an upload
-- only on the lane that started it, and the idempotency namespace becomes
-- (lane, tenant, principal, space, key). Every row written before this
-- migration belongs to lane forms.takoform.com/v1alpha3, the one lane
-- hosts served then, and so does a row a writer leaves without a lane.
-- SQLite cannot change a primary key in place, so idempotency is rebuilt
-- with its indexes.

-- +goose Up
ALTER TABLE operations ADD COLUMN lane TEXT NOT NULL DEFAULT 'forms.takoform.com/v1alpha3';
ALTER TABLE uploads ADD COLUMN lane TEXT NOT NULL DEFAULT 'forms.takoform.com/v1alpha3';

CREATE TABLE idempotency_lanes (
    lane            TEXT    NOT NULL DEFAULT 'forms.takoform.com/v1alpha3',
    tenant          TEXT    NOT NULL,
    principal       TEXT    NOT NULL,
    space           TEXT    NOT NULL,
    key             TEXT    NOT NULL,
    fingerprint     TEXT    NOT NULL,
    status          INTEGER NOT NULL,
    etag            TEXT    NOT NULL,
    body            BLOB    NOT NULL,
    bound_uid       TEXT    NOT NULL,
    bound_operation TEXT    NOT NULL,
    created_at      INTEGER NOT NULL,
    PRIMARY KEY (lane, tenant, principal, space, key)
);
INSERT INTO idempotency_lanes (lane, tenant, principal, space, key, fingerprint, status, etag, body, bound_uid, bound_operation, created_at)
    SELECT 'forms.takoform.com/v1alpha3', tenant, principal, space, key, fingerprint, status, etag, body, bound_uid, bound_operation, created_at
    FROM idempotency;
DROP TABLE idempotency;
ALTER TABLE idempotency_lanes RENAME TO idempotency;
CREATE INDEX idempotency_bound_uid ON idempotency (bound_uid) WHERE bound_uid <> '';
CREATE INDEX idempotency_bound_operation ON idempotency (bound_operation) WHERE bound_operation <> '';
CREATE INDEX idempotency_created_at ON idempotency (created_at);

-- +goose Down
-- Records of lanes other than v1alpha3 have no place in the older key:
-- they are dropped (a replay record is a cache of answers, never a
-- resource).
CREATE TABLE idempotency_one_lane (
    tenant          TEXT    NOT NULL,
    principal       TEXT    NOT NULL,
    space           TEXT    NOT NULL,
    key             TEXT    NOT NULL,
    fingerprint     TEXT    NOT NULL,
    status          INTEGER NOT NULL,
    etag            TEXT    NOT NULL,
    body            BLOB    NOT NULL,
    bound_uid       TEXT    NOT NULL,
    bound_operation TEXT    NOT NULL,
    created_at      INTEGER NOT NULL,
    PRIMARY KEY (tenant, principal, space, key)
);
INSERT INTO idempotency_one_lane
    SELECT tenant, principal, space, key, fingerprint, status, etag, body, bound_uid, bound_operation, created_at
    FROM idempotency WHERE lane = 'forms.takoform.com/v1alpha3';
DROP TABLE idempotency;
ALTER TABLE idempotency_one_lane RENAME TO idempotency;
CREATE INDEX idempotency_bound_uid ON idempotency (bound_uid) WHERE bound_uid <> '';
CREATE INDEX idempotency_bound_operation ON idempotency (bound_operation) WHERE bound_operation <> '';
CREATE INDEX idempotency_created_at ON idempotency (created_at);
ALTER TABLE uploads DROP COLUMN lane;
ALTER TABLE operations DROP COLUMN lane;
