-- Calls counted against `[[limits]]`: per limit's scope (project, server,
-- tool) and fixed window (a minute or a day, by its start in seconds since
-- the epoch). Windows that ended are pruned as new ones open.
CREATE TABLE tool_limit_windows (
    scope TEXT NOT NULL,
    window_start INTEGER NOT NULL,
    calls INTEGER NOT NULL,
    PRIMARY KEY (scope, window_start)
);
