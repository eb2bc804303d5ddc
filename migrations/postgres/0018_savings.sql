-- PostgreSQL twin of migrations/0018_savings.sql.
ALTER TABLE audit_log ADD COLUMN saved_tokens BIGINT;
ALTER TABLE audit_log ADD COLUMN kept_bytes BIGINT;
ALTER TABLE usage_hours ADD COLUMN saved_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_hours ADD COLUMN kept_bytes BIGINT NOT NULL DEFAULT 0;
DROP INDEX audit_by_time;
CREATE INDEX audit_by_time ON audit_log (at, meta_tool, tool_key, outcome, latency_ms, project_id, saved_tokens, kept_bytes);
