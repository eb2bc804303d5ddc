-- Pinned tool definitions (src/security): each tool's definition is trusted
-- on first sight and kept with its hash; a listing that differs waits in
-- tool_reviews until an operator approves or rejects it
-- (`mcp-gateway tools changes|approve|reject`).

CREATE TABLE tool_pins (
    server      TEXT NOT NULL,
    tool        TEXT NOT NULL,
    hash        TEXT NOT NULL,  -- SHA-256 of the canonical definition
    definition  TEXT NOT NULL,  -- canonical JSON, for the operator's diff
    pinned_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (server, tool)
);

-- One row per tool at most: the latest definition that is not the pinned one.
CREATE TABLE tool_reviews (
    server      TEXT NOT NULL,
    tool        TEXT NOT NULL,
    hash        TEXT NOT NULL,
    definition  TEXT NOT NULL,  -- as the server listed it, invisible characters included
    reasons     TEXT NOT NULL,  -- JSON array: "changed", "new", "suspicious:…"
    state       TEXT NOT NULL CHECK (state IN ('held', 'rejected')),
    seen_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (server, tool)
);

-- Moved by every change to either table, so a serving gateway applies an
-- approval made by `mcp-gateway tools approve` in another process.
CREATE TABLE review_generation (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n  INTEGER NOT NULL
);
INSERT INTO review_generation (id, n) VALUES (1, 0);

CREATE TRIGGER tool_pins_inserted AFTER INSERT ON tool_pins
BEGIN UPDATE review_generation SET n = n + 1; END;
CREATE TRIGGER tool_pins_updated AFTER UPDATE ON tool_pins
BEGIN UPDATE review_generation SET n = n + 1; END;
CREATE TRIGGER tool_pins_deleted AFTER DELETE ON tool_pins
BEGIN UPDATE review_generation SET n = n + 1; END;
CREATE TRIGGER tool_reviews_inserted AFTER INSERT ON tool_reviews
BEGIN UPDATE review_generation SET n = n + 1; END;
CREATE TRIGGER tool_reviews_updated AFTER UPDATE ON tool_reviews
BEGIN UPDATE review_generation SET n = n + 1; END;
CREATE TRIGGER tool_reviews_deleted AFTER DELETE ON tool_reviews
BEGIN UPDATE review_generation SET n = n + 1; END;
