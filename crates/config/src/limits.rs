//! `[[limits]]`: calls per minute and per day that each project may make of
//! a server, or of one of its tools. Counted per project, in windows every
//! replica on a shared store counts in.

use serde::Deserialize;
use toml::Spanned;

/// One `[[limits]]` entry, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLimit {
    /// The server whose calls are counted.
    server: Spanned<String>,
    /// Only this tool (as its server names it); absent: every tool of the server, together.
    tool: Option<String>,
    /// Only this project; absent: every project, each counted apart.
    project: Option<String>,
    /// Calls in any minute (a sliding window).
    per_minute: Option<u32>,
    /// Calls in any day (a sliding window).
    per_day: Option<u32>,
}

/// One validated limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolLimit {
    /// The server whose calls are counted.
    pub server: String,
    /// Only this tool, as its server names it; `None`: the whole server.
    pub tool: Option<String>,
    /// Only this project; `None`: every project, each apart.
    pub project: Option<String>,
    /// Calls in any minute (a sliding window).
    pub per_minute: Option<u32>,
    /// Calls in any day (a sliding window).
    pub per_day: Option<u32>,
}

impl ToolLimit {
    /// The scope its counts are kept under for the project with `project_id`:
    /// what it limits, so a reload that keeps it keeps its counts.
    pub fn scope(&self, project_id: i64) -> String {
        format!(
            "{project_id}|{}|{}|{}",
            self.server,
            self.tool.as_deref().unwrap_or("*"),
            self.project.as_deref().unwrap_or("*")
        )
    }
}

/// Every limit, in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Limits {
    list: Vec<ToolLimit>,
}

impl Limits {
    /// The limits a call of `server`'s `tool` (its own name) by `project` counts against.
    pub fn matching<'a>(
        &'a self,
        project: &'a str,
        server: &'a str,
        tool: &'a str,
    ) -> impl Iterator<Item = &'a ToolLimit> {
        self.list.iter().filter(move |l| {
            l.server == server
                && l.tool.as_deref().is_none_or(|t| t == tool)
                && l.project.as_deref().is_none_or(|p| p == project)
        })
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// The server each entry names: `(span, key, server)`.
pub(crate) fn servers_named(raw: &[RawLimit]) -> impl Iterator<Item = (std::ops::Range<usize>, String, &str)> {
    raw.iter().enumerate().map(|(i, l)| {
        (
            l.server.span(),
            format!("limits[{i}].server"),
            l.server.get_ref().as_str(),
        )
    })
}

/// Validates `[[limits]]` (the servers they name are checked with every
/// other reference, in `lib.rs`); the error is
/// `(span, key, message)`.
pub(crate) fn validate(raw: Vec<RawLimit>) -> Result<Limits, (std::ops::Range<usize>, String, String)> {
    let mut list: Vec<ToolLimit> = Vec::with_capacity(raw.len());
    for (i, l) in raw.into_iter().enumerate() {
        let span = l.server.span();
        let fail = |field: &str, message: String| (span.clone(), format!("limits[{i}].{field}"), message);
        let server = l.server.into_inner();
        if l.tool.as_deref().is_some_and(str::is_empty) {
            return Err(fail(
                "tool",
                "is empty: name a tool, or leave tool out to limit the whole server".into(),
            ));
        }
        match (l.per_minute, l.per_day) {
            (None, None) => return Err(fail("server", "limits nothing: set per_minute, per_day or both".into())),
            (Some(0), _) => {
                return Err(fail(
                    "per_minute",
                    "must be at least 1; hide the tool to stop its calls".into(),
                ));
            }
            (_, Some(0)) => {
                return Err(fail(
                    "per_day",
                    "must be at least 1; hide the tool to stop its calls".into(),
                ));
            }
            _ => {}
        }
        let limit = ToolLimit {
            server,
            tool: l.tool,
            project: l.project,
            per_minute: l.per_minute,
            per_day: l.per_day,
        };
        if list
            .iter()
            .any(|o| (&o.server, &o.tool, &o.project) == (&limit.server, &limit.tool, &limit.project))
        {
            return Err(fail(
                "server",
                "the same server, tool and project are limited twice".into(),
            ));
        }
        list.push(limit);
    }
    Ok(Limits { list })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(tool: Option<&str>, project: Option<&str>, per_minute: Option<u32>, per_day: Option<u32>) -> RawLimit {
        RawLimit {
            server: Spanned::new(0..1, "gh".to_string()),
            tool: tool.map(str::to_string),
            project: project.map(str::to_string),
            per_minute,
            per_day,
        }
    }

    #[test]
    fn a_call_counts_against_its_servers_its_tools_and_its_projects_limits() {
        let limits = validate(vec![
            raw(None, None, Some(100), None),
            raw(Some("create_issue"), None, Some(5), Some(50)),
            raw(Some("create_issue"), Some("ops"), None, Some(500)),
        ])
        .unwrap();
        assert_eq!(limits.matching("dev", "gh", "create_issue").count(), 2);
        assert_eq!(limits.matching("ops", "gh", "create_issue").count(), 3);
        assert_eq!(limits.matching("ops", "gh", "search").count(), 1);
        assert_eq!(limits.matching("ops", "gl", "search").count(), 0);
        let scopes: Vec<String> = limits
            .matching("ops", "gh", "create_issue")
            .map(|l| l.scope(7))
            .collect();
        assert_eq!(scopes, ["7|gh|*|*", "7|gh|create_issue|*", "7|gh|create_issue|ops"]);
    }

    #[test]
    fn a_limit_must_limit_something_of_a_configured_server_once() {
        let refused = |l: Vec<RawLimit>| validate(l).unwrap_err();
        assert!(
            refused(vec![raw(None, None, None, None)])
                .2
                .starts_with("limits nothing")
        );
        assert_eq!(refused(vec![raw(None, None, Some(0), None)]).1, "limits[0].per_minute");
        assert_eq!(refused(vec![raw(Some(""), None, Some(1), None)]).1, "limits[0].tool");
        let twice = refused(vec![raw(None, None, Some(1), None), raw(None, None, None, Some(9))]);
        assert_eq!(twice.1, "limits[1].server");
    }
}
