//! `[[overrides]]`: a tool's new name, description or tags, or the tool
//! hidden, for every project or for one. They apply at once on reload, and
//! hold whatever the server later says of the tool (a changed description
//! is still pinned and held for review).

use serde::Deserialize;
use toml::Spanned;

/// Most characters of an overriding description: far more than a good one
/// takes, short of filling a listing.
const MAX_DESCRIPTION_CHARS: usize = 4096;
/// Most characters of a tool name, as MCP allows them.
const MAX_NAME_CHARS: usize = 128;

/// One `[[overrides]]` entry, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawOverride {
    /// `server:tool`, the tool as its server names it.
    tool: Spanned<String>,
    /// Only this project's view; absent: every project's.
    project: Option<String>,
    /// The name callers see (the toolKey becomes `server:name`).
    name: Option<String>,
    /// The description callers see and search.
    description: Option<String>,
    /// Tags added to those the rules give.
    #[serde(default)]
    tags: Vec<String>,
    /// Hide the tool: no caller of the scope finds or runs it.
    #[serde(default)]
    hidden: bool,
}

/// One validated override.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOverride {
    /// The server.
    pub server: String,
    /// The tool, as the server names it.
    pub tool: String,
    /// Only this project's view; `None`: every project's.
    pub project: Option<String>,
    /// The name callers see instead.
    pub name: Option<String>,
    /// The description callers see instead.
    pub description: Option<String>,
    /// Tags added to the rules' tags.
    pub tags: Vec<String>,
    /// Whether the tool is hidden.
    pub hidden: bool,
}

/// Every override, in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    list: Vec<ToolOverride>,
}

impl Overrides {
    /// The override of `server`'s tool `tool` (its own name) for every
    /// project, if any.
    pub fn global(&self, server: &str, tool: &str) -> Option<&ToolOverride> {
        self.list
            .iter()
            .find(|o| o.project.is_none() && o.server == server && o.tool == tool)
    }

    /// The projects that have overrides of their own.
    pub fn projects(&self) -> Vec<&str> {
        let mut projects: Vec<&str> = self.list.iter().filter_map(|o| o.project.as_deref()).collect();
        projects.sort_unstable();
        projects.dedup();
        projects
    }

    /// What `project` sees: its own overrides, each in place of the one for
    /// every project of the same tool, and the others for every project;
    /// all as if for every project, so one catalog can be built from them.
    pub fn for_project(&self, project: &str) -> Overrides {
        let own = |o: &ToolOverride| o.project.as_deref() == Some(project);
        let list = self
            .list
            .iter()
            .filter(|o| {
                own(o)
                    || (o.project.is_none()
                        && !self
                            .list
                            .iter()
                            .any(|p| own(p) && p.server == o.server && p.tool == o.tool))
            })
            .map(|o| ToolOverride {
                project: None,
                ..o.clone()
            })
            .collect();
        Overrides { list }
    }
}

/// The server each entry's `server:tool` names: `(span, key, server)`.
pub(crate) fn servers_named(raw: &[RawOverride]) -> impl Iterator<Item = (std::ops::Range<usize>, String, &str)> {
    raw.iter().enumerate().filter_map(|(i, o)| {
        let (server, _) = o.tool.get_ref().split_once(':')?;
        Some((o.tool.span(), format!("overrides[{i}].tool"), server))
    })
}

/// Validates `[[overrides]]` (the servers they name are checked with every
/// other reference, in `lib.rs`); the error is
/// `(span, key, message)`.
pub(crate) fn validate(raw: Vec<RawOverride>) -> Result<Overrides, (std::ops::Range<usize>, String, String)> {
    let mut list: Vec<ToolOverride> = Vec::with_capacity(raw.len());
    for (i, o) in raw.into_iter().enumerate() {
        let span = o.tool.span();
        let fail = |field: &str, message: String| (span.clone(), format!("overrides[{i}].{field}"), message);
        let key = o.tool.into_inner();
        let Some((server, tool)) = key.split_once(':').filter(|(s, t)| !s.is_empty() && !t.is_empty()) else {
            return Err(fail("tool", format!("'{key}' is not server:tool")));
        };
        if let Some(name) = &o.name
            && let Err(why) = tool_name(name)
        {
            return Err(fail("name", why));
        }
        if let Some(d) = &o.description
            && (d.trim().is_empty() || d.chars().count() > MAX_DESCRIPTION_CHARS)
        {
            return Err(fail(
                "description",
                format!("must hold 1 to {MAX_DESCRIPTION_CHARS} characters"),
            ));
        }
        if o.name.is_none() && o.description.is_none() && o.tags.is_empty() && !o.hidden {
            return Err(fail(
                "tool",
                "changes nothing: set name, description, tags or hidden = true".into(),
            ));
        }
        let (server, tool) = (server.to_string(), tool.to_string());
        if list
            .iter()
            .any(|p| p.server == server && p.tool == tool && p.project == o.project)
        {
            return Err(fail(
                "tool",
                format!("'{key}' is overridden twice for the same projects"),
            ));
        }
        list.push(ToolOverride {
            server,
            tool,
            project: o.project,
            name: o.name,
            description: o.description,
            tags: o.tags,
            hidden: o.hidden,
        });
    }
    Ok(Overrides { list })
}

/// A tool name as MCP allows it: 1 to 128 of `A-Z a-z 0-9 _ - .`.
fn tool_name(name: &str) -> Result<(), String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS || !name.chars().all(allowed) {
        return Err(format!(
            "'{name}' is not a tool name: 1 to {MAX_NAME_CHARS} of A-Z a-z 0-9 _ - ."
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(tool: &str, name: Option<&str>, hidden: bool) -> RawOverride {
        RawOverride {
            tool: Spanned::new(0..1, tool.to_string()),
            project: None,
            name: name.map(str::to_string),
            description: None,
            tags: Vec::new(),
            hidden,
        }
    }

    #[test]
    fn an_override_names_a_configured_servers_tool_and_changes_something() {
        let ok = validate(vec![raw("gh:search_issues", Some("find_issues"), false)]).unwrap();
        assert_eq!(
            ok.global("gh", "search_issues").unwrap().name.as_deref(),
            Some("find_issues")
        );
        assert!(ok.global("gh", "other").is_none());
        let refused = |o: RawOverride| validate(vec![o]).unwrap_err();
        assert_eq!(
            refused(raw("search_issues", None, true)).2,
            "'search_issues' is not server:tool"
        );
        assert!(
            refused(raw("gh:x", Some("has space"), false))
                .2
                .contains("is not a tool name")
        );
        assert!(refused(raw("gh:x", None, false)).2.starts_with("changes nothing"));
        let twice = validate(vec![raw("gh:x", None, true), raw("gh:x", Some("y"), false)]).unwrap_err();
        assert_eq!(twice.1, "overrides[1].tool");
    }

    #[test]
    fn a_project_override_replaces_the_one_for_everyone_in_that_project_alone() {
        let mut mine = raw("gh:x", None, true);
        mine.project = Some("ops".into());
        let all = vec![mine, raw("gh:x", Some("y"), false), raw("gh:z", Some("w"), false)];
        let o = validate(all).unwrap();
        assert_eq!(o.projects(), ["ops"]);
        assert_eq!(o.global("gh", "x").unwrap().name.as_deref(), Some("y"));
        let ops = o.for_project("ops");
        assert!(ops.global("gh", "x").unwrap().hidden, "its own, in place of everyone's");
        assert_eq!(
            ops.global("gh", "z").unwrap().name.as_deref(),
            Some("w"),
            "everyone's still"
        );
        assert_eq!(
            o.for_project("dev"),
            Overrides {
                list: o.list.iter().filter(|o| o.project.is_none()).cloned().collect()
            }
        );
    }
}
