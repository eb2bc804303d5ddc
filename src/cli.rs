//! The command line: `serve`, `check`, `import`, `add`, `servers`, `search`, `call`, the store's
//! operator commands (`project`, `token`, `grant`, `secret`, `login`…), `demo-server`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand, ValueEnum};
use rmcp::model::CallToolResponse;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tracing::info;

use crate::launch::{Launch, Stdio};
use config::{self, Config, McpServersFile};
use gateway::auth::{self, Caller};
use gateway::{CallRequest, DEFAULT_RESULTS, DiscoverArgs, Discovery, Gateway, MetaCall, OneOrMany};
use vocab::keys::RequestId;
use vocab::outcome::Outcome;
use vocab::wire::MetaTool;

mod add;
mod admin;
mod archive;
mod credentials;
mod demo_server;
mod eval;
mod logs;
mod model;
mod servers;
mod tools;
mod usage;

pub use logs::{Sink, flush_logs, init_logging, lines};

/// An MCP gateway: many downstream MCP servers behind two tools,
/// `tool_discovery` (search) and `tool_execute` (run).
///
/// Point an MCP client at `mcp-gateway serve` (stdio) or at
/// `mcp-gateway serve --http 127.0.0.1:8931` (streamable HTTP at /mcp).
#[derive(Debug, Parser)]
#[command(version, propagate_version = true, after_help = EXAMPLES)]
pub struct Cli {
    /// Configuration file (TOML, or a Claude Desktop style `mcpServers` JSON).
    /// Default: ./gateway.toml if present, else the built-in default.
    #[arg(long, short, global = true, env = config::CONFIG_ENV)]
    pub config: Option<PathBuf>,

    /// Log format on stderr.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Pretty)]
    pub log_format: LogFormat,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

const EXAMPLES: &str = "\
Examples:
  mcp-gateway serve                          MCP over stdio (for Claude Desktop, IDEs)
  mcp-gateway serve --http 127.0.0.1:8931    MCP over streamable HTTP at /mcp
  mcp-gateway check --config gateway.toml    validate a config without starting anything
  mcp-gateway servers                        status and tool count of every server
  mcp-gateway search \"read a file\"           what tool_discovery would answer
  mcp-gateway call demo:calculate '{\"expression\": \"2*21\"}'
  mcp-gateway project create research && mcp-gateway grant --project research --server demo
  mcp-gateway token issue --project research      prints a token, once
  mcp-gateway secret set --project research --server github --header 'Authorization=Bearer ghp_…'
  mcp-gateway login linear --project research     OAuth sign-in, the project's own account
  mcp-gateway import claude_desktop_config.json >> gateway.toml
  mcp-gateway add io.github.brave/brave-search-mcp-server --project research
                                             a server from the MCP Registry, checked, its key asked for
  MCP_GATEWAY_DB=postgres://gw@db/gw mcp-gateway serve --http 0.0.0.0:8931
                                             a replica on a shared PostgreSQL store (docs: replicas.md)";

/// Whom a one-shot `search` or `call` acts for.
#[derive(Debug, clap::Args)]
pub struct Who {
    /// Act as this project (an operator's shortcut; needs access to the store).
    #[arg(long, conflicts_with = "token")]
    project: Option<String>,
    /// Act as the holder of this token.
    #[arg(long, env = auth::TOKEN_ENV, hide_env_values = true)]
    token: Option<String>,
}

impl Who {
    async fn caller(&self, gw: &Gateway) -> anyhow::Result<Caller> {
        if let Some(p) = &self.project {
            return Ok(gw.caller_for_project(p)?);
        }
        gw.authenticate(self.token.as_deref(), None).await.map_err(|e| match e {
            auth::Error::Unauthorized if self.token.is_none() => {
                anyhow::anyhow!("no caller: pass --project NAME or --token TOKEN, or turn on [auth] allow_anonymous")
            }
            other => other.into(),
        })
    }
}

/// Log output format.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable lines.
    Pretty,
    /// One JSON object per line, for log shippers.
    Json,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the gateway: MCP over stdio (default) and/or streamable HTTP.
    ///
    /// Over stdio alone it logs only warnings and errors, since a client that
    /// starts it may show its stderr to the user; RUST_LOG=info (or debug)
    /// asks for more. With --http it logs each call at info.
    Serve {
        /// Serve streamable HTTP at http://ADDR/mcp (e.g. 127.0.0.1:8931; port 0 picks one).
        #[arg(long, value_name = "ADDR")]
        http: Option<SocketAddr>,
        /// Also serve stdio when --http is given.
        #[arg(long)]
        stdio: bool,
        /// Threads that run calls (default: half the CPU cores, at least one).
        /// A call is mostly waiting on sockets and pipes, and handing it between
        /// threads costs more than it gives until the gateway is busy: on two
        /// cores one thread spends 10–14% less CPU per call (README, "CPU per call").
        /// Search and embedding run on their own threads either way.
        #[arg(long, value_name = "N", env = "MCP_GATEWAY_THREADS")]
        threads: Option<std::num::NonZeroUsize>,
    },
    /// Validate the configuration and exit (non-zero with file, line and key on error).
    Check {
        /// Print `{valid, source, servers, enabled, builtIns}`, or `{valid:
        /// false, error, path, line, key}`, on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Convert an `mcpServers` JSON file (Claude Desktop, .mcp.json) to `[[servers]]` TOML on stdout.
    Import {
        /// The JSON file.
        path: PathBuf,
        /// Print `{toml, renamed: [{from, to}]}`.
        #[arg(long)]
        json: bool,
    },
    /// Add a server from the MCP Registry by name: a `[[servers]]` entry
    /// appended to the config and checked; its secrets asked for or named.
    Add(add::AddArgs),
    /// Start every server, then print its status and tool count.
    Servers {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Search tools as tool_discovery does, as a project sees them.
    ///
    /// Example: `mcp-gateway search "delete a row" --project ops --hidden`
    /// also lists the matching tools that ops cannot see, and why.
    Search {
        /// One or more phrasings of what you need.
        #[arg(required = true)]
        query: Vec<String>,
        /// How many results.
        #[arg(long, short = 'n', default_value_t = DEFAULT_RESULTS as i64)]
        max_results: i64,
        /// Only this server's tools (repeat for several), as tool_discovery's `servers`.
        #[arg(long = "server", short = 's', value_name = "NAME")]
        servers: Vec<String>,
        /// Also list the matching tools the project cannot see (hidden by
        /// [[rules]] or not granted), each with why.
        #[arg(long)]
        hidden: bool,
        /// Print the JSON tool_discovery returns (with --hidden: `{answer, hidden}`).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        who: Who,
    },
    /// Run a tool as tool_execute does and print what it answered: its
    /// text, or with --json the whole result. A tool error exits 1.
    Call {
        /// `server:tool`.
        tool_key: String,
        /// Arguments as a JSON object.
        #[arg(default_value = "{}")]
        arguments: String,
        /// Print the result as tool_execute returns it (content, structuredContent, isError).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        who: Who,
    },
    /// Manage projects: create, list, show, set-search.
    #[command(subcommand)]
    Project(admin::ProjectCommand),
    /// Manage tokens: issue (the secret is shown once), list, revoke; --admin for the console's.
    #[command(subcommand)]
    Token(admin::TokenCommand),
    /// Let a project see a server, or one tool of it.
    Grant(admin::GrantArgs),
    /// Take a server (or one tool) away from a project.
    Revoke(admin::GrantArgs),
    /// Read the audit log.
    #[command(subcommand)]
    Audit(admin::AuditCommand),
    /// Calls per project, and what discovery and code mode kept out of models' context.
    ///
    /// Example: `mcp-gateway usage --range week --project ops`
    Usage(usage::UsageArgs),
    /// A project's own headers or env for a server, stored encrypted (set, list, remove).
    #[command(subcommand)]
    Secret(credentials::SecretCommand),
    /// Sign a project in to a remote MCP server with OAuth (browser, PKCE); --status shows sign-ins.
    Login(credentials::LoginArgs),
    /// Forget a project's OAuth sign-in to a server.
    Logout(credentials::LogoutArgs),
    /// Review tool definitions held for an operator (changed after approval,
    /// or hostile-looking): `changes` shows why and a diff, then `approve` or `reject`.
    #[command(subcommand)]
    Tools(tools::ToolsCommand),
    /// Index and search the local archives ([archives] folders).
    #[command(subcommand)]
    Archive(archive::ArchiveCommand),
    /// Install the embedding model hybrid search uses.
    #[command(subcommand)]
    Model(model::ModelCommand),
    /// Measure search quality on the in-repo benchmark: recall@1/5/10 and MRR@10.
    Eval {
        /// The benchmark folder (catalog/*.json and tasks.jsonl).
        #[arg(long, default_value = "benches/data")]
        data: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Search weights to try instead of the defaults, e.g. `name=3,description=1.2,tie_breaker=0.3`.
        #[arg(long, default_value = "")]
        weights: search::bm25::Weights,
        /// Share of BM25 in the hybrid score (0..1; the rest is the embedding model's cosine).
        #[arg(long, default_value_t = search::semantic::DEFAULT_ALPHA)]
        alpha: f32,
        /// Measure learning from use instead: replay the tune side (tasks, steps and
        /// paraphrases.jsonl) as discoveries followed by successful executes, then score
        /// the held-out half after 0, 10, 100, 300 and 1,000 calls; and the same on a second
        /// split, leave-servers-out. Ranked with the term prior, the memory of meanings,
        /// and both.
        #[arg(long)]
        replay: bool,
        /// With --replay: only score the replayed calls themselves (no held-out task) for
        /// each of a few blends of the memory of meanings: how its blend was set.
        #[arg(long, requires = "replay")]
        tune_meanings: bool,
        /// With --replay: only score the replayed calls themselves for each of a few
        /// amounts of evidence a learned lift must outweigh (terms and meanings
        /// together): how it was set. Counts the calls learning put first and those
        /// it pushed from first, beside SEEN@5.
        #[arg(long, requires = "replay", conflicts_with = "tune_meanings")]
        tune_evidence: bool,
    },
    /// Run the built-in demo MCP server (what the default config aggregates).
    DemoServer {
        /// Add test tools that fail, hang, crash and write garbage on purpose.
        #[arg(long)]
        chaos: bool,
        /// Add the resources, resource template and prompts that the official
        /// MCP conformance suite reads (to run it through the gateway).
        #[arg(long)]
        conformance: bool,
        /// Serve streamable HTTP on ADDR instead of stdio.
        #[arg(long, value_name = "ADDR")]
        http: Option<SocketAddr>,
        /// With --http: speak only the revisions that have sessions (up to
        /// 2025-11-25) and close a session after MS milliseconds without
        /// requests, to see clients re-open expired sessions.
        #[arg(long, value_name = "MS", requires = "http")]
        session_idle_ms: Option<u64>,
        /// With --http: require an OAuth access token (JWT) from this issuer
        /// for this server's URL, as OAuth-protected MCP servers do.
        #[arg(long, value_name = "ISSUER", requires = "http")]
        require_jwt: Option<String>,
    },
}

/// Runs a parsed command line.
pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    if let Command::DemoServer {
        chaos,
        conformance,
        http,
        session_idle_ms,
        require_jwt,
    } = cli.command
    {
        demo_server::serve(
            chaos,
            conformance,
            http,
            session_idle_ms.map(Duration::from_millis),
            require_jwt,
        )
        .await?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Command::Import { path, json } = &cli.command {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        let file: McpServersFile =
            serde_json::from_str(&text).with_context(|| format!("{}: not an mcpServers JSON file", path.display()))?;
        let imported = config::to_toml(&file).map_err(anyhow::Error::msg)?;
        if *json {
            let renamed: Vec<Value> = (imported.renamed.iter())
                .map(|(from, to)| serde_json::json!({ "from": from, "to": to }))
                .collect();
            let out = serde_json::json!({ "toml": imported.toml, "renamed": renamed });
            println!("{}", serde_json::to_string_pretty(&out)?);
            return Ok(ExitCode::SUCCESS);
        }
        for (original, name) in &imported.renamed {
            eprintln!("renamed '{original}' to '{name}' (a server name; the original is kept as its title)");
        }
        print!("{}", imported.toml);
        return Ok(ExitCode::SUCCESS);
    }

    let path = cli.config.clone().or_else(config::default_path);
    if let Command::Add(args) = cli.command {
        return add::run(path, args).await;
    }
    if let Command::Check { json: true } = cli.command {
        return check_json(Config::load(path.as_deref()));
    }
    let config = Config::load(path.as_deref())?;
    if let Command::Eval {
        data,
        json,
        weights,
        alpha,
        replay,
        tune_meanings,
        tune_evidence,
    } = &cli.command
    {
        if *tune_meanings || *tune_evidence {
            return eval::tune(&config, data, *tune_evidence).await;
        }
        if *replay {
            return eval::replay(&config, data, *json).await;
        }
        return eval::measure(&config, data, *json, *weights, *alpha).await;
    }
    match cli.command {
        Command::Check { .. } => {
            if !config.missing.is_empty() {
                bail!("{}", config.missing.join("\n"));
            }
            print_check(&config);
            Ok(ExitCode::SUCCESS)
        }
        Command::Serve { http, stdio, .. } => serve(config, path, http, stdio || http.is_none()).await,
        Command::Servers { json } => one_shot(&config, |gw| async move { servers::print(&gw, json) }).await,
        Command::Search {
            query,
            max_results,
            servers,
            hidden,
            json,
            who,
        } => {
            let args = DiscoverArgs {
                query: OneOrMany::Many(query),
                context: None,
                max_results: Some(max_results),
                servers: Some(servers),
            };
            one_shot(&config, |gw| async move {
                let caller = who.caller(&gw).await?;
                let hidden = match hidden {
                    true => Some(gw.hidden(&caller, &args).await.map_err(anyhow::Error::msg)?),
                    false => None,
                };
                let found = match gw.discover(&caller, &args).await {
                    Ok(found) => found,
                    // Asked why a server is hidden, the project's own discovery of it is refused: say so, and show why.
                    Err(why) if hidden.is_some() => Discovery::none(why),
                    Err(why) => anyhow::bail!(why),
                };
                if json {
                    let out = match &hidden {
                        Some(hidden) => serde_json::json!({ "answer": found, "hidden": hidden }),
                        None => serde_json::to_value(&found)?,
                    };
                    println!("{}", serde_json::to_string_pretty(&out)?);
                    return Ok(ExitCode::SUCCESS);
                }
                if let Some(notice) = &found.notice {
                    eprintln!("{notice}");
                }
                if found.results.is_empty() {
                    println!("no matching tools");
                }
                let first_line = |d: Option<&str>| d.unwrap_or("").lines().next().unwrap_or("").to_string();
                for f in &found.results {
                    println!(
                        "{:.3}  {}\n       {}",
                        f.relevance,
                        f.tool_key,
                        first_line(f.description.as_deref())
                    );
                }
                if let Some(hidden) = hidden.filter(|h| !h.is_empty()) {
                    println!("\nhidden from project '{}':", caller.project.name);
                    for h in &hidden {
                        println!(
                            "{:.3}  {}\n       {}\n       hidden: {}",
                            h.relevance,
                            h.tool_key,
                            first_line(h.description.as_deref()),
                            h.hidden
                        );
                    }
                }
                Ok(ExitCode::SUCCESS)
            })
            .await
        }
        Command::Call {
            tool_key,
            arguments,
            json,
            who,
        } => {
            let arguments: Value = serde_json::from_str(&arguments).context("arguments must be a JSON object")?;
            one_shot(&config, |gw| async move {
                let caller = who.caller(&gw).await?;
                // The path a face's tool_execute takes: the answer, the
                // metrics, the access line and the audit row, in one place.
                let request_id = RequestId::fresh();
                let call = serde_json::json!({ "toolKey": tool_key, "arguments": arguments });
                let call = MetaCall::parse(MetaTool::Execute, call.as_object().cloned());
                let result = gw
                    .call(
                        MetaTool::Execute,
                        &request_id,
                        Ok(caller),
                        &CancellationToken::new(),
                        |_| {
                            CallRequest {
                                call,
                                meta: Default::default(),
                                // Each command is a session of its own.
                                session: format!("cli:{request_id}"),
                                origin: Default::default(),
                                budget: None,
                            }
                        },
                    )
                    .await?;
                let shown = match &result {
                    CallToolResponse::Complete(r) if !json => answer_text(r),
                    CallToolResponse::Complete(r) => serde_json::to_string_pretty(r)?,
                    CallToolResponse::InputRequired(r) => serde_json::to_string_pretty(r)?,
                    CallToolResponse::Task(r) => serde_json::to_string_pretty(r)?,
                    _ => bail!("the server answered with a kind of result this command cannot print"),
                };
                println!("{shown}");
                let failed = gateway::outcome_of(&result) == Some(Outcome::ToolError);
                Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
            })
            .await
        }
        Command::Project(c) => admin::project(&config, c),
        Command::Token(c) => admin::token(&config, c),
        Command::Grant(a) => admin::grant(&config, a, true),
        Command::Revoke(a) => admin::grant(&config, a, false),
        Command::Audit(c) => admin::audit(&config, c),
        Command::Usage(a) => usage::run(&config, a),
        Command::Secret(c) => credentials::secret(&config, c),
        Command::Login(a) => credentials::login(&config, a).await,
        Command::Logout(a) => credentials::logout(&config, a),
        Command::Tools(c) => tools::run(&config, c),
        Command::Archive(c) => archive::run(&config, c),
        Command::Model(c) => model::run(&config, c).await,
        Command::Import { .. } | Command::DemoServer { .. } | Command::Eval { .. } | Command::Add(_) => {
            unreachable!("handled above")
        }
    }
}

/// `check --json`: the config's summary, or why it is not valid; exits 1 then.
fn check_json(loaded: Result<Config, config::Error>) -> anyhow::Result<ExitCode> {
    let (out, code) = match loaded {
        Ok(config) if config.missing.is_empty() => {
            let configured: Vec<_> = config.servers.iter().filter(|s| !s.is_builtin()).collect();
            let built_ins: Vec<Value> = (config.servers.iter().filter(|s| s.is_builtin()))
                .map(|b| serde_json::json!({ "name": b.name, "state": b.unconfigured().unwrap_or_else(|| "configured".into()) }))
                .collect();
            let out = serde_json::json!({
                "valid": true,
                "source": config.source,
                "servers": configured.len(),
                "enabled": configured.iter().filter(|s| s.enabled).count(),
                "builtIns": built_ins,
            });
            (out, ExitCode::SUCCESS)
        }
        Ok(config) => {
            let out = serde_json::json!({ "valid": false, "error": config.missing.join("\n"), "path": config.source });
            (out, ExitCode::FAILURE)
        }
        Err(e) => {
            let mut out = serde_json::json!({ "valid": false, "error": e.to_string() });
            match &e {
                config::Error::Invalid { path, line, key, .. } => {
                    (out["path"], out["line"], out["key"]) =
                        (path.as_str().into(), (*line).into(), key.as_str().into());
                }
                config::Error::Parse { path, .. } => out["path"] = path.as_str().into(),
                _ => {}
            }
            (out, ExitCode::FAILURE)
        }
    };
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(code)
}

/// A complete answer as a person reads it: each text block on its own
/// line, another kind of block named, the structured content when there is
/// no text; a tool error led by its code.
fn answer_text(result: &rmcp::model::CallToolResult) -> String {
    use rmcp::model::ContentBlock;
    let mut lines: Vec<String> = result
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::Image(i) => format!("[image, {}]", i.mime_type),
            ContentBlock::Audio(a) => format!("[audio, {}]", a.mime_type),
            ContentBlock::ResourceLink(l) => format!("[a link to {}]", l.uri),
            _ => "[an embedded resource]".to_string(),
        })
        .collect();
    if lines.is_empty()
        && let Some(structured) = &result.structured_content
    {
        lines.push(serde_json::to_string_pretty(structured).unwrap_or_default());
    }
    let code = (result.structured_content.as_ref())
        .filter(|_| result.is_error == Some(true))
        .and_then(|s| s["error"]["code"].as_str());
    match code {
        Some(code) => format!("{code}: {}", lines.join("\n")),
        None => lines.join("\n"),
    }
}

/// What `check` prints of a valid config (and `add` after writing one).
fn print_check(config: &Config) {
    let configured: Vec<_> = config.servers.iter().filter(|s| !s.is_builtin()).collect();
    let enabled = configured.iter().filter(|s| s.enabled).count();
    println!(
        "{}: ok ({} servers, {enabled} enabled)",
        config.source,
        configured.len()
    );
    for builtin in config.servers.iter().filter(|s| s.is_builtin()) {
        let state = builtin.unconfigured().unwrap_or_else(|| "configured".into());
        println!("built-in '{}': {state}", builtin.name);
    }
}

/// Starts the downstreams, waits until each has connected or failed, runs `f`, stops them.
async fn one_shot<F, Fut>(config: &Config, f: F) -> anyhow::Result<ExitCode>
where
    F: FnOnce(Gateway) -> Fut,
    Fut: Future<Output = anyhow::Result<ExitCode>>,
{
    let running = Gateway::start(
        config,
        std::sync::Arc::new(crate::launch::BuiltinServers),
        CancellationToken::new(),
    )?;
    running.gateway.ready().await;
    let outcome = f(running.gateway.clone()).await;
    running.shutdown().await;
    outcome
}

/// What the audit mode means, for `servers` and the start line.
fn audit_words(mode: config::AuditMode) -> &'static str {
    match mode {
        config::AuditMode::Strict => {
            "strict (an answer leaves once its audit row is written; calls are refused when the log cannot take rows)"
        }
        config::AuditMode::BestEffort => "best_effort (audit rows are written behind the answers; [store] audit)",
    }
}

/// Runs until SIGINT/SIGTERM (or stdin closes, when serving stdio).
async fn serve(
    config: Config,
    path: Option<PathBuf>,
    http: Option<SocketAddr>,
    stdio: bool,
) -> anyhow::Result<ExitCode> {
    let http = match http {
        Some(addr) => Some(
            tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("cannot listen on {addr}"))?,
        ),
        None => None,
    };
    let launch = Launch {
        config,
        watch: path,
        http,
        stdio: stdio.then(|| Stdio {
            token: std::env::var(auth::TOKEN_ENV).ok().filter(|t| !t.is_empty()),
        }),
        fetch_model: true,
    };
    let shutdown = CancellationToken::new();
    let launched = launch.start(shutdown.clone())?;
    tokio::spawn(async move {
        tokio::select! {
            _ = shutdown_signal() => info!("signal received; shutting down"),
            _ = shutdown.cancelled() => return,
        }
        shutdown.cancel();
    });
    launched.wait().await;
    // The exporter's blocking client must not be dropped on an async thread.
    let _ = tokio::task::spawn_blocking(telemetry::traces::flush).await;
    info!("stopped");
    Ok(ExitCode::SUCCESS)
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => return ctrl_c.await.unwrap_or(()),
    };
    tokio::select! {
        _ = ctrl_c => {}
        _ = term.recv() => {}
    }
}

impl Cli {
    /// How many threads the async runtime gets: `serve --threads`, else
    /// half the cores (one-shot commands too).
    pub fn worker_threads(&self) -> usize {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        match &self.command {
            Command::Serve { threads: Some(n), .. } => n.get(),
            _ => default_threads(cores),
        }
    }
}

/// Half the cores, at least one: the gateway shares the machine with the
/// servers it runs and often with its callers.
fn default_threads(cores: usize) -> usize {
    (cores / 2).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Clap's own checks of every subcommand (a flag that clashes with the
    /// global `--version` only panics when that subcommand is parsed).
    #[test]
    fn the_command_line_is_well_formed() {
        <Cli as clap::CommandFactory>::command().debug_assert();
    }

    #[test]
    fn half_the_cores_run_calls_and_serve_threads_wins() {
        assert_eq!([1, 2, 3, 8].map(default_threads), [1, 1, 1, 4]);
        let cli = Cli::parse_from(["mcp-gateway", "serve", "--threads", "3"]);
        assert_eq!(cli.worker_threads(), 3);
        assert!(Cli::try_parse_from(["mcp-gateway", "serve", "--threads", "0"]).is_err());
    }
}
