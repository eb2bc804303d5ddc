-- Projects, their tokens and grants, and the audit log.
-- Append-only: never edit a shipped migration; add the next number instead.

CREATE TABLE projects (
    id           INTEGER PRIMARY KEY,
    name         TEXT    NOT NULL UNIQUE,
    -- NULL: tool catalog off; 'bm25': local search; 'cloud': cloud search with BM25 fallback
    optimization TEXT    CHECK (optimization IN ('bm25', 'cloud')),
    created_at   TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE tokens (
    id           INTEGER PRIMARY KEY,
    project_id   INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    label        TEXT    NOT NULL DEFAULT '',
    -- SHA-256 of the secret; the secret itself is shown once and never stored
    secret_hash  BLOB    NOT NULL,
    created_at   TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    last_used_at TEXT,
    revoked_at   TEXT
);
CREATE INDEX tokens_by_project ON tokens (project_id);

-- One row per (project, server) for the server itself (tool = ''),
-- plus one per tool override. enabled: 1 allow, 0 deny.
CREATE TABLE tool_permissions (
    project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    server     TEXT    NOT NULL,
    tool       TEXT    NOT NULL DEFAULT '',
    enabled    INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    PRIMARY KEY (project_id, server, tool)
);

-- IDs and counts only: no arguments, no results, no secrets.
CREATE TABLE audit_log (
    id           INTEGER PRIMARY KEY,
    at           TEXT    NOT NULL,
    request_id   TEXT    NOT NULL,
    project_id   INTEGER,
    token_id     INTEGER,
    meta_tool    TEXT    NOT NULL,
    tool_key     TEXT,
    outcome      TEXT    NOT NULL CHECK (outcome IN ('ok', 'tool_error', 'denied', 'failed', 'timeout')),
    latency_ms   INTEGER NOT NULL,
    result_count INTEGER
);
CREATE INDEX audit_by_project ON audit_log (project_id, id);
