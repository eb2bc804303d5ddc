-- Audit rows before and after a call: an execute writes a `started` row
-- before its server is called and its outcome after, which replaces it. One
-- row per request id (a batch retried after its commit's answer was lost
-- must not write its rows twice). Duplicates from before (none are
-- expected) keep their first row.
ALTER TABLE audit_log DROP CONSTRAINT audit_log_outcome_check;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_outcome_check
    CHECK (outcome IN ('ok', 'tool_error', 'denied', 'failed', 'timeout', 'started'));
DELETE FROM audit_log WHERE id NOT IN (SELECT min(id) FROM audit_log GROUP BY request_id);
CREATE UNIQUE INDEX audit_log_request_id ON audit_log (request_id);
