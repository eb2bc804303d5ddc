-- Projects may choose 'hybrid' search (BM25F blended with a local embedding model).
-- SQLite rebuilt the table to change its CHECK; PostgreSQL alters the
-- constraint in place (tokens and grants keep pointing at the same table).
-- NULL: tool catalog off; 'bm25': local search; 'hybrid': BM25F + embeddings;
-- 'cloud': cloud search with local fallback

ALTER TABLE projects
    DROP CONSTRAINT projects_optimization_check,
    ADD CONSTRAINT projects_optimization_check CHECK (optimization IN ('bm25', 'hybrid', 'cloud'));
