-- Projects may choose 'hybrid' search (BM25F blended with a local embedding model).
-- SQLite cannot alter a CHECK constraint: the table is rebuilt (foreign keys
-- are off while migrations run, so tokens and grants keep pointing at it).

CREATE TABLE projects_new (
    id           INTEGER PRIMARY KEY,
    name         TEXT    NOT NULL UNIQUE,
    -- NULL: tool catalog off; 'bm25': local search; 'hybrid': BM25F + embeddings;
    -- 'cloud': cloud search with local fallback
    optimization TEXT    CHECK (optimization IN ('bm25', 'hybrid', 'cloud')),
    created_at   TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
INSERT INTO projects_new (id, name, optimization, created_at)
    SELECT id, name, optimization, created_at FROM projects;
DROP TABLE projects;
ALTER TABLE projects_new RENAME TO projects;
