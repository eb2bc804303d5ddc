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

-- Usage over the last hour, day or week: a range scan on time, per project too.
-- The covering columns let the scan answer without reading the rows.
CREATE INDEX audit_by_time ON audit_log (at, meta_tool, tool_key, outcome, latency_ms, project_id);
CREATE INDEX audit_by_project_time ON audit_log (project_id, at);
