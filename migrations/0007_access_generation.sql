-- One number that every change to who may call what moves forward: projects,
-- token revocations, grants and credentials. A gateway keeps what it resolved
-- (callers, grants, credentials) for as long as it reads the same number, so
-- a change made by any process sharing this store applies from its next
-- request, at the cost of one one-row read per request.
-- Recording a token's use (last_used_at) is not such a change.

CREATE TABLE access_generation (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n  INTEGER NOT NULL
);
INSERT INTO access_generation (id, n) VALUES (1, 0);

CREATE TRIGGER projects_inserted AFTER INSERT ON projects
BEGIN UPDATE access_generation SET n = n + 1; END;
CREATE TRIGGER projects_updated AFTER UPDATE ON projects
BEGIN UPDATE access_generation SET n = n + 1; END;
CREATE TRIGGER projects_deleted AFTER DELETE ON projects
BEGIN UPDATE access_generation SET n = n + 1; END;

CREATE TRIGGER tokens_changed AFTER UPDATE OF project_id, secret_hash, revoked_at ON tokens
BEGIN UPDATE access_generation SET n = n + 1; END;
CREATE TRIGGER tokens_deleted AFTER DELETE ON tokens
BEGIN UPDATE access_generation SET n = n + 1; END;

CREATE TRIGGER grants_inserted AFTER INSERT ON tool_permissions
BEGIN UPDATE access_generation SET n = n + 1; END;
CREATE TRIGGER grants_updated AFTER UPDATE ON tool_permissions
BEGIN UPDATE access_generation SET n = n + 1; END;
CREATE TRIGGER grants_deleted AFTER DELETE ON tool_permissions
BEGIN UPDATE access_generation SET n = n + 1; END;

CREATE TRIGGER credentials_inserted AFTER INSERT ON credentials
BEGIN UPDATE access_generation SET n = n + 1; END;
CREATE TRIGGER credentials_updated AFTER UPDATE ON credentials
BEGIN UPDATE access_generation SET n = n + 1; END;
CREATE TRIGGER credentials_deleted AFTER DELETE ON credentials
BEGIN UPDATE access_generation SET n = n + 1; END;
