//! What discovery hides from a project, and why: the tools that would match
//! a search but that the rules or the project's grants keep from it. For
//! operators (`mcp-gateway search --hidden`, the console's playground),
//! never for a caller.

use std::sync::Arc;

use serde::Serialize;

use super::{DiscoverArgs, Gateway};
use crate::auth::Caller;
use crate::catalog::{Entry, View};
use crate::rank::{Bm25, SearchProvider};
use config::Overrides;
use rules::Rules;
use store::access::{Access, Grants};
use vocab::keys::ToolKey;
use vocab::wire;

/// A tool that would match the search, hidden from the project.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HiddenTool {
    /// `server:tool`.
    pub tool_key: ToolKey,
    /// The tool's description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// 0..1, BM25F over every listed tool.
    pub relevance: f64,
    /// Why the project cannot see it.
    pub hidden: String,
}

impl Gateway {
    /// The tools that `args` would find among every listed tool, rules set
    /// aside, that `caller`'s project cannot see, best first, each saying
    /// why. Ranked with BM25F (the tools hidden from every project have no
    /// embeddings) and with nothing learned.
    pub async fn hidden(&self, caller: &Caller, args: &DiscoverArgs) -> Result<Vec<HiddenTool>, String> {
        let request = search::Request {
            queries: args.queries()?,
            context: args.context(),
            limit: args.limit()?,
            prior: None,
        };
        let servers = self.registry.servers();
        let everyone = Arc::new(Grants::all_of(servers.iter().map(|s| s.name())));
        let everything = self.catalog.unfiltered(&self.registry).map_err(|e| e.to_string())?;
        let all = View::new(everything, everyone);
        let all = match args.servers()? {
            Some(servers) => all.narrowed_to(servers)?,
            None => all,
        };
        let theirs = self.catalog.view_of(caller);
        let shaping = self.catalog.shaping();
        let overrides = shaping.overrides.for_project(&caller.project.name);
        // The unfiltered catalog knows tools by their servers' names, whatever an override renamed.
        Ok(Bm25
            .search(&all, &request)
            .await?
            .into_iter()
            .filter(|r| theirs.by_real_key(&r.key).is_none())
            .filter_map(|r| {
                let entry = all.get(&r.key)?;
                Some(HiddenTool {
                    tool_key: entry.key.clone(),
                    description: entry.tool.description.as_deref().map(str::to_string),
                    relevance: wire::score(r.relevance),
                    hidden: why_hidden(&shaping.rules, &overrides, &caller.project.name, &caller.grants, entry),
                })
            })
            .collect())
    }
}

/// Why `project`, with `grants` and its `overrides` (as
/// [`Overrides::for_project`] gives them), cannot see `entry` (as its
/// server lists it): the override or rule that hides it, or the grant it lacks.
fn why_hidden(rules: &Rules, overrides: &Overrides, project: &str, grants: &Grants, entry: &Entry) -> String {
    if overrides
        .global(&entry.server, entry.real_name())
        .is_some_and(|o| o.hidden)
    {
        return "an [[overrides]] entry in gateway.toml hides it".into();
    }
    // An unfiltered entry's tags are its scan's flags, which rules may match.
    let verdict = rules.verdict(&entry.server, entry.real_name(), &entry.tags);
    if !verdict.enabled {
        return match verdict.decided_by {
            Some(i) => format!("rules[{i}] in gateway.toml disables it"),
            None => {
                "no rule in gateway.toml enables it: [[rules]] with enabled = true enable only what they match".into()
            }
        };
    }
    match grants.server_access(&entry.server) {
        Access::Nothing => format!("project '{project}' is not granted server '{}'", entry.server),
        Access::PerTool => format!(
            "project '{project}' is granted only some tools of server '{}', not this one",
            entry.server
        ),
        // A server that starts or stops between the two views.
        Access::All => format!("project '{project}' cannot see it now"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::Tool;
    use rules::RuleSpec;
    use store::access::Permission;

    fn entry(server: &str, tool: &str) -> Entry {
        let tool = Tool::new(tool.to_string(), "does it", serde_json::Map::new());
        Entry::shaped(server, tool, Vec::new(), None)
    }

    fn grant(server: &str, tool: Option<&str>) -> Permission {
        Permission {
            server: server.into(),
            tool: tool.map(str::to_string),
            enabled: true,
        }
    }

    #[test]
    fn the_reason_names_the_rule_or_the_missing_grant() {
        let hide_deletes = RuleSpec {
            pattern: vec!["*delete*".into()],
            enabled: Some(false),
            ..Default::default()
        };
        let rules = Rules::compile(&[hide_deletes]).unwrap();
        let grants = Grants::from_permissions([grant("db", None), grant("fs", Some("read"))]);
        let none = Overrides::default();
        let why = |server, tool| why_hidden(&rules, &none, "ops", &grants, &entry(server, tool));
        assert_eq!(why("db", "delete_row"), "rules[0] in gateway.toml disables it");
        assert_eq!(why("web", "fetch"), "project 'ops' is not granted server 'web'");
        assert_eq!(
            why("fs", "write"),
            "project 'ops' is granted only some tools of server 'fs', not this one"
        );
        let allow_list = RuleSpec {
            pattern: vec!["read*".into()],
            enabled: Some(true),
            ..Default::default()
        };
        let allow_list = Rules::compile(&[allow_list]).unwrap();
        let reason = why_hidden(&allow_list, &none, "ops", &grants, &entry("db", "drop"));
        assert!(reason.starts_with("no rule in gateway.toml enables it"), "{reason}");
    }
}
