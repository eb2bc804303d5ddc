-- A project's search strategy is `search` wherever it is named: the type, the
-- field, `set-search`, and now the column (it was `optimization`).
ALTER TABLE projects RENAME COLUMN optimization TO search;
ALTER TABLE projects RENAME CONSTRAINT projects_optimization_check TO projects_search_check;
