-- Usage counters without a hot row (spec/decisions/0021-postgres-usage-shards.md):
-- the triggers of 00002 add to one tenant_usage row per tenant, which every
-- create of the tenant then holds locked until its commit is flushed, so a
-- tenant's creates committed one after another. Now each session adds to
-- its own shard row (takoform_usage_add), keyed tenant U+001F shard, the
-- shard being the backend's pid modulo 128, so concurrent sessions almost
-- never share one; a tenant's usage is the sum of its plain row (what 00002
-- and `takoform host copy` wrote) and its shard rows. The table's columns
-- stay those of the SQLite store's, so `takoform host copy` copies it
-- column for column.

-- +goose Up
-- +goose StatementBegin
-- PL/pgSQL keeps the insert's plan for the session; a LANGUAGE sql
-- function would plan it again in every transaction.
CREATE FUNCTION takoform_usage_add(usage_tenant TEXT, add_resources BIGINT, add_bytes BIGINT) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO tenant_usage (tenant, resources, artifact_bytes)
        VALUES (usage_tenant || E'\x1f' || (pg_backend_pid() % 128)::TEXT, add_resources, add_bytes)
        ON CONFLICT (tenant) DO UPDATE SET resources = tenant_usage.resources + excluded.resources,
            artifact_bytes = tenant_usage.artifact_bytes + excluded.artifact_bytes;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION takoform_resources_usage_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM takoform_usage_add(NEW.tenant, 1, 0);
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION takoform_resources_usage_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM takoform_usage_add(OLD.tenant, -1, 0);
    DELETE FROM artifact_refs WHERE holder = 'resource:' || OLD.uid;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION takoform_holdings_usage_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM takoform_usage_add(NEW.tenant, 0, COALESCE((SELECT size FROM blobs WHERE digest = NEW.digest), 0));
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION takoform_holdings_usage_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM takoform_usage_add(OLD.tenant, 0, -COALESCE((SELECT size FROM blobs WHERE digest = OLD.digest), 0));
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose Down
-- Fold the shard rows into each tenant's plain row, then restore 00002's
-- functions.
INSERT INTO tenant_usage (tenant, resources, artifact_bytes)
    SELECT split_part(tenant, E'\x1f', 1), SUM(resources), SUM(artifact_bytes) FROM tenant_usage
    WHERE strpos(tenant, E'\x1f') > 0 GROUP BY 1
    ON CONFLICT (tenant) DO UPDATE SET resources = tenant_usage.resources + excluded.resources,
        artifact_bytes = tenant_usage.artifact_bytes + excluded.artifact_bytes;
DELETE FROM tenant_usage WHERE strpos(tenant, E'\x1f') > 0;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION takoform_resources_usage_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO tenant_usage (tenant, resources) VALUES (NEW.tenant, 1)
        ON CONFLICT (tenant) DO UPDATE SET resources = tenant_usage.resources + 1;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION takoform_resources_usage_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE tenant_usage SET resources = resources - 1 WHERE tenant = OLD.tenant;
    DELETE FROM artifact_refs WHERE holder = 'resource:' || OLD.uid;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION takoform_holdings_usage_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO tenant_usage (tenant, artifact_bytes)
        VALUES (NEW.tenant, COALESCE((SELECT size FROM blobs WHERE digest = NEW.digest), 0))
        ON CONFLICT (tenant) DO UPDATE SET artifact_bytes = tenant_usage.artifact_bytes + excluded.artifact_bytes;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION takoform_holdings_usage_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE tenant_usage SET artifact_bytes = artifact_bytes - COALESCE((SELECT size FROM blobs WHERE digest = OLD.digest), 0)
        WHERE tenant = OLD.tenant;
    RETURN NULL;
END $$;
-- +goose StatementEnd
DROP FUNCTION takoform_usage_add(TEXT, BIGINT, BIGINT);
