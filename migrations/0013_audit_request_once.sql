-- Audit rows before and after a call: an execute writes a `started` row
-- before its server is called and its outcome after, which replaces it. One
-- row per request id (a batch retried after its commit's answer was lost
-- must not write its rows twice). SQLite cannot change a CHECK constraint,
-- so the table is copied (with AUTOINCREMENT: an outcome row replaces its started row under a new id, never the reused one, so the usage rollup, which skips started rows, counts it); duplicates from before (none are expected) keep
-- their first row.
CREATE TABLE audit_log_new (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    at           TEXT    NOT NULL,
    request_id   TEXT    NOT NULL,
    project_id   INTEGER,
    token_id     INTEGER,
    meta_tool    TEXT    NOT NULL,
    tool_key     TEXT,
    outcome      TEXT    NOT NULL CHECK (outcome IN ('ok', 'tool_error', 'denied', 'failed', 'timeout', 'started')),
    latency_ms   INTEGER NOT NULL,
    result_count INTEGER,
    subject      TEXT,
    issuer       TEXT,
    query_terms  TEXT,
    ranked_keys  TEXT,
    follows      TEXT,
    rank         INTEGER
);
INSERT INTO audit_log_new (id, at, request_id, project_id, token_id, meta_tool, tool_key, outcome, latency_ms,
                           result_count, subject, issuer, query_terms, ranked_keys, follows, rank)
    SELECT id, at, request_id, project_id, token_id, meta_tool, tool_key, outcome, latency_ms,
           result_count, subject, issuer, query_terms, ranked_keys, follows, rank
    FROM audit_log WHERE id IN (SELECT min(id) FROM audit_log GROUP BY request_id);
DROP TABLE audit_log;
ALTER TABLE audit_log_new RENAME TO audit_log;
CREATE INDEX audit_by_project ON audit_log (project_id, id);
CREATE INDEX audit_by_time ON audit_log (at, meta_tool, tool_key, outcome, latency_ms, project_id);
CREATE UNIQUE INDEX audit_log_request_id ON audit_log (request_id);
