-- PostgreSQL twin of migrations/0012_rate_budgets.sql. UNLOGGED: a budget is
-- worth no WAL write per request, and after a crash it starts full again.
CREATE UNLOGGED TABLE rate_budgets (
    caller TEXT COLLATE "C" PRIMARY KEY,
    due_ms BIGINT NOT NULL
);
