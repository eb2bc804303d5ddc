-- What the gateway kept out of models' context, per call and per hour:
-- a discovery's o200k tokens saved against listing every tool its caller
-- may see (negative when the answer cost more), and the bytes of tool
-- results a code-mode script read but did not return.
ALTER TABLE audit_log ADD COLUMN saved_tokens INTEGER;
ALTER TABLE audit_log ADD COLUMN kept_bytes INTEGER;
ALTER TABLE usage_hours ADD COLUMN saved_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_hours ADD COLUMN kept_bytes INTEGER NOT NULL DEFAULT 0;
-- The last hour's usage reads only this index: it covers the new columns too.
DROP INDEX audit_by_time;
CREATE INDEX audit_by_time ON audit_log (at, meta_tool, tool_key, outcome, latency_ms, project_id, saved_tokens, kept_bytes);
