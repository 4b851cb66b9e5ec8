-- The data plane reads its desired state by kind across every tenant
-- (store.Tx.ResourcesOfKind, spec/runtime-v1.md §9.1): an index on
-- (api_version, kind, uid) serves that list in UID order without a scan.

-- +goose Up
CREATE INDEX resources_kind ON resources (api_version, kind, uid);

-- +goose Down
DROP INDEX resources_kind;
