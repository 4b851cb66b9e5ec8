-- The worker's table of counters (src/worker.js counts visits here).
-- Applied once by the host, before the deployment serves the version.
CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
