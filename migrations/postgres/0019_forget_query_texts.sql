-- Remembered queries keep no text (issue #71): it was kept only to quote
-- in explanations, and quoting one caller's words to another's model let a
-- password in plain words, a name, or an instruction written for a model
-- reach every later caller in the project. `query_key` still keys a
-- meaning (the normalised query, or its salted hash); its embedding pulls.
ALTER TABLE query_meanings DROP COLUMN query;
