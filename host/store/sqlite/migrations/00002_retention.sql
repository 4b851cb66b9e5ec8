-- Retention, quotas and artifact references (spec/decisions/0009-retention-and-quotas.md).
-- Triggers keep tenant_usage and artifact_refs current on every write, so a
-- quota check is one primary-key read and a delete drops what it held.

-- +goose Up
ALTER TABLE blobs ADD COLUMN created_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE manifests ADD COLUMN created_at INTEGER NOT NULL DEFAULT 0;
CREATE INDEX blobs_created_at ON blobs (created_at);
CREATE INDEX manifests_created_at ON manifests (created_at);
CREATE INDEX uploads_created_at ON uploads (created_at);
CREATE INDEX operations_terminal ON operations (updated_at) WHERE done = 1;

-- holder is resource:<uid>, upload:<id> or manifest:<digest>.
CREATE TABLE artifact_refs (
    holder TEXT NOT NULL,
    digest TEXT NOT NULL,
    PRIMARY KEY (holder, digest)
) WITHOUT ROWID;
CREATE INDEX artifact_refs_digest ON artifact_refs (digest);

CREATE TABLE tenant_usage (
    tenant         TEXT    NOT NULL PRIMARY KEY,
    resources      INTEGER NOT NULL DEFAULT 0,
    artifact_bytes INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

-- Backfill: what existing rows reference and use.
INSERT OR IGNORE INTO artifact_refs (holder, digest)
    SELECT 'resource:' || uid, json_extract(CAST(spec AS TEXT), '$.manifestDigest') FROM resources
    WHERE api_version = 'edge.forms.takoform.com/v1alpha1' AND kind = 'WorkerBundle'
    AND json_type(CAST(spec AS TEXT), '$.manifestDigest') = 'text';
INSERT OR IGNORE INTO artifact_refs (holder, digest)
    SELECT 'manifest:' || m.digest, json_extract(e.value, '$.digest')
    FROM manifests m, json_each(CAST(m.doc AS TEXT), '$.modules') e WHERE json_type(e.value, '$.digest') = 'text';
INSERT OR IGNORE INTO artifact_refs (holder, digest)
    SELECT 'manifest:' || m.digest, json_extract(e.value, '$.digest')
    FROM manifests m, json_each(CAST(m.doc AS TEXT), '$.files') e WHERE json_type(e.value, '$.digest') = 'text';
INSERT OR IGNORE INTO artifact_refs (holder, digest)
    SELECT 'upload:' || u.id, json_extract(e.value, '$.digest')
    FROM uploads u, json_each(CAST(u.manifest AS TEXT), '$.modules') e WHERE json_type(e.value, '$.digest') = 'text';
INSERT OR IGNORE INTO artifact_refs (holder, digest)
    SELECT 'upload:' || u.id, json_extract(e.value, '$.digest')
    FROM uploads u, json_each(CAST(u.manifest AS TEXT), '$.files') e WHERE json_type(e.value, '$.digest') = 'text';
INSERT INTO tenant_usage (tenant, resources) SELECT tenant, COUNT(*) FROM resources GROUP BY tenant;
INSERT INTO tenant_usage (tenant, artifact_bytes)
    SELECT h.tenant, SUM(b.size) FROM holdings h JOIN blobs b ON b.digest = h.digest GROUP BY h.tenant
    ON CONFLICT (tenant) DO UPDATE SET artifact_bytes = excluded.artifact_bytes;

-- +goose StatementBegin
CREATE TRIGGER resources_usage_insert AFTER INSERT ON resources BEGIN
    INSERT INTO tenant_usage (tenant, resources) VALUES (NEW.tenant, 1)
        ON CONFLICT (tenant) DO UPDATE SET resources = resources + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER resources_usage_delete AFTER DELETE ON resources BEGIN
    UPDATE tenant_usage SET resources = resources - 1 WHERE tenant = OLD.tenant;
    DELETE FROM artifact_refs WHERE holder = 'resource:' || OLD.uid;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER holdings_usage_insert AFTER INSERT ON holdings BEGIN
    INSERT INTO tenant_usage (tenant, artifact_bytes)
        VALUES (NEW.tenant, COALESCE((SELECT size FROM blobs WHERE digest = NEW.digest), 0))
        ON CONFLICT (tenant) DO UPDATE SET artifact_bytes = artifact_bytes + excluded.artifact_bytes;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER holdings_usage_delete AFTER DELETE ON holdings BEGIN
    UPDATE tenant_usage SET artifact_bytes = artifact_bytes - COALESCE((SELECT size FROM blobs WHERE digest = OLD.digest), 0)
        WHERE tenant = OLD.tenant;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER blobs_delete BEFORE DELETE ON blobs BEGIN
    DELETE FROM holdings WHERE digest = OLD.digest;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER manifests_delete AFTER DELETE ON manifests BEGIN
    DELETE FROM holdings WHERE digest = OLD.digest;
    DELETE FROM artifact_refs WHERE holder = 'manifest:' || OLD.digest;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER uploads_delete AFTER DELETE ON uploads BEGIN
    DELETE FROM artifact_refs WHERE holder = 'upload:' || OLD.id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER uploads_delete;
DROP TRIGGER manifests_delete;
DROP TRIGGER blobs_delete;
DROP TRIGGER holdings_usage_delete;
DROP TRIGGER holdings_usage_insert;
DROP TRIGGER resources_usage_delete;
DROP TRIGGER resources_usage_insert;
DROP TABLE tenant_usage;
DROP TABLE artifact_refs;
DROP INDEX operations_terminal;
DROP INDEX uploads_created_at;
DROP INDEX manifests_created_at;
DROP INDEX blobs_created_at;
ALTER TABLE manifests DROP COLUMN created_at;
ALTER TABLE blobs DROP COLUMN created_at;
