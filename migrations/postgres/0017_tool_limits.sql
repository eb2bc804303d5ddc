-- PostgreSQL twin of migrations/0017_tool_limits.sql: every replica counts
-- in the same windows. Logged, unlike rate_budgets: a day's count must
-- survive a crash.
CREATE TABLE tool_limit_windows (
    scope TEXT COLLATE "C" NOT NULL,
    window_start BIGINT NOT NULL,
    calls BIGINT NOT NULL,
    PRIMARY KEY (scope, window_start)
);
