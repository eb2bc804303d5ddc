-- A project's search strategy is `search` wherever it is named: the type, the
-- field, `set-search`, and now the column (it was `optimization`). SQLite
-- rewrites the column's CHECK constraint with it.
ALTER TABLE projects RENAME COLUMN optimization TO search;
