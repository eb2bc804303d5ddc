-- Per-project credentials for downstream servers, sealed with AES-256-GCM
-- (src/secrets.rs): the key lives outside the database, so this file alone
-- reveals no value. `kind` is 'header' or 'env' (`name` is the header or
-- variable), or 'oauth' (`name` is '', the value the sign-in's tokens).
-- `set_at` changes only when the value is set anew (not on a token
-- refresh), so connections that used an old value can be told apart.
-- (SQLite's WITHOUT ROWID has no PostgreSQL counterpart; none is needed.)

CREATE TABLE credentials (
    project_id BIGINT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    server     TEXT COLLATE "C" NOT NULL,
    kind       TEXT COLLATE "C" NOT NULL CHECK (kind IN ('header', 'env', 'oauth')),
    name       TEXT COLLATE "C" NOT NULL,
    key_id     TEXT COLLATE "C" NOT NULL,
    sealed     BYTEA NOT NULL,
    set_at     TEXT COLLATE "C" NOT NULL
               DEFAULT to_char(statement_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    updated_at TEXT COLLATE "C" NOT NULL
               DEFAULT to_char(statement_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    PRIMARY KEY (project_id, server, kind, name)
);
