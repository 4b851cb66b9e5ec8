-- The host's first schema. Times are INTEGER Unix nanoseconds (0 = unset);
-- booleans are INTEGER 0/1. Every lookup the Tx methods make is served by a
-- primary key or one of the indexes below (TestQueryPlans checks it).

-- +goose Up
CREATE TABLE resources (
    uid                     TEXT    NOT NULL PRIMARY KEY,
    tenant                  TEXT    NOT NULL,
    space                   TEXT    NOT NULL,
    api_version             TEXT    NOT NULL,
    kind                    TEXT    NOT NULL,
    name                    TEXT    NOT NULL,
    form_api_version        TEXT    NOT NULL,
    form_kind               TEXT    NOT NULL,
    form_definition_version TEXT    NOT NULL,
    form_schema_digest      TEXT    NOT NULL,
    package_digest          TEXT    NOT NULL,
    generation              INTEGER NOT NULL,
    revision                INTEGER NOT NULL,
    spec                    BLOB    NOT NULL,
    spec_digest             TEXT    NOT NULL,
    status                  BLOB    NOT NULL,
    native_id               TEXT    NOT NULL,
    created_at              INTEGER NOT NULL,
    updated_at              INTEGER NOT NULL
);
-- Name uniqueness spans definition versions (brief §1.6): no FormRef here.
CREATE UNIQUE INDEX resources_key ON resources (tenant, space, api_version, kind, name);
-- An adoption claim is unique per tenant across spaces and kinds (brief §1.7).
CREATE UNIQUE INDEX resources_native_id ON resources (tenant, native_id) WHERE native_id <> '';

-- Tenant-wide unique names a resource holds across spaces (custom-domain
-- hostnames, brief §6.5). DeleteResource releases them.
CREATE TABLE claims (
    tenant TEXT NOT NULL,
    claim  TEXT NOT NULL,
    uid    TEXT NOT NULL,
    PRIMARY KEY (tenant, claim)
) WITHOUT ROWID;
CREATE INDEX claims_uid ON claims (uid);

-- Pins of a source, in the order ReplacePins was given them. tenant and
-- space are the source's (relations never cross a space, brief §5.5).
CREATE TABLE pins (
    source_uid                     TEXT    NOT NULL REFERENCES resources (uid) ON DELETE CASCADE,
    ord                            INTEGER NOT NULL,
    tenant                         TEXT    NOT NULL,
    space                          TEXT    NOT NULL,
    pointer                        TEXT    NOT NULL,
    relation_pointer               TEXT    NOT NULL,
    target_api_version             TEXT    NOT NULL,
    target_kind                    TEXT    NOT NULL,
    target_name                    TEXT    NOT NULL,
    target_uid                     TEXT    NOT NULL,
    target_form_api_version        TEXT    NOT NULL,
    target_form_kind               TEXT    NOT NULL,
    target_form_definition_version TEXT    NOT NULL,
    target_form_schema_digest      TEXT    NOT NULL,
    binding                        TEXT    NOT NULL,
    PRIMARY KEY (source_uid, ord)
);
CREATE INDEX pins_target_uid ON pins (target_uid, source_uid, ord);
CREATE INDEX pins_target_name ON pins (tenant, space, target_api_version, target_kind, target_name, source_uid, ord);

CREATE TABLE idempotency (
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
CREATE INDEX idempotency_bound_uid ON idempotency (bound_uid) WHERE bound_uid <> '';
CREATE INDEX idempotency_bound_operation ON idempotency (bound_operation) WHERE bound_operation <> '';
CREATE INDEX idempotency_created_at ON idempotency (created_at);

CREATE TABLE operations (
    id                 TEXT    NOT NULL PRIMARY KEY,
    tenant             TEXT    NOT NULL,
    principal          TEXT    NOT NULL,
    action             TEXT    NOT NULL,
    done               INTEGER NOT NULL,
    request            BLOB    NOT NULL,
    document           BLOB    NOT NULL,
    target_uid         TEXT    NOT NULL,
    target_tenant      TEXT    NOT NULL,
    target_space       TEXT    NOT NULL,
    target_api_version TEXT    NOT NULL,
    target_kind        TEXT    NOT NULL,
    target_name        TEXT    NOT NULL,
    not_before         INTEGER NOT NULL,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL
);
-- Unfinished operations only: the worker's queue and the pending check.
CREATE INDEX operations_due ON operations (not_before, created_at, id) WHERE done = 0;
CREATE INDEX operations_pending_target
    ON operations (target_tenant, target_space, target_api_version, target_kind, target_name, created_at, id)
    WHERE done = 0;

CREATE TABLE blobs (
    digest TEXT    NOT NULL PRIMARY KEY,
    size   INTEGER NOT NULL,
    data   BLOB    NOT NULL
);

CREATE TABLE manifests (
    digest TEXT NOT NULL PRIMARY KEY,
    doc    BLOB NOT NULL
);

CREATE TABLE holdings (
    tenant TEXT NOT NULL,
    digest TEXT NOT NULL,
    PRIMARY KEY (tenant, digest)
) WITHOUT ROWID;

CREATE TABLE uploads (
    id              TEXT    NOT NULL PRIMARY KEY,
    tenant          TEXT    NOT NULL,
    principal       TEXT    NOT NULL,
    manifest        BLOB    NOT NULL,
    manifest_digest TEXT    NOT NULL,
    created_at      INTEGER NOT NULL
);

CREATE TABLE sequences (
    name  TEXT    NOT NULL PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE settings (
    name  TEXT NOT NULL PRIMARY KEY,
    value BLOB NOT NULL
);

-- +goose Down
DROP TABLE settings;
DROP TABLE sequences;
DROP TABLE uploads;
DROP TABLE holdings;
DROP TABLE manifests;
DROP TABLE blobs;
DROP TABLE operations;
DROP TABLE idempotency;
DROP TABLE pins;
DROP TABLE claims;
DROP TABLE resources;
