-- Callers signed in with OAuth: who (the token's `sub`) and which
-- authorization server vouched for them (`iss`). Never the token itself.

ALTER TABLE audit_log ADD COLUMN subject TEXT COLLATE "C";
ALTER TABLE audit_log ADD COLUMN issuer TEXT COLLATE "C";
