-- The usage triggers of 00003 with the shard upsert written in the
-- trigger function instead of called through takoform_usage_add
-- (spec/decisions/0044-postgres-create-cpu.md): a counted row then runs one
-- PL/pgSQL function and one upsert in it, not a trigger function whose
-- PERFORM plans and runs a SELECT that enters a second PL/pgSQL function.
-- One function per table serves its insert and delete triggers (TG_OP).
-- What is counted, and where, is unchanged: each session adds to its
-- tenant's shard row (tenant U+001F backend pid modulo 128), and a
-- tenant's usage is the sum of its plain row and its shard rows. 00003's
-- functions stay, unused, for the Down.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION takoform_resources_usage() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    row_tenant TEXT := NEW.tenant;
    delta BIGINT := 1;
BEGIN
    IF TG_OP = 'DELETE' THEN
        row_tenant := OLD.tenant;
        delta := -1;
        DELETE FROM artifact_refs WHERE holder = 'resource:' || OLD.uid;
    END IF;
    INSERT INTO tenant_usage (tenant, resources, artifact_bytes)
        VALUES (row_tenant || E'\x1f' || (pg_backend_pid() % 128)::TEXT, delta, 0)
        ON CONFLICT (tenant) DO UPDATE SET resources = tenant_usage.resources + excluded.resources;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION takoform_holdings_usage() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    row_tenant TEXT := NEW.tenant;
    row_digest TEXT := NEW.digest;
    sign BIGINT := 1;
BEGIN
    IF TG_OP = 'DELETE' THEN
        row_tenant := OLD.tenant;
        row_digest := OLD.digest;
        sign := -1;
    END IF;
    INSERT INTO tenant_usage (tenant, resources, artifact_bytes)
        VALUES (row_tenant || E'\x1f' || (pg_backend_pid() % 128)::TEXT, 0,
            sign * COALESCE((SELECT size FROM blobs WHERE digest = row_digest), 0))
        ON CONFLICT (tenant) DO UPDATE SET artifact_bytes = tenant_usage.artifact_bytes + excluded.artifact_bytes;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE OR REPLACE TRIGGER resources_usage_insert AFTER INSERT ON resources FOR EACH ROW EXECUTE FUNCTION takoform_resources_usage();
CREATE OR REPLACE TRIGGER resources_usage_delete AFTER DELETE ON resources FOR EACH ROW EXECUTE FUNCTION takoform_resources_usage();
CREATE OR REPLACE TRIGGER holdings_usage_insert AFTER INSERT ON holdings FOR EACH ROW EXECUTE FUNCTION takoform_holdings_usage();
CREATE OR REPLACE TRIGGER holdings_usage_delete AFTER DELETE ON holdings FOR EACH ROW EXECUTE FUNCTION takoform_holdings_usage();

-- +goose Down
CREATE OR REPLACE TRIGGER resources_usage_insert AFTER INSERT ON resources FOR EACH ROW EXECUTE FUNCTION takoform_resources_usage_insert();
CREATE OR REPLACE TRIGGER resources_usage_delete AFTER DELETE ON resources FOR EACH ROW EXECUTE FUNCTION takoform_resources_usage_delete();
CREATE OR REPLACE TRIGGER holdings_usage_insert AFTER INSERT ON holdings FOR EACH ROW EXECUTE FUNCTION takoform_holdings_usage_insert();
CREATE OR REPLACE TRIGGER holdings_usage_delete AFTER DELETE ON holdings FOR EACH ROW EXECUTE FUNCTION takoform_holdings_usage_delete();
DROP FUNCTION takoform_holdings_usage();
DROP FUNCTION takoform_resources_usage();
