ALTER TABLE notes ADD COLUMN created_at TEXT;
