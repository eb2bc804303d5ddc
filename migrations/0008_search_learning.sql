-- Learning from use (search v2): which tools each project ran, successfully,
-- after a discovery found them, for which query terms.
--
-- The audit log links the two calls: a discovery row keeps its analyzed
-- query terms (or their salted hashes, `[search.learning] terms = "hashed"`)
-- and the toolKeys it answered; an execute row names the discovery it
-- followed and the rank its tool had there.
ALTER TABLE audit_log ADD COLUMN query_terms TEXT;  -- discovery: JSON array of term arrays, one per query
ALTER TABLE audit_log ADD COLUMN ranked_keys TEXT;  -- discovery: JSON array of the toolKeys answered
ALTER TABLE audit_log ADD COLUMN follows TEXT;      -- execute: the request_id of the discovery that found the tool
ALTER TABLE audit_log ADD COLUMN rank INTEGER;      -- execute: the tool's rank in that discovery (1 = first)

-- The associations learned from those pairs. `weight` sums, over uses,
-- 2^((use - 2026-01-01) / 30 days): adding a use is an addition, and the
-- reader applies the decay once (src/search/learning.rs).
CREATE TABLE search_learning (
    project_id   INTEGER NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    term         TEXT    NOT NULL,
    tool_key     TEXT    NOT NULL,
    weight       REAL    NOT NULL,
    last_used_at TEXT    NOT NULL,
    PRIMARY KEY (project_id, term, tool_key)
) WITHOUT ROWID;

-- The salt of hashed terms: one per store, so the same word hashes alike
-- across restarts and replicas.
CREATE TABLE learning_salt (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    salt BLOB    NOT NULL
);
INSERT INTO learning_salt (id, salt) VALUES (1, randomblob(16));
