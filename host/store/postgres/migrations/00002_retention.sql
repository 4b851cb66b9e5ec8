-- Retention, quotas and artifact references on PostgreSQL: the tables,
-- columns and trigger behaviour of host/store/sqlite/migrations/00002_retention.sql
-- (spec/decisions/0009-retention-and-quotas.md), so `takoform host copy`
-- moves rows column for column. Triggers keep tenant_usage and
-- artifact_refs current on every write, so a quota check is one
-- primary-key read and a delete drops what it held.

-- +goose Up
ALTER TABLE blobs ADD COLUMN created_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE manifests ADD COLUMN created_at BIGINT NOT NULL DEFAULT 0;
CREATE INDEX blobs_created_at ON blobs (created_at);
CREATE INDEX manifests_created_at ON manifests (created_at);
CREATE INDEX uploads_created_at ON uploads (created_at);
CREATE INDEX operations_terminal ON operations (updated_at) WHERE done = 1;

-- holder is resource:<uid>, upload:<id> or manifest:<digest>.
CREATE TABLE artifact_refs (
    holder TEXT COLLATE "C" NOT NULL,
    digest TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (holder, digest)
);
CREATE INDEX artifact_refs_digest ON artifact_refs (digest);

CREATE TABLE tenant_usage (
    tenant         TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    resources      BIGINT NOT NULL DEFAULT 0,
    artifact_bytes BIGINT NOT NULL DEFAULT 0
);

-- Backfill: what existing rows reference and use.
INSERT INTO artifact_refs (holder, digest)
    SELECT 'resource:' || uid, convert_from(spec, 'UTF8')::jsonb ->> 'manifestDigest' FROM resources
    WHERE api_version = 'edge.forms.takoform.com/v1alpha1' AND kind = 'WorkerBundle'
    AND jsonb_typeof(convert_from(spec, 'UTF8')::jsonb -> 'manifestDigest') = 'string'
    ON CONFLICT DO NOTHING;
INSERT INTO artifact_refs (holder, digest)
    SELECT 'manifest:' || m.digest, e.value ->> 'digest'
    FROM manifests m, jsonb_array_elements(COALESCE(convert_from(m.doc, 'UTF8')::jsonb -> 'modules', '[]'::jsonb)
        || COALESCE(convert_from(m.doc, 'UTF8')::jsonb -> 'files', '[]'::jsonb)) e
    WHERE jsonb_typeof(e.value -> 'digest') = 'string'
    ON CONFLICT DO NOTHING;
INSERT INTO artifact_refs (holder, digest)
    SELECT 'upload:' || u.id, e.value ->> 'digest'
    FROM uploads u, jsonb_array_elements(COALESCE(convert_from(u.manifest, 'UTF8')::jsonb -> 'modules', '[]'::jsonb)
        || COALESCE(convert_from(u.manifest, 'UTF8')::jsonb -> 'files', '[]'::jsonb)) e
    WHERE jsonb_typeof(e.value -> 'digest') = 'string'
    ON CONFLICT DO NOTHING;
INSERT INTO tenant_usage (tenant, resources) SELECT tenant, COUNT(*) FROM resources GROUP BY tenant;
INSERT INTO tenant_usage (tenant, artifact_bytes)
    SELECT h.tenant, SUM(b.size) FROM holdings h JOIN blobs b ON b.digest = h.digest GROUP BY h.tenant
    ON CONFLICT (tenant) DO UPDATE SET artifact_bytes = excluded.artifact_bytes;

-- +goose StatementBegin
CREATE FUNCTION takoform_resources_usage_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO tenant_usage (tenant, resources) VALUES (NEW.tenant, 1)
        ON CONFLICT (tenant) DO UPDATE SET resources = tenant_usage.resources + 1;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION takoform_resources_usage_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE tenant_usage SET resources = resources - 1 WHERE tenant = OLD.tenant;
    DELETE FROM artifact_refs WHERE holder = 'resource:' || OLD.uid;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION takoform_holdings_usage_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO tenant_usage (tenant, artifact_bytes)
        VALUES (NEW.tenant, COALESCE((SELECT size FROM blobs WHERE digest = NEW.digest), 0))
        ON CONFLICT (tenant) DO UPDATE SET artifact_bytes = tenant_usage.artifact_bytes + excluded.artifact_bytes;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION takoform_holdings_usage_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE tenant_usage SET artifact_bytes = artifact_bytes - COALESCE((SELECT size FROM blobs WHERE digest = OLD.digest), 0)
        WHERE tenant = OLD.tenant;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION takoform_blobs_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM holdings WHERE digest = OLD.digest;
    RETURN OLD;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION takoform_manifests_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM holdings WHERE digest = OLD.digest;
    DELETE FROM artifact_refs WHERE holder = 'manifest:' || OLD.digest;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION takoform_uploads_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM artifact_refs WHERE holder = 'upload:' || OLD.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER resources_usage_insert AFTER INSERT ON resources FOR EACH ROW EXECUTE FUNCTION takoform_resources_usage_insert();
CREATE TRIGGER resources_usage_delete AFTER DELETE ON resources FOR EACH ROW EXECUTE FUNCTION takoform_resources_usage_delete();
CREATE TRIGGER holdings_usage_insert AFTER INSERT ON holdings FOR EACH ROW EXECUTE FUNCTION takoform_holdings_usage_insert();
CREATE TRIGGER holdings_usage_delete AFTER DELETE ON holdings FOR EACH ROW EXECUTE FUNCTION takoform_holdings_usage_delete();
CREATE TRIGGER blobs_delete BEFORE DELETE ON blobs FOR EACH ROW EXECUTE FUNCTION takoform_blobs_delete();
CREATE TRIGGER manifests_delete AFTER DELETE ON manifests FOR EACH ROW EXECUTE FUNCTION takoform_manifests_delete();
CREATE TRIGGER uploads_delete AFTER DELETE ON uploads FOR EACH ROW EXECUTE FUNCTION takoform_uploads_delete();

-- +goose Down
DROP TRIGGER uploads_delete ON uploads;
DROP TRIGGER manifests_delete ON manifests;
DROP TRIGGER blobs_delete ON blobs;
DROP TRIGGER holdings_usage_delete ON holdings;
DROP TRIGGER holdings_usage_insert ON holdings;
DROP TRIGGER resources_usage_delete ON resources;
DROP TRIGGER resources_usage_insert ON resources;
DROP FUNCTION takoform_uploads_delete();
DROP FUNCTION takoform_manifests_delete();
DROP FUNCTION takoform_blobs_delete();
DROP FUNCTION takoform_holdings_usage_delete();
DROP FUNCTION takoform_holdings_usage_insert();
DROP FUNCTION takoform_resources_usage_delete();
DROP FUNCTION takoform_resources_usage_insert();
DROP TABLE tenant_usage;
DROP TABLE artifact_refs;
DROP INDEX operations_terminal;
DROP INDEX uploads_created_at;
DROP INDEX manifests_created_at;
DROP INDEX blobs_created_at;
ALTER TABLE manifests DROP COLUMN created_at;
ALTER TABLE blobs DROP COLUMN created_at;
