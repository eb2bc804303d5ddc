-- How a project's clients see the tools: through the two meta-tools
-- (`meta`, the default), as the project's permitted tools themselves
-- (`direct`, named server__tool), or both. Changing it moves the access
-- generation (the projects_updated trigger of 0007).

ALTER TABLE projects ADD COLUMN exposure TEXT NOT NULL DEFAULT 'meta'
    CHECK (exposure IN ('meta', 'direct', 'both'));
