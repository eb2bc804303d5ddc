//! `[[servers]]`: one downstream server as written, checked field by field
//! into a [`ServerConfig`] (how it is reached, its limits, lazy start, idle
//! stop, per-project instances and OAuth sign-in settings).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::interpolate::interpolate;
use super::oauth;
use super::{ArchivesConfig, IndexConfig};
use super::{
    DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, DEFAULT_LAZY_IDLE_TIMEOUT, DEFAULT_MAX_INSTANCES,
    DEFAULT_MAX_RESULT_BYTES, DEFAULT_TOOLS_TTL, MAX_STATELESS_INSTANCES,
};

/// One `[[servers]]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawServer {
    /// Unique name; the prefix of every `toolKey` of this server (`name:tool`).
    pub name: Spanned<String>,
    /// A display name (e.g. the original `mcpServers` key); shown by
    /// `servers` and searched by `tool_discovery` with the description.
    pub title: Option<String>,
    /// What the server is for; searched by `tool_discovery`.
    pub description: Option<String>,
    /// Program to run as a stdio child process.
    pub command: Option<String>,
    /// Arguments of `command`.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment of the child process.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Variables of the gateway's environment the child inherits beyond the
    /// allow-list (`PATH`, `HOME`, the locale...); never `MCP_GATEWAY_*` or `RUST_LOG`.
    #[serde(default)]
    pub env_passthrough: Vec<String>,
    /// Working directory of the child, relative to this file.
    pub cwd: Option<String>,
    /// Streamable HTTP endpoint of a remote server.
    pub url: Option<String>,
    /// Extra HTTP headers sent to `url` (e.g. `Authorization`).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Set to false to keep the entry without starting it.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Per-call timeout in milliseconds (default 60000).
    pub timeout_ms: Option<u64>,
    /// Connect-and-list timeout in milliseconds (default 30000).
    pub connect_timeout_ms: Option<u64>,
    /// Largest result passed on, in bytes of JSON (default 32 MiB); a larger one is refused.
    pub max_result_bytes: Option<u64>,
    /// `eager` (default): started with the gateway; `lazy`: on the first call that needs it.
    pub start: Option<Start>,
    /// Stop the server after this long without calls; the next call starts it
    /// again (default 300000 for lazy servers, never for eager ones).
    pub idle_timeout_ms: Option<u64>,
    /// List the server's tools again after this long even without a
    /// `list_changed` (default 300000; sooner when the server's `ttlMs` says so).
    pub tools_ttl_ms: Option<u64>,
    /// Most connections (children for `command` servers) this server runs
    /// for projects with their own credentials, beside the shared one (default 8).
    pub max_instances: Option<usize>,
    /// Copies of a `command` server that keeps no state between calls: up
    /// to this many children run, and each call goes to the least busy
    /// (default 1: one child).
    pub stateless_instances: Option<usize>,
    /// How `mcp-gateway login` signs projects in to this `url` server (OAuth).
    pub oauth: Option<oauth::RawServerOAuth>,
    /// Credentials in this server's calls: `block`, `redact` or `off` (default: `[security] secrets`).
    pub secrets: Option<super::security::Secrets>,
    /// Arguments may carry credentials to this server (they are not blocked).
    #[serde(default)]
    pub trusted_for_credentials: bool,
    /// `false`: no connection of the gateway's own, only projects' own
    /// (each with its secrets or sign-in); tools are listed through the
    /// first project that has one. For a server that will not start
    /// without a key each project holds.
    #[serde(default = "yes")]
    pub shared: bool,
}

/// When a server is started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Start {
    /// With the gateway.
    Eager,
    /// On the first call that needs it; its tools are known from its last listing.
    Lazy,
}

fn yes() -> bool {
    true
}

/// One validated downstream server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// Unique name, free of `:`.
    pub name: String,
    /// Display name.
    pub title: Option<String>,
    /// What the server is for.
    pub description: Option<String>,
    /// How to reach it.
    pub transport: Transport,
    /// Whether the gateway starts it.
    pub enabled: bool,
    /// Per-call timeout.
    pub timeout: Duration,
    /// Connect-and-list timeout.
    pub connect_timeout: Duration,
    /// Largest result passed on, in bytes of JSON.
    pub max_result_bytes: u64,
    /// Started on the first call that needs it, not with the gateway.
    pub lazy: bool,
    /// Stopped after this long without calls, started again on the next.
    pub idle_timeout: Option<Duration>,
    /// Tools listed again after this long at the latest, changed or not.
    pub tools_ttl: Duration,
    /// Most per-project connections (children) beside the shared one.
    pub max_instances: usize,
    /// Children of a stateless `command` server that calls spread over.
    pub stateless_instances: usize,
    /// How projects sign in to it with OAuth (`mcp-gateway login`).
    pub oauth: Option<oauth::ServerOAuth>,
    /// Credentials in its calls, over `[security] secrets`.
    pub secrets: Option<super::security::Secrets>,
    /// Arguments may carry credentials to it.
    pub trusted_for_credentials: bool,
    /// Whether the gateway connects without a project's credential.
    pub shared: bool,
}

/// How a downstream server is reached.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// A child process speaking MCP on stdin/stdout.
    Stdio {
        /// Program (resolved against the config's folder when it contains a `/`).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment.
        env: BTreeMap<String, String>,
        /// Variables inherited from the gateway beyond the allow-list.
        env_passthrough: Vec<String>,
        /// Working directory.
        cwd: Option<PathBuf>,
    },
    /// A remote streamable HTTP endpoint.
    Http {
        /// The endpoint.
        url: String,
        /// Extra headers.
        headers: BTreeMap<String, String>,
    },
    /// A server implemented inside the gateway, reached over an in-memory pipe.
    Builtin(Builtin),
}

/// The servers the gateway implements itself.
#[derive(Debug, Clone, PartialEq)]
pub enum Builtin {
    /// Index Network discovery (`[index]`).
    Index(std::sync::Arc<IndexConfig>),
    /// Local archives search (`[archives]`).
    Archives(std::sync::Arc<ArchivesConfig>),
    /// The demo server (`mcp-gateway demo-server`) in process. No config
    /// names it: the instruction-count benchmark (`benches/instructions.rs`)
    /// sets it in place of a child, so a call's count has no pipe or second
    /// process in it.
    Demo,
}

impl ServerConfig {
    /// A server the gateway implements itself, with the usual limits.
    pub(super) fn builtin(name: &str, description: &str, timeout: Duration, builtin: Builtin) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            transport: Transport::Builtin(builtin),
            enabled: true,
            timeout,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
            lazy: false,
            idle_timeout: None,
            tools_ttl: DEFAULT_TOOLS_TTL,
            max_instances: DEFAULT_MAX_INSTANCES,
            stateless_instances: 1,
            oauth: None,
            secrets: None,
            trusted_for_credentials: false,
            shared: true,
        }
    }

    /// How `mcp-gateway secret set` gives it a project's credential:
    /// `--header` for a `url` server, `--env` for a `command` server.
    pub fn secret_flag(&self) -> &'static str {
        match self.transport {
            Transport::Http { .. } => "--header",
            _ => "--env",
        }
    }

    /// Why this server cannot start, for built-ins that lack their settings.
    pub fn unconfigured(&self) -> Option<String> {
        match &self.transport {
            Transport::Builtin(Builtin::Index(c)) => c.unconfigured(),
            Transport::Builtin(Builtin::Archives(c)) => c.unconfigured(),
            _ => None,
        }
    }

    /// What search reads about the server: its title and description.
    pub fn about(&self) -> Option<String> {
        match (&self.title, &self.description) {
            (Some(t), Some(d)) => Some(format!("{t}. {d}")),
            (t, d) => t.clone().or_else(|| d.clone()),
        }
    }

    /// Whether the server runs inside the gateway.
    pub fn is_builtin(&self) -> bool {
        matches!(self.transport, Transport::Builtin(_))
    }

    /// The issuer whose OAuth access tokens this server may receive from the
    /// caller: only a built-in that declares one (Index exchanges its own
    /// authorization server's tokens). Every other server gets none.
    pub fn caller_token_issuer(&self) -> Option<&str> {
        match &self.transport {
            Transport::Builtin(Builtin::Index(c)) => c.oauth_issuer.as_deref(),
            _ => None,
        }
    }
}

/// Server names become `toolKey` prefixes and prompt namespaces.
pub fn check_server_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("server name is empty".into());
    }
    if name.contains(':') {
        return Err(format!(
            "server name '{name}' may not contain ':' (it separates server and tool in a toolKey)"
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "-_.".contains(*c)))
    {
        return Err(format!(
            "server name '{name}' has '{c}'; use letters, digits, '-', '_' and '.'"
        ));
    }
    Ok(())
}

/// Whether `name` is one of the gateway's own variables, which no child
/// inherits: `MCP_GATEWAY_*` (its token, secret key, database) and
/// `RUST_LOG` (a child logging at debug writes its results to stderr).
pub fn is_gateway_variable(name: &str) -> bool {
    name.starts_with("MCP_GATEWAY_") || name == "RUST_LOG"
}

/// Checks `env_passthrough`: variable names (a letter or `_`, then letters,
/// digits and `_`), none of them the gateway's own.
fn check_passthrough(names: Vec<String>) -> Result<Vec<String>, (String, String)> {
    for (i, name) in names.iter().enumerate() {
        let field = format!("env_passthrough[{i}]");
        let mut chars = name.chars();
        let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err((
                field,
                format!("'{name}' is not an environment variable name; use letters, digits and '_'"),
            ));
        }
        if is_gateway_variable(name) {
            return Err((
                field,
                format!(
                    "'{name}' is the gateway's own variable and never passes to a server; \
                     set what the server needs in its `env` instead"
                ),
            ));
        }
    }
    Ok(names)
}

/// Checks one server; an error names the field and says what was expected.
pub(super) fn validate_server(s: RawServer, base: &Path) -> Result<ServerConfig, (String, String)> {
    let field_err = |f: &str, m: String| (f.to_string(), m);
    let interp = |f: &str, v: &str| interpolate(v).map_err(|m| field_err(f, m));
    let transport = match (s.command, s.url) {
        (Some(_), Some(_)) => {
            return Err(field_err(
                "url",
                "both `command` and `url` are set; a server is either a stdio child (`command`) \
                 or a streamable HTTP endpoint (`url`)"
                    .into(),
            ));
        }
        (None, None) => {
            return Err(field_err(
                "command",
                "missing `command` (stdio child process) or `url` (streamable HTTP endpoint)".into(),
            ));
        }
        (Some(command), None) => {
            if !s.headers.is_empty() {
                return Err(field_err("headers", "`headers` only apply to `url` servers".into()));
            }
            let command = interp("command", &command)?;
            if command.trim().is_empty() {
                return Err(field_err("command", "`command` is empty".into()));
            }
            let command = if command.contains('/') && Path::new(&command).is_relative() {
                base.join(&command).display().to_string()
            } else {
                command
            };
            let args = s
                .args
                .iter()
                .enumerate()
                .map(|(i, a)| interp(&format!("args[{i}]"), a))
                .collect::<Result<_, _>>()?;
            let env = s
                .env
                .iter()
                .map(|(k, v)| Ok::<_, (String, String)>((k.clone(), interp(&format!("env.{k}"), v)?)))
                .collect::<Result<_, _>>()?;
            let cwd = s.cwd.map(|c| interp("cwd", &c).map(|c| base.join(c))).transpose()?;
            Transport::Stdio {
                command,
                args,
                env,
                env_passthrough: check_passthrough(s.env_passthrough)?,
                cwd,
            }
        }
        (None, Some(url)) => {
            if !s.args.is_empty() || !s.env.is_empty() || !s.env_passthrough.is_empty() || s.cwd.is_some() {
                return Err(field_err(
                    "url",
                    "`args`, `env`, `env_passthrough` and `cwd` only apply to `command` servers".into(),
                ));
            }
            let url = interp("url", &url)?;
            match url.parse::<http::Uri>() {
                Ok(u) if matches!(u.scheme_str(), Some("http" | "https")) && u.host().is_some() => {}
                _ => {
                    return Err(field_err(
                        "url",
                        format!("'{}' is not an http:// or https:// URL", vocab::mask::url(&url)),
                    ));
                }
            }
            let headers = s
                .headers
                .iter()
                .map(|(k, v)| Ok::<_, (String, String)>((k.clone(), interp(&format!("headers.{k}"), v)?)))
                .collect::<Result<_, _>>()?;
            Transport::Http { url, headers }
        }
    };
    let millis = |f: &str, v: Option<u64>, default: Duration| match v {
        Some(0) => Err(field_err(f, "must be at least 1 millisecond".into())),
        Some(ms) => Ok(Duration::from_millis(ms)),
        None => Ok(default),
    };
    let lazy = s.start == Some(Start::Lazy);
    let idle_timeout = match s.idle_timeout_ms {
        Some(ms) => Some(millis("idle_timeout_ms", Some(ms), Duration::ZERO)?),
        None => lazy.then_some(DEFAULT_LAZY_IDLE_TIMEOUT),
    };
    let tools_ttl = millis("tools_ttl_ms", s.tools_ttl_ms, DEFAULT_TOOLS_TTL)?;
    let oauth = match s.oauth {
        Some(_) if !matches!(transport, Transport::Http { .. }) => {
            return Err(field_err("oauth", "`oauth` only applies to `url` servers".into()));
        }
        Some(raw) => Some(oauth::ServerOAuth::from_raw(raw).map_err(|(f, m)| field_err(&format!("oauth.{f}"), m))?),
        None => None,
    };
    Ok(ServerConfig {
        secrets: s.secrets,
        trusted_for_credentials: s.trusted_for_credentials,
        shared: s.shared,
        lazy,
        idle_timeout,
        tools_ttl,
        oauth,
        stateless_instances: match s.stateless_instances {
            Some(0) => return Err(field_err("stateless_instances", "must be at least 1".into())),
            Some(n) if n > MAX_STATELESS_INSTANCES => {
                return Err(field_err(
                    "stateless_instances",
                    format!("must be at most {MAX_STATELESS_INSTANCES}"),
                ));
            }
            Some(n) if n > 1 && !matches!(transport, Transport::Stdio { .. }) => {
                return Err(field_err(
                    "stateless_instances",
                    "only applies to `command` servers (a `url` server scales behind its own address)".into(),
                ));
            }
            Some(n) => n,
            None => 1,
        },
        max_instances: match s.max_instances {
            Some(0) => return Err(field_err("max_instances", "must be at least 1".into())),
            Some(n) => n,
            None => DEFAULT_MAX_INSTANCES,
        },
        name: s.name.into_inner(),
        title: s.title,
        description: s.description.map(|d| interp("description", &d)).transpose()?,
        transport,
        enabled: s.enabled,
        timeout: millis("timeout_ms", s.timeout_ms, DEFAULT_CALL_TIMEOUT)?,
        connect_timeout: millis("connect_timeout_ms", s.connect_timeout_ms, DEFAULT_CONNECT_TIMEOUT)?,
        max_result_bytes: match s.max_result_bytes {
            Some(0) => return Err(field_err("max_result_bytes", "must be at least 1 byte".into())),
            Some(n) => n,
            None => DEFAULT_MAX_RESULT_BYTES,
        },
    })
}
