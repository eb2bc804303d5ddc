-- Learning what past requests meant (issue 36): the embeddings of the
-- queries that found the tools a project then ran, and the links that let
-- an execute on one replica learn from a discovery answered by another.
--
-- One row per (project, tool, query): `query_key` is the query's normalised
-- text, or its salted hash with `[search.learning] terms = "hashed"`, when
-- `query` (the text shown in explanations) is NULL. `vector` holds the int8
-- codes of its embedding and their scale (388 bytes at 384 dimensions).
-- `weight` sums 2^((use - 2026-01-01) / 30 days), as search_learning's does;
-- `touched` orders rows by last use (the newest are kept: 32 per tool and
-- 10,000 per project, src/search/meanings.rs).
CREATE TABLE query_meanings (
    project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    tool_key   TEXT    NOT NULL,
    query_key  TEXT    NOT NULL,
    query      TEXT,
    vector     BLOB    NOT NULL,
    weight     REAL    NOT NULL,
    touched    INTEGER NOT NULL,
    PRIMARY KEY (project_id, tool_key, query_key)
) WITHOUT ROWID;
CREATE INDEX query_meanings_touched ON query_meanings (project_id, touched);

-- A discovery, as an execute on any replica may follow it within 30
-- minutes (`at`: unix milliseconds): `session` is a salted hash of the session key (never the
-- session id or subject itself); `asked` its queries' term keys, meaning
-- keys and texts (JSON); `results` its toolKeys with the query that found
-- each (JSON); `vectors` its queries' embeddings, one row each, or NULL.
CREATE TABLE discovery_links (
    request_id TEXT    PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    session    TEXT    NOT NULL,
    at         INTEGER NOT NULL,
    asked      TEXT    NOT NULL,
    results    TEXT    NOT NULL,
    vectors    BLOB
);
CREATE INDEX discovery_links_session ON discovery_links (project_id, session, at);
CREATE INDEX discovery_links_at ON discovery_links (at);

-- Which tools each linked discovery already taught: once each, whichever
-- replica the execute reached (`at`: unix milliseconds, for expiry).
CREATE TABLE discovery_taught (
    request_id TEXT    NOT NULL,
    tool_key   TEXT    NOT NULL,
    at         INTEGER NOT NULL,
    PRIMARY KEY (request_id, tool_key)
);
CREATE INDEX discovery_taught_at ON discovery_taught (at);
