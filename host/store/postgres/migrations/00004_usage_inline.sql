-- The usage triggers of 00003 with the shard upsert written in each
-- trigger function instead of called through takoform_usage_add
-- (spec/decisions/0044-postgres-create-cpu.md): a resource
-- insert then runs one PL/pgSQL function and one statement in it, not a
-- trigger function whose PERFORM plans and runs a SELECT that enters a
-- second PL/pgSQL function. What is counted, and where, is unchanged: each
-- session adds to its tenant's shard row (tenant U+001F backend pid modulo
-- 128), a tenant's usage is the sum of its plain row and its shard rows,
-- and takoform_usage_add stays for whatever else calls it.

-- +goose Up
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION takoform_resources_usage_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO tenant_usage (tenant, resources, artifact_bytes)
        VALUES (NEW.tenant || E'\x1f' || (pg_backend_pid() % 128)::TEXT, 1, 0)
        ON CONFLICT (tenant) DO UPDATE SET resources = tenant_usage.resources + 1;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION takoform_resources_usage_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO tenant_usage (tenant, resources, artifact_bytes)
        VALUES (OLD.tenant || E'\x1f' || (pg_backend_pid() % 128)::TEXT, -1, 0)
        ON CONFLICT (tenant) DO UPDATE SET resources = tenant_usage.resources - 1;
    DELETE FROM artifact_refs WHERE holder = 'resource:' || OLD.uid;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION takoform_holdings_usage_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO tenant_usage (tenant, resources, artifact_bytes)
        VALUES (NEW.tenant || E'\x1f' || (pg_backend_pid() % 128)::TEXT, 0,
            COALESCE((SELECT size FROM blobs WHERE digest = NEW.digest), 0))
        ON CONFLICT (tenant) DO UPDATE SET artifact_bytes = tenant_usage.artifact_bytes + excluded.artifact_bytes;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION takoform_holdings_usage_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO tenant_usage (tenant, resources, artifact_bytes)
        VALUES (OLD.tenant || E'\x1f' || (pg_backend_pid() % 128)::TEXT, 0,
            -COALESCE((SELECT size FROM blobs WHERE digest = OLD.digest), 0))
        ON CONFLICT (tenant) DO UPDATE SET artifact_bytes = tenant_usage.artifact_bytes + excluded.artifact_bytes;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose Down
-- 00003's trigger functions, each calling takoform_usage_add.
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
