-- The last successful tools/list of each server, so a lazy server's tools are
-- searchable before it first starts. `transport` is a hash of how the server
-- is reached: a server whose command or URL changed is listed afresh.

CREATE TABLE server_tools (
    server     TEXT    PRIMARY KEY,
    transport  TEXT    NOT NULL,
    tools      TEXT    NOT NULL,  -- JSON array of MCP Tool objects
    listed_at  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
