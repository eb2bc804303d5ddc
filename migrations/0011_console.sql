-- The operator console: admin tokens, the record of operators' actions,
-- and indexes that keep the console's usage queries bounded by time.

-- Admin tokens open the console (`mcp-gateway token issue --admin`). They
-- belong to no project and are never accepted at /mcp.
CREATE TABLE admin_tokens (
    id           INTEGER PRIMARY KEY,
    label        TEXT    NOT NULL DEFAULT '',
    -- SHA-256 of the secret; the secret itself is shown once and never stored
    secret_hash  BLOB    NOT NULL,
    created_at   TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    last_used_at TEXT,
    revoked_at   TEXT
);

-- What operators changed, from the CLI or the console: who (an admin token,
-- an OAuth subject, or the command line), what, and on what. Never secrets.
CREATE TABLE admin_actions (
    id      INTEGER PRIMARY KEY,
    at      TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    actor   TEXT    NOT NULL,
    action  TEXT    NOT NULL,
    target  TEXT    NOT NULL,
    detail  TEXT
);

-- Usage over the last hour: a range scan on time, through an index that
-- covers every column the console reads, so the table itself is not read.
CREATE INDEX audit_by_time ON audit_log (at, meta_tool, tool_key, outcome, latency_ms, project_id);

-- Usage over the last day or week: hourly rollups of the audit log, filled
-- from its rows in id order (`usage_rolled.through` is the last id counted),
-- so each row is counted exactly once, even one written late, and a week of
-- a million calls is read as a few thousand rows. `latencies` is a sparse
-- histogram: (bucket u8, count u32 LE) pairs; buckets are 4 per doubling.
CREATE TABLE usage_hours (
    hour       TEXT    NOT NULL,             -- '2026-11-25T06'
    project_id INTEGER NOT NULL DEFAULT 0,   -- 0: no project
    tool_key   TEXT    NOT NULL DEFAULT '',  -- '': a discovery
    calls      INTEGER NOT NULL,
    errors     INTEGER NOT NULL,
    timeouts   INTEGER NOT NULL,
    latencies  BLOB    NOT NULL,
    PRIMARY KEY (hour, project_id, tool_key)
);
CREATE TABLE usage_rolled (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    through INTEGER NOT NULL
);
INSERT INTO usage_rolled (id, through) VALUES (1, 0);
