//! The chaos demo's one skill (the Skills extension, SEP-2640): how to work
//! through sums with `calculate`. Read with `skills/get` and
//! `resources/read`; not in `resources/list`, which the spec allows.

use rmcp::model::{ReadResourceResult, ResourceContents, Skill, SkillFrontmatter, SkillResource, SkillResources};

/// Where the skill's `SKILL.md` is.
pub(super) const URI: &str = "skill://demo/arithmetic/SKILL.md";

const BODY: &str = "---\nname: arithmetic\ndescription: Work through sums one step at a time with calculate\n---\n\n\
Use `calculate` for each step of a sum, and say each intermediate result.\n";

/// The skill as `skills/list` and `skills/get` give it.
pub(super) fn skill() -> Skill {
    Skill::new(
        URI,
        SkillFrontmatter::new("arithmetic", "Work through sums one step at a time with calculate"),
        SkillResources::Files(vec![SkillResource::from_bytes(URI, BODY.as_bytes())]),
    )
}

/// `resources/read` of the skill's file.
pub(super) fn read() -> ReadResourceResult {
    ReadResourceResult::new(vec![ResourceContents::text(BODY, URI).with_mime_type("text/markdown")])
}
