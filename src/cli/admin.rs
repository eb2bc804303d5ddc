//! Operator commands on the store: projects, tokens, grants, audit. They
//! open the SQLite file named by the config and start no server.

use std::collections::HashSet;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;
use serde_json::json;

use config::Config;
use gateway::operator::{Actor, Operator};
use store::access::{Apps, Exposure, Search};
use store::{AuditRow, Store};
use vocab::outcome::Outcome;

/// `project …`.
#[derive(Debug, Subcommand)]
pub enum ProjectCommand {
    /// Create a project (search on: hybrid, or BM25 in a build without it, unless --search says otherwise).
    Create {
        /// Unique name.
        name: String,
        /// Search strategy [default: hybrid, which answers with BM25 until the
        /// embedding model is there; bm25 in a build without the `semantic` feature].
        #[arg(long, value_enum)]
        search: Option<SearchArg>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List projects.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show a project with its tokens (never their secrets) and grants.
    Show {
        /// Name or id.
        project: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Forget what the project's use taught its search (the tools it ran
    /// after finding them, by query term and by what the request meant).
    /// Its audit log stays.
    ResetLearning {
        /// Name or id.
        project: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Choose how a project's tool_discovery searches (`off` turns its catalog off).
    SetSearch {
        /// Name or id.
        project: String,
        /// Search strategy.
        #[arg(value_enum)]
        search: SearchArg,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Choose how a project's clients see the tools: the two meta-tools
    /// (meta, the default), its permitted tools themselves, named
    /// server__tool (direct, for clients that search tools on their own or
    /// show a server's MCP App), or both.
    SetExposure {
        /// Name or id.
        project: String,
        /// What `tools/list` holds.
        #[arg(value_enum)]
        exposure: ExposureArg,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Choose whether a project on the meta exposure lists the tools that
    /// carry an MCP App (the Index cards, say) beside the meta-tools. Hosts
    /// such as ChatGPT and Claude render an App only for a tool they listed,
    /// so they are listed by default; `unlisted` keeps tools/list to the two
    /// meta-tools, and the Apps render nowhere.
    ///
    /// Example: mcp-gateway project set-apps acme unlisted
    SetApps {
        /// Name or id.
        project: String,
        /// Whether Apps are listed.
        #[arg(value_enum)]
        apps: AppsArg,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `projects.exposure` as the command line spells it.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ExposureArg {
    /// tool_discovery and tool_execute.
    Meta,
    /// The project's permitted tools, named server__tool.
    Direct,
    /// The meta-tools first, then the permitted tools.
    Both,
}

impl From<ExposureArg> for Exposure {
    fn from(e: ExposureArg) -> Self {
        match e {
            ExposureArg::Meta => Exposure::Meta,
            ExposureArg::Direct => Exposure::Direct,
            ExposureArg::Both => Exposure::Both,
        }
    }
}

/// `projects.apps` as the command line spells it.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum AppsArg {
    /// Tools that carry an App are listed beside the meta-tools.
    Listed,
    /// Only the meta-tools are listed.
    Unlisted,
}

impl From<AppsArg> for Apps {
    fn from(a: AppsArg) -> Self {
        match a {
            AppsArg::Listed => Apps::Listed,
            AppsArg::Unlisted => Apps::Unlisted,
        }
    }
}

/// `projects.search` as the command line spells it.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SearchArg {
    /// Local BM25.
    Bm25,
    /// BM25F blended with the local embedding model (`mcp-gateway model install`).
    Hybrid,
    /// Cloud search, falling back to the best local search.
    Cloud,
    /// Tool catalog off: tool_discovery answers nothing.
    Off,
}

impl SearchArg {
    fn into_search(self) -> Option<Search> {
        match self {
            SearchArg::Bm25 => Some(Search::Bm25),
            SearchArg::Hybrid => Some(Search::Hybrid),
            SearchArg::Cloud => Some(Search::Cloud),
            SearchArg::Off => None,
        }
    }
}

/// `token …`.
#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Issue a token for a project, or with --admin one that opens the
    /// operator console (/console), and print it (the only time it is shown).
    Issue {
        /// Name or id.
        #[arg(long, required_unless_present = "admin", conflicts_with = "admin")]
        project: Option<String>,
        /// An admin token: it opens the console and its API, and no project's tools.
        #[arg(long)]
        admin: bool,
        /// A note for people ("laptop", "ci").
        #[arg(long, default_value = "")]
        label: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List tokens (metadata only).
    List {
        /// Only this project's.
        #[arg(long, conflicts_with = "admin")]
        project: Option<String>,
        /// Admin tokens instead.
        #[arg(long)]
        admin: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Revoke a token by id; it is refused from the next request on.
    Revoke {
        /// Token id (the number in `mgw_<id>_…` or `mgwa_<id>_…`, or from `token list`).
        id: i64,
        /// An admin token's id.
        #[arg(long)]
        admin: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `grant` / `revoke`.
#[derive(Debug, Args)]
pub struct GrantArgs {
    /// Name or id.
    #[arg(long)]
    project: String,
    /// Server name.
    #[arg(long)]
    server: String,
    /// Only this tool of the server.
    #[arg(long)]
    tool: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// `audit …`.
#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// What operators changed (grants, tokens, search, restarts), from the
    /// command line or the console, newest first.
    Actions {
        /// How many.
        #[arg(long, short = 'n', default_value_t = 20)]
        lines: usize,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// The newest rows, oldest first. Rows still only in the audit journal
    /// (SQLite under strict audit, while the store is behind or takes no
    /// rows) are shown too, marked `journaled`.
    Tail {
        /// Only this project's.
        #[arg(long)]
        project: Option<String>,
        /// Only this request's rows: the request and, for a script, its inner
        /// calls (`ID.1`, `ID.2`…). The id is in the logs and the rows.
        #[arg(long, conflicts_with = "project")]
        request: Option<String>,
        /// How many rows.
        #[arg(long, short = 'n', default_value_t = 20)]
        lines: usize,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

fn open(config: &Config) -> anyhow::Result<Store> {
    Ok(Store::open_at(&config.store)?)
}

fn print_json(v: &impl Serialize) -> anyhow::Result<ExitCode> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(ExitCode::SUCCESS)
}

fn search_word(s: Option<Search>) -> &'static str {
    s.map_or("off", Search::as_str)
}

/// Runs a `project` command.
pub(super) fn project(config: &Config, cmd: ProjectCommand) -> anyhow::Result<ExitCode> {
    let store = open(config)?;
    match cmd {
        ProjectCommand::Create { name, search, json } => {
            config::check_server_name(&name).map_err(|m| anyhow::anyhow!(m.replace("server name", "project name")))?;
            let search = search.map_or(Some(Search::for_new_projects()), SearchArg::into_search);
            let p = Operator::new(&store).create_project(&Actor::Cli, &name, search)?;
            if json {
                return print_json(&p);
            }
            println!(
                "created project '{}' (id {}, search {})",
                p.name,
                p.id,
                search_word(p.search)
            );
            println!(
                "next: mcp-gateway grant --project {} --server SERVER, then mcp-gateway token issue --project {}",
                p.name, p.name
            );
        }
        ProjectCommand::List { json } => {
            let projects = store.projects()?;
            if json {
                return print_json(&projects);
            }
            println!("{:<6} {:<24} {:<7} CREATED", "ID", "NAME", "SEARCH");
            for p in projects {
                println!(
                    "{:<6} {:<24} {:<7} {}",
                    p.id,
                    p.name,
                    search_word(p.search),
                    p.created_at
                );
            }
        }
        ProjectCommand::Show { project, json } => {
            let view = Operator::new(&store).project(&project)?;
            let (p, tokens, permissions, credentials) = (view.project, view.tokens, view.grants, view.credentials);
            let (learned, remembered) = (view.learned_associations, view.remembered_meanings);
            if json {
                return print_json(&json!({
                    "project": p, "tokens": tokens, "permissions": permissions, "credentials": credentials,
                    "learnedAssociations": learned, "rememberedMeanings": remembered,
                }));
            }
            println!(
                "project {} (id {}), search {}, exposure {}, apps {}, created {}; learned from use: {learned} term-tool associations, {remembered} remembered requests",
                p.name,
                p.id,
                search_word(p.search),
                p.exposure.as_str(),
                p.apps.as_str(),
                p.created_at
            );
            println!("grants:");
            if permissions.is_empty() {
                println!(
                    "  none: this project sees no server (mcp-gateway grant --project {} --server S)",
                    p.name
                );
            }
            for g in permissions {
                let what = g.tool.map_or_else(
                    || format!("{} (whole server)", g.server),
                    |t| format!("{}:{t}", g.server),
                );
                println!("  {} {what}", if g.enabled { "allow" } else { "deny " });
            }
            if !credentials.is_empty() {
                println!("own credentials (names only):");
            }
            for c in &credentials {
                let what = match c.kind {
                    credentials::CredentialKind::OAuth => "OAuth sign-in".to_string(),
                    kind => format!("{} {}", kind.as_str(), c.name),
                };
                println!("  {} {what}, set {}", c.server, c.set_at);
            }
            println!("tokens:");
            for t in tokens {
                let state = t.revoked_at.map_or("live".to_string(), |r| format!("revoked {r}"));
                println!(
                    "  #{} {:<16} created {} last used {} {state}",
                    t.id,
                    t.label,
                    t.created_at,
                    t.last_used_at.as_deref().unwrap_or("never")
                );
            }
        }
        ProjectCommand::SetSearch { project, search, json } => {
            let p = Operator::new(&store).set_search(&Actor::Cli, &project, search.into_search())?;
            if json {
                return print_json(&p);
            }
            println!("project '{}' search: {}", p.name, search_word(p.search));
        }
        ProjectCommand::SetExposure {
            project,
            exposure,
            json,
        } => {
            let p = Operator::new(&store).set_exposure(&Actor::Cli, &project, exposure.into())?;
            if json {
                return print_json(&p);
            }
            println!("project '{}' exposure: {}", p.name, p.exposure.as_str());
        }
        ProjectCommand::SetApps { project, apps, json } => {
            let p = Operator::new(&store).set_apps(&Actor::Cli, &project, apps.into())?;
            if json {
                return print_json(&p);
            }
            println!("project '{}' apps: {}", p.name, p.apps.as_str());
        }
        ProjectCommand::ResetLearning { project, json } => {
            let forgotten = Operator::new(&store).reset_learning(&Actor::Cli, &project)?;
            if json {
                return print_json(&json!({ "project": project, "forgotten": forgotten }));
            }
            println!(
                "project '{project}' forgot what its use taught search ({} term-tool associations, {} remembered requests); \
                 running gateways apply it at their next request",
                forgotten.associations, forgotten.meanings
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs a `token` command.
pub(super) fn token(config: &Config, cmd: TokenCommand) -> anyhow::Result<ExitCode> {
    let store = open(config)?;
    match cmd {
        TokenCommand::Issue {
            admin: true,
            label,
            json,
            ..
        } => {
            let (info, secret) = Operator::new(&store).issue_admin_token(&Actor::Cli, &label)?;
            if json {
                return print_json(&json!({ "token": secret, "id": info.id, "admin": true }));
            }
            eprintln!(
                "admin token #{}: it opens the console (/console) and is shown only now, store it safely:",
                info.id
            );
            println!("{secret}");
        }
        TokenCommand::Issue {
            project, label, json, ..
        } => {
            let project = project.expect("clap requires --project without --admin");
            let (info, secret) = Operator::new(&store).issue_token(&Actor::Cli, &project, &label)?;
            if json {
                return print_json(&json!({ "token": secret, "id": info.id, "projectId": info.project_id }));
            }
            eprintln!(
                "token #{} for project '{project}'; it is shown only now, store it safely:",
                info.id
            );
            println!("{secret}");
        }
        TokenCommand::List { admin: true, json, .. } => {
            let tokens = store.admin_tokens()?;
            if json {
                return print_json(&tokens);
            }
            println!(
                "{:<6} {:<16} {:<26} {:<26} STATE",
                "ID", "LABEL", "CREATED", "LAST USED"
            );
            for t in tokens {
                let state = if t.revoked_at.is_some() { "revoked" } else { "live" };
                let last = t.last_used_at.as_deref().unwrap_or("never");
                println!("{:<6} {:<16} {:<26} {:<26} {state}", t.id, t.label, t.created_at, last);
            }
        }
        TokenCommand::List { project, json, .. } => {
            let tokens = store.tokens(project.as_deref())?;
            if json {
                return print_json(&tokens);
            }
            println!(
                "{:<6} {:<8} {:<16} {:<26} {:<26} STATE",
                "ID", "PROJECT", "LABEL", "CREATED", "LAST USED"
            );
            for t in tokens {
                let state = if t.revoked_at.is_some() { "revoked" } else { "live" };
                let last = t.last_used_at.as_deref().unwrap_or("never");
                println!(
                    "{:<6} {:<8} {:<16} {:<26} {:<26} {state}",
                    t.id, t.project_id, t.label, t.created_at, last
                );
            }
        }
        TokenCommand::Revoke { id, admin, json } => {
            if admin {
                Operator::new(&store).revoke_admin_token(&Actor::Cli, id)?;
            } else {
                Operator::new(&store).revoke_token(&Actor::Cli, id)?;
            }
            if json {
                return print_json(&json!({ "revoked": id, "admin": admin }));
            }
            println!("{}token #{id} revoked", if admin { "admin " } else { "" });
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `grant` (`allow = true`) or `revoke`.
pub(super) fn grant(config: &Config, a: GrantArgs, allow: bool) -> anyhow::Result<ExitCode> {
    if !config.servers.iter().any(|s| s.name == a.server) {
        eprintln!(
            "note: no server named '{}' in {}; the grant applies once one is configured",
            a.server, config.source
        );
    }
    let store = open(config)?;
    let target = a.tool.as_ref().map_or_else(
        || format!("server '{}'", a.server),
        |t| format!("tool '{}:{t}'", a.server),
    );
    Operator::new(&store).grant(&Actor::Cli, &a.project, &a.server, a.tool.as_deref(), allow)?;
    if a.json {
        return print_json(&json!({ "project": a.project, "server": a.server, "tool": a.tool, "enabled": allow }));
    }
    println!(
        "{} {target} {} project '{}'",
        if allow { "granted" } else { "revoked" },
        if allow { "to" } else { "from" },
        a.project
    );
    Ok(ExitCode::SUCCESS)
}

/// Runs an `audit` command.
pub(super) fn audit(config: &Config, cmd: AuditCommand) -> anyhow::Result<ExitCode> {
    let store = open(config)?;
    let (project, request, lines, json) = match cmd {
        AuditCommand::Tail {
            project,
            request,
            lines,
            json,
        } => (project, request, lines, json),
        AuditCommand::Actions { lines, json } => {
            let actions = store.admin_actions(lines)?;
            if json {
                return print_json(&actions);
            }
            println!("{:<24} {:<24} {:<18} TARGET", "AT", "ACTOR", "ACTION");
            for a in actions {
                let detail = a.detail.map(|d| format!(" ({d})")).unwrap_or_default();
                println!("{:<24} {:<24} {:<18} {}{detail}", a.at, a.actor, a.action, a.target);
            }
            return Ok(ExitCode::SUCCESS);
        }
    };
    let rows = match request {
        Some(id) => store.audit_request(&id)?.into_iter().map(Shown::stored).collect(),
        None => {
            // The journal first: a row the writer commits in between is then
            // in the store's read, never in neither.
            let journaled = store.journaled_rows(project.as_deref())?;
            newest(store.audit_tail(project.as_deref(), lines)?, journaled, lines)
        }
    };
    if json {
        return print_json(&rows);
    }
    println!(
        "{:<24} {:<20} {:>7} {:>5} {:<14} {:<10} {:>7} {:>7}  TOOL",
        "AT", "REQUEST", "PROJECT", "TOKEN", "META-TOOL", "OUTCOME", "MS", "RESULTS"
    );
    for Shown { row: r, journaled } in rows {
        let opt = |v: Option<i64>| v.map_or("-".to_string(), |v| v.to_string());
        let outcome = serde_json::to_value(r.outcome)?.as_str().unwrap_or("").to_string();
        println!(
            "{:<24} {:<20} {:>7} {:>5} {:<14} {:<10} {:>7} {:>7}  {}",
            r.at,
            r.request_id,
            opt(r.project_id),
            opt(r.token_id),
            r.meta_tool,
            outcome,
            r.latency_ms,
            r.result_count.map_or("-".to_string(), |n| n.to_string()),
            r.tool_key.unwrap_or_default() + if journaled { "  (journaled)" } else { "" }
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// An audit row as `audit tail` shows it.
#[derive(Debug, Serialize)]
struct Shown {
    #[serde(flatten)]
    row: AuditRow,
    /// Durable in the journal, not in the store yet.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    journaled: bool,
}

impl Shown {
    fn stored(row: AuditRow) -> Shown {
        Shown { row, journaled: false }
    }
}

/// The `n` newest of the store's rows and the journal's, oldest first; at
/// the same instant the store's come first. A call in both (its rows were
/// committed between the two reads) is shown once, at its latest: the
/// journal's outcome over the store's `started` row, else the store's row.
fn newest(mut stored: Vec<AuditRow>, mut journaled: Vec<AuditRow>, n: usize) -> Vec<Shown> {
    let finished: HashSet<String> = journaled
        .iter()
        .filter(|r| r.outcome != Outcome::Started)
        .map(|r| r.request_id.clone())
        .collect();
    stored.retain(|r| r.outcome != Outcome::Started || !finished.contains(&r.request_id));
    let in_store: HashSet<&str> = stored.iter().map(|r| r.request_id.as_str()).collect();
    journaled.retain(|r| !in_store.contains(r.request_id.as_str()));
    let mut rows: Vec<Shown> = stored.into_iter().map(Shown::stored).collect();
    rows.extend(journaled.into_iter().map(|row| Shown { row, journaled: true }));
    rows.sort_by(|a, b| a.row.at.cmp(&b.row.at));
    let extra = rows.len().saturating_sub(n);
    rows.drain(..extra);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, at: &str) -> AuditRow {
        AuditRow {
            at: at.to_string(),
            ..store::audit_row(id, "tool_execute")
        }
    }

    #[test]
    fn the_newest_rows_of_both_come_in_time_order_and_journaled_ones_are_marked() {
        let stored = vec![
            row("a", "2026-11-29T10:00:00.001Z"),
            row("b", "2026-11-29T10:00:00.003Z"),
        ];
        let journaled = vec![
            row("c", "2026-11-29T10:00:00.002Z"),
            row("d", "2026-11-29T10:00:00.004Z"),
        ];
        let shown = newest(stored, journaled, 3);
        let ids: Vec<(&str, bool)> = shown.iter().map(|s| (s.row.request_id.as_str(), s.journaled)).collect();
        assert_eq!(ids, [("c", true), ("b", false), ("d", true)]);
        let json = serde_json::to_value(&shown).unwrap();
        assert_eq!(json[0]["requestId"], "c");
        assert_eq!(json[0]["journaled"], true);
        assert!(
            json[1].get("journaled").is_none(),
            "a stored row says nothing more: {json}"
        );
    }

    #[test]
    fn a_call_in_both_reads_is_shown_once_at_its_latest() {
        let at = "2026-11-29T10:00:00.001Z";
        let done = |id: &str| AuditRow {
            outcome: Outcome::Ok,
            ..row(id, at)
        };
        let started = |id: &str| AuditRow {
            outcome: Outcome::Started,
            ..row(id, at)
        };
        let stored = vec![done("committed"), started("running"), started("finishing")];
        let journaled = vec![done("committed"), started("running"), done("finishing")];
        let shown: Vec<(String, Outcome, bool)> = newest(stored, journaled, 10)
            .into_iter()
            .map(|s| (s.row.request_id, s.row.outcome, s.journaled))
            .collect();
        assert_eq!(
            shown,
            [
                ("committed".to_string(), Outcome::Ok, false),
                ("running".to_string(), Outcome::Started, false),
                ("finishing".to_string(), Outcome::Ok, true),
            ]
        );
    }

    #[test]
    fn at_the_same_instant_the_stores_row_comes_first() {
        let at = "2026-11-29T10:00:00.001Z";
        let shown = newest(vec![row("stored", at)], vec![row("journaled", at)], 5);
        let ids: Vec<&str> = shown.iter().map(|s| s.row.request_id.as_str()).collect();
        assert_eq!(ids, ["stored", "journaled"]);
    }
}
