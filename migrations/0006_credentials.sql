-- Per-project credentials for downstream servers, sealed with AES-256-GCM
-- (src/secrets.rs): the key lives outside the database, so this file alone
-- reveals no value. `kind` is 'header' or 'env' (`name` is the header or
-- variable), or 'oauth' (`name` is '', the value the sign-in's tokens).
-- `set_at` changes only when the value is set anew (not on a token
-- refresh), so connections that used an old value can be told apart.

CREATE TABLE credentials (
    project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    server     TEXT    NOT NULL,
    kind       TEXT    NOT NULL CHECK (kind IN ('header', 'env', 'oauth')),
    name       TEXT    NOT NULL,
    key_id     TEXT    NOT NULL,
    sealed     BLOB    NOT NULL,
    set_at     TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    updated_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (project_id, server, kind, name)
) WITHOUT ROWID;
