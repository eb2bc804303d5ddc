-- Request budgets of `[http] requests_per_minute` that every gateway on this
-- store shares: per caller, the generic cell rate algorithm's theoretical
-- arrival time, in milliseconds since the epoch. Only a shared (PostgreSQL)
-- store uses it; a SQLite gateway keeps its budgets in memory.
CREATE TABLE rate_budgets (
    caller TEXT PRIMARY KEY,
    due_ms INTEGER NOT NULL
);
