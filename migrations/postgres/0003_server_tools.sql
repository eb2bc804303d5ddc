-- The last successful tools/list of each server, so a lazy server's tools are
-- searchable before it first starts. `transport` is a hash of how the server
-- is reached: a server whose command or URL changed is listed afresh.

CREATE TABLE server_tools (
    server     TEXT COLLATE "C" PRIMARY KEY,
    transport  TEXT COLLATE "C" NOT NULL,
    tools      TEXT COLLATE "C" NOT NULL,  -- JSON array of MCP Tool objects
    listed_at  TEXT COLLATE "C" NOT NULL
               DEFAULT to_char(statement_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
);
