-- Whether a project on the `meta` exposure lists the tools that carry an MCP
-- App beside the two meta-tools (`listed`, the default: a host renders an
-- App only for a tool it listed) or not (`unlisted`). Changing it moves the
-- access generation (the projects_updated trigger of 0007).

ALTER TABLE projects ADD COLUMN apps TEXT COLLATE "C" NOT NULL DEFAULT 'listed'
    CHECK (apps IN ('listed', 'unlisted'));
