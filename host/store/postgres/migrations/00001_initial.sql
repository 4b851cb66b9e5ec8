-- The host's first schema on PostgreSQL: the tables, columns and keys of
-- the SQLite schema (host/store/sqlite/migrations/00001_initial.sql), so
-- `takoform host copy` moves rows column for column. Times are BIGINT Unix
-- nanoseconds (0 = unset), exact as the host wrote them; booleans are
-- SMALLINT 0/1; text compares bytewise (COLLATE "C", SQLite's BINARY) so
-- every ORDER BY answers as on SQLite whatever the database's locale.
-- Uniqueness (names, native-id claims, claims, idempotency namespace) is
-- held by the constraints below, never by a read in Go.

-- +goose Up
CREATE TABLE resources (
    uid                     TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    tenant                  TEXT COLLATE "C" NOT NULL,
    space                   TEXT COLLATE "C" NOT NULL,
    api_version             TEXT COLLATE "C" NOT NULL,
    kind                    TEXT COLLATE "C" NOT NULL,
    name                    TEXT COLLATE "C" NOT NULL,
    form_api_version        TEXT COLLATE "C" NOT NULL,
    form_kind               TEXT COLLATE "C" NOT NULL,
    form_definition_version TEXT COLLATE "C" NOT NULL,
    form_schema_digest      TEXT COLLATE "C" NOT NULL,
    package_digest          TEXT COLLATE "C" NOT NULL,
    generation              BIGINT NOT NULL,
    revision                BIGINT NOT NULL,
    spec                    BYTEA  NOT NULL,
    spec_digest             TEXT COLLATE "C" NOT NULL,
    status                  BYTEA  NOT NULL,
    native_id               TEXT COLLATE "C" NOT NULL,
    created_at              BIGINT NOT NULL,
    updated_at              BIGINT NOT NULL
);
CREATE UNIQUE INDEX resources_key ON resources (tenant, space, api_version, kind, name);
CREATE UNIQUE INDEX resources_native_id ON resources (tenant, native_id) WHERE native_id <> '';

CREATE TABLE claims (
    tenant TEXT COLLATE "C" NOT NULL,
    claim  TEXT COLLATE "C" NOT NULL,
    uid    TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (tenant, claim)
);
CREATE INDEX claims_uid ON claims (uid);

CREATE TABLE pins (
    source_uid                     TEXT COLLATE "C" NOT NULL REFERENCES resources (uid) ON DELETE CASCADE,
    ord                            BIGINT NOT NULL,
    tenant                         TEXT COLLATE "C" NOT NULL,
    space                          TEXT COLLATE "C" NOT NULL,
    pointer                        TEXT COLLATE "C" NOT NULL,
    relation_pointer               TEXT COLLATE "C" NOT NULL,
    target_api_version             TEXT COLLATE "C" NOT NULL,
    target_kind                    TEXT COLLATE "C" NOT NULL,
    target_name                    TEXT COLLATE "C" NOT NULL,
    target_uid                     TEXT COLLATE "C" NOT NULL,
    target_form_api_version        TEXT COLLATE "C" NOT NULL,
    target_form_kind               TEXT COLLATE "C" NOT NULL,
    target_form_definition_version TEXT COLLATE "C" NOT NULL,
    target_form_schema_digest      TEXT COLLATE "C" NOT NULL,
    binding                        TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (source_uid, ord)
);
CREATE INDEX pins_target_uid ON pins (target_uid, source_uid, ord);
CREATE INDEX pins_target_name ON pins (tenant, space, target_api_version, target_kind, target_name, source_uid, ord);

CREATE TABLE idempotency (
    tenant          TEXT COLLATE "C" NOT NULL,
    principal       TEXT COLLATE "C" NOT NULL,
    space           TEXT COLLATE "C" NOT NULL,
    key             TEXT COLLATE "C" NOT NULL,
    fingerprint     TEXT COLLATE "C" NOT NULL,
    status          BIGINT NOT NULL,
    etag            TEXT COLLATE "C" NOT NULL,
    body            BYTEA  NOT NULL,
    bound_uid       TEXT COLLATE "C" NOT NULL,
    bound_operation TEXT COLLATE "C" NOT NULL,
    created_at      BIGINT NOT NULL,
    PRIMARY KEY (tenant, principal, space, key)
);
CREATE INDEX idempotency_bound_uid ON idempotency (bound_uid) WHERE bound_uid <> '';
CREATE INDEX idempotency_bound_operation ON idempotency (bound_operation) WHERE bound_operation <> '';
CREATE INDEX idempotency_created_at ON idempotency (created_at);

CREATE TABLE operations (
    id                 TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    tenant             TEXT COLLATE "C" NOT NULL,
    principal          TEXT COLLATE "C" NOT NULL,
    action             TEXT COLLATE "C" NOT NULL,
    done               SMALLINT NOT NULL CHECK (done IN (0, 1)),
    request            BYTEA  NOT NULL,
    document           BYTEA  NOT NULL,
    target_uid         TEXT COLLATE "C" NOT NULL,
    target_tenant      TEXT COLLATE "C" NOT NULL,
    target_space       TEXT COLLATE "C" NOT NULL,
    target_api_version TEXT COLLATE "C" NOT NULL,
    target_kind        TEXT COLLATE "C" NOT NULL,
    target_name        TEXT COLLATE "C" NOT NULL,
    not_before         BIGINT NOT NULL,
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL
);
CREATE INDEX operations_due ON operations (not_before, created_at, id) WHERE done = 0;
CREATE INDEX operations_pending_target
    ON operations (target_tenant, target_space, target_api_version, target_kind, target_name, created_at, id)
    WHERE done = 0;

CREATE TABLE blobs (
    digest TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    size   BIGINT NOT NULL,
    data   BYTEA  NOT NULL
);

CREATE TABLE manifests (
    digest TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    doc    BYTEA NOT NULL
);

CREATE TABLE holdings (
    tenant TEXT COLLATE "C" NOT NULL,
    digest TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (tenant, digest)
);

CREATE TABLE uploads (
    id              TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    tenant          TEXT COLLATE "C" NOT NULL,
    principal       TEXT COLLATE "C" NOT NULL,
    manifest        BYTEA  NOT NULL,
    manifest_digest TEXT COLLATE "C" NOT NULL,
    created_at      BIGINT NOT NULL
);

CREATE TABLE sequences (
    name  TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    value BIGINT NOT NULL
);

CREATE TABLE settings (
    name  TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    value BYTEA NOT NULL
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
