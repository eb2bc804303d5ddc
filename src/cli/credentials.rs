//! `secret`, `login` and `logout`: a project's own credentials for
//! downstream servers. Values are sealed before they reach the store and
//! are never printed.

use std::io::Read;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};

use config::{Builtin, Config, ServerConfig, Transport};
use credentials::{CredentialKind, CredentialRows};
use gateway::operator::{Actor, Operator};
use gateway::vault::{Vault, sign_in};
use store::Store;
use store::access::Project;
use store::secrets::Key;

/// `secret …`.
#[derive(Debug, Subcommand)]
pub enum SecretCommand {
    /// Store a header (url servers) or environment variable (command
    /// servers) that only this project's calls to the server carry. A
    /// VALUE of `-` is read from stdin, which keeps it out of shell history.
    #[command(after_help = "Examples:
  mcp-gateway secret set --project alice --server github --header 'Authorization=Bearer ghp_…'
  echo \"$LINEAR_KEY\" | mcp-gateway secret set --project bob --server linear --env LINEAR_API_KEY=-")]
    Set {
        #[command(flatten)]
        target: Target,
        /// NAME=VALUE of an HTTP header, e.g. `Authorization=Bearer ghp_…`.
        #[arg(
            long,
            value_name = "NAME=VALUE",
            conflicts_with = "env",
            required_unless_present = "env"
        )]
        header: Option<String>,
        /// NAME=VALUE of an environment variable of the server's child process.
        #[arg(long, value_name = "NAME=VALUE")]
        env: Option<String>,
    },
    /// List stored credentials: names, never values.
    List {
        /// Only this project's.
        #[arg(long)]
        project: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove a header or variable; the project's connection that used it is closed on its next call.
    Remove {
        #[command(flatten)]
        target: Target,
        /// The header's name.
        #[arg(long, value_name = "NAME", conflicts_with = "env", required_unless_present = "env")]
        header: Option<String>,
        /// The variable's name.
        #[arg(long, value_name = "NAME")]
        env: Option<String>,
    },
}

/// Whose credential, for which server.
#[derive(Debug, Args)]
pub struct Target {
    /// The project (name or id).
    #[arg(long)]
    project: String,
    /// The server, as named in the config.
    #[arg(long)]
    server: String,
}

/// `login`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  mcp-gateway login linear --project alice   prints the URL; opens a browser if any
  mcp-gateway login index --project alice    Index's authorization server
  mcp-gateway login --status --json          signedIn, expired or signInRequired

The browser must reach this machine's loopback port; on a remote host, forward it (ssh -L).")]
pub struct LoginArgs {
    /// The server to sign in to (a `url` server, or `index`).
    #[arg(required_unless_present = "status")]
    server: Option<String>,
    /// The project whose account this is (name or id).
    #[arg(long, required_unless_present = "status")]
    project: Option<String>,
    /// Show each project's sign-ins instead (with --project: that project's).
    #[arg(long)]
    status: bool,
    /// Print the sign-in URL only; do not try to open a browser.
    #[arg(long)]
    no_browser: bool,
    /// How long to wait for the browser to come back, in seconds.
    #[arg(long, default_value_t = 300)]
    wait_secs: u64,
    /// Print JSON (with --status).
    #[arg(long)]
    json: bool,
}

/// `logout`.
#[derive(Debug, Args)]
pub struct LogoutArgs {
    /// The server.
    server: String,
    /// The project (name or id).
    #[arg(long)]
    project: String,
}

pub(super) fn open_store(config: &Config) -> anyhow::Result<Arc<Store>> {
    Ok(Arc::new(Store::open_at(&config.store)?))
}

pub(super) fn project(store: &Store, name: &str) -> anyhow::Result<Project> {
    Ok(store
        .project(name)?
        .ok_or_else(|| store::Error::NoProject(name.to_string()))?)
}

fn server<'c>(config: &'c Config, name: &str) -> anyhow::Result<&'c ServerConfig> {
    config.servers.iter().find(|s| s.name == name).with_context(|| {
        let names: Vec<_> = config.servers.iter().map(|s| s.name.as_str()).collect();
        format!(
            "no server '{name}' in {} (servers: {})",
            config.source,
            names.join(", ")
        )
    })
}

/// Splits `NAME=VALUE`, reading VALUE from stdin when it is `-`.
pub(super) fn name_value(arg: &str) -> anyhow::Result<(String, String)> {
    let Some((name, value)) = arg.split_once('=') else {
        bail!("expected NAME=VALUE (a VALUE of - reads it from stdin)");
    };
    let value = if value == "-" {
        let mut read = String::new();
        std::io::stdin()
            .read_to_string(&mut read)
            .context("reading the value from stdin")?;
        read.trim_end_matches(['\r', '\n']).to_string()
    } else {
        value.to_string()
    };
    if name.is_empty() || value.is_empty() {
        bail!("both NAME and VALUE must be non-empty");
    }
    Ok((name.to_string(), value))
}

/// Checks that `server` takes a credential of `kind` named `name` (and that
/// a header's value is one), without ever echoing the value.
pub(super) fn check_kind(server: &ServerConfig, kind: CredentialKind, name: &str, value: &str) -> anyhow::Result<()> {
    match (&server.transport, kind) {
        (Transport::Http { .. }, CredentialKind::Header) => {
            name.parse::<http::HeaderName>()
                .map_err(|_| anyhow::anyhow!("'{name}' is not a valid HTTP header name"))?;
            value.parse::<http::HeaderValue>().map_err(|_| {
                anyhow::anyhow!("the value of header '{name}' has characters HTTP headers cannot carry")
            })?;
            Ok(())
        }
        (Transport::Stdio { .. }, CredentialKind::Env) => {
            if name.contains(['=', '\0']) || value.contains('\0') {
                bail!("'{name}' is not a valid environment variable");
            }
            Ok(())
        }
        (Transport::Builtin(Builtin::Index(_)), CredentialKind::Header)
            if name.eq_ignore_ascii_case("authorization") =>
        {
            if !value.starts_with("Bearer ") {
                bail!("Index takes `--header Authorization=\"Bearer <Index access token>\"`");
            }
            Ok(())
        }
        (Transport::Http { .. }, _) => bail!("'{}' is a url server: it takes --header", server.name),
        (Transport::Stdio { .. }, _) => bail!("'{}' is a command server: it takes --env", server.name),
        (Transport::Builtin(Builtin::Index(_)), _) => {
            bail!("the Index built-in takes `--header Authorization=\"Bearer <token>\"` or `mcp-gateway login index`")
        }
        (Transport::Builtin(_), _) => bail!("the built-in '{}' takes no credentials", server.name),
    }
}

/// Runs a `secret` command.
pub(super) fn secret(config: &Config, cmd: SecretCommand) -> anyhow::Result<ExitCode> {
    let store = open_store(config)?;
    match cmd {
        SecretCommand::Set { target, header, env } => {
            let (kind, arg) = match (header, env) {
                (Some(h), _) => (CredentialKind::Header, h),
                (None, Some(e)) => (CredentialKind::Env, e),
                (None, None) => unreachable!("clap requires one"),
            };
            let (name, value) = name_value(&arg)?;
            let server = server(config, &target.server)?;
            check_kind(server, kind, &name, &value)?;
            let p = project(&store, &target.project)?;
            let key_id = Vault::new(store.clone()).set(&p, &server.name, kind, &name, &value)?;
            let named = format!("{} {name}", kind.as_str());
            Operator::new(&store).record_credential(&Actor::Cli, "secret.set", &p.name, &server.name, Some(&named))?;
            println!(
                "project '{}': {} {name} set for '{}' (encrypted with key {key_id}); it applies from the next call",
                p.name,
                kind.as_str(),
                server.name,
            );
        }
        SecretCommand::List { project, json } => {
            let rows = store.credential_list(project.as_deref())?;
            if json {
                println!("{}", serde_json::to_string_pretty(&rows)?);
                return Ok(ExitCode::SUCCESS);
            }
            if rows.is_empty() {
                println!("no credentials stored");
            } else {
                println!("{:<16} {:<16} {:<7} {:<24} SET", "PROJECT", "SERVER", "KIND", "NAME");
            }
            for r in rows {
                let name = if r.kind == CredentialKind::OAuth {
                    "(sign-in)"
                } else {
                    &r.name
                };
                println!(
                    "{:<16} {:<16} {:<7} {:<24} {}",
                    r.project,
                    r.server,
                    r.kind.as_str(),
                    name,
                    r.set_at
                );
            }
        }
        SecretCommand::Remove { target, header, env } => {
            let (kind, name) = match (header, env) {
                (Some(h), _) => (CredentialKind::Header, h),
                (None, Some(e)) => (CredentialKind::Env, e),
                (None, None) => unreachable!("clap requires one"),
            };
            let p = project(&store, &target.project)?;
            if store.remove_credential(p.id, &target.server, kind, Some(&name))? == 0 {
                bail!(
                    "project '{}' has no {} {name} for '{}' (see `mcp-gateway secret list`)",
                    p.name,
                    kind.as_str(),
                    target.server
                );
            }
            let named = format!("{} {name}", kind.as_str());
            Operator::new(&store).record_credential(
                &Actor::Cli,
                "secret.remove",
                &p.name,
                &target.server,
                Some(&named),
            )?;
            println!(
                "project '{}': {} {name} for '{}' removed; its connection closes on its next call",
                p.name,
                kind.as_str(),
                target.server
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `login`.
pub(super) async fn login(config: &Config, args: LoginArgs) -> anyhow::Result<ExitCode> {
    let store = open_store(config)?;
    if args.status {
        return status(&store, args.project.as_deref(), args.json);
    }
    let (Some(server_name), Some(project_name)) = (&args.server, &args.project) else {
        bail!("login needs SERVER and --project (or --status)");
    };
    let server = server(config, server_name)?;
    if sign_in::base_url(server).is_none() {
        bail!(
            "'{}' does not sign in with OAuth: only url servers do, and the Index built-in with [index] oauth_issuer set",
            server.name
        );
    }
    let p = project(&store, project_name)?;
    let key = Arc::new(Key::find_or_create(store.key_home())?);
    let pending = sign_in::begin(&store, key, &p, server).await?;
    eprintln!(
        "Sign project '{}' in to '{}': open this URL in a browser and sign in as that project's account:\n\n  {}\n",
        p.name,
        server.name,
        pending.url()
    );
    if !args.no_browser {
        open_browser(pending.url());
    }
    eprintln!("waiting for the browser to come back (up to {} s)…", args.wait_secs);
    pending.finish(Duration::from_secs(args.wait_secs)).await?;
    Operator::new(&store).record_credential(&Actor::Cli, "sign-in", &p.name, &server.name, None)?;
    println!(
        "project '{}' is signed in to '{}'; its tokens are stored encrypted in {} and refreshed when due",
        p.name,
        server.name,
        store.shown()
    );
    Ok(ExitCode::SUCCESS)
}

/// `login --status`: every sign-in's state.
fn status(store: &Store, project_filter: Option<&str>, json: bool) -> anyhow::Result<ExitCode> {
    let rows: Vec<_> = store
        .credential_list(project_filter)?
        .into_iter()
        .filter(|r| r.kind == CredentialKind::OAuth)
        .collect();
    let key = if rows.is_empty() {
        None
    } else {
        Some(Key::require(store.key_home())?)
    };
    let mut statuses = Vec::new();
    for info in rows {
        let p = project(store, &info.project)?;
        let Some(row) = store.credential(p.id, &info.server, CredentialKind::OAuth, "")? else {
            continue;
        };
        let key = key.as_ref().expect("a key when rows exist");
        statuses.push(sign_in::status(key, &p, &info.server, &row)?);
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&statuses)?);
        return Ok(ExitCode::SUCCESS);
    }
    if statuses.is_empty() {
        println!("no sign-ins (mcp-gateway login SERVER --project P)");
    } else {
        println!(
            "{:<16} {:<16} {:<15} {:<21} REFRESH",
            "PROJECT", "SERVER", "STATE", "EXPIRES"
        );
    }
    for s in statuses {
        println!(
            "{:<16} {:<16} {:<15} {:<21} {}",
            s.project,
            s.server,
            s.state,
            s.expires_at.as_deref().unwrap_or("-"),
            if s.refreshable { "yes" } else { "no" }
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `logout`: forgets the project's tokens for the server.
pub(super) fn logout(config: &Config, args: LogoutArgs) -> anyhow::Result<ExitCode> {
    let store = open_store(config)?;
    let p = project(&store, &args.project)?;
    if store.remove_credential(p.id, &args.server, CredentialKind::OAuth, None)? == 0 {
        bail!("project '{}' is not signed in to '{}'", p.name, args.server);
    }
    Operator::new(&store).record_credential(&Actor::Cli, "sign-out", &p.name, &args.server, None)?;
    println!(
        "project '{}' is signed out of '{}' (its tokens are deleted here; the authorization server may still list the grant)",
        p.name, args.server
    );
    Ok(ExitCode::SUCCESS)
}

/// Opens `url` in the desktop's browser when there is a desktop; the URL is printed either way.
fn open_browser(url: &str) {
    let desktop = ["DISPLAY", "WAYLAND_DISPLAY", "BROWSER"]
        .iter()
        .any(|v| std::env::var_os(v).is_some());
    if !desktop && !cfg!(target_os = "macos") {
        return;
    }
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    let _ = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values of every shape a secret may take: printable, quotes, control
    /// characters, line breaks, non-ASCII; a small xorshift keeps it repeatable.
    fn values(count: usize) -> Vec<String> {
        const ALPHABET: &[char] = &[
            'a', 'Z', '0', '9', ' ', '"', '\'', '\\', '\n', '\r', '\t', '\0', '=', ':', 'é', '鍵', '🔑', '\u{7f}', '-',
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        (0..count)
            .map(|_| {
                let len = 6 + (next() % 40) as usize;
                let body: String = (0..len)
                    .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize])
                    .collect();
                format!("sv{body}")
            })
            .collect()
    }

    fn servers() -> Vec<ServerConfig> {
        let config = Config::parse(
            "[[servers]]\nname = \"remote\"\nurl = \"http://127.0.0.1:9/mcp\"\n\n[[servers]]\nname = \"local\"\ncommand = \"true\"\n\n[index]\nprotocol_api_url = \"http://127.0.0.1:9/api\"\n",
            "test.toml",
            std::path::Path::new("."),
        )
        .unwrap();
        config.servers
    }

    #[test]
    fn no_refusal_ever_carries_the_value() {
        let servers = servers();
        for value in values(500) {
            for server in &servers {
                for kind in [CredentialKind::Header, CredentialKind::Env] {
                    for name in ["X-Account", "Authorization", "API_KEY"] {
                        if let Err(e) = check_kind(server, kind, name, &value) {
                            let said = format!("{e:#}");
                            assert!(!said.contains(&value), "{said}");
                        }
                    }
                }
            }
        }
    }
}
