//! `gateway.toml`: raw serde structs, then a validated [`Config`].
//!
//! Parsing happens in two steps, as ripgrep splits low-level and high-level
//! arguments: [`RawConfig`] mirrors the file (unknown keys are refused), and
//! [`Config::from_raw`] interpolates `${ENV}`, checks every rule that serde
//! cannot, resolves paths and turns milliseconds into durations. Nothing
//! after this module re-parses configuration.

pub mod archives;
pub mod code_mode;
mod http;
pub mod index_network;
mod interpolate;
mod limits;
mod mcp_servers;
pub mod oauth;
mod overrides;
mod search;
pub mod security;
mod server;
pub mod server_json;
mod store;
pub mod telemetry;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

pub use limits::{Limits, ToolLimit};
pub use oauth::OAuthConfig;
pub use overrides::{Overrides, ToolOverride};
use rules::{RuleSpec, Rules};
pub use security::SecurityConfig;
pub use telemetry::TelemetryConfig;

/// Cloud search timeout when `[search.cloud]` sets none.
pub(crate) const DEFAULT_CLOUD_TIMEOUT: Duration = Duration::from_secs(5);

pub use archives::{ArchivesConfig, RawArchives};
use http::RawHttp;
pub use http::{HttpConfig, Rate};
pub use index_network::IndexConfig;
use index_network::RawIndex;
use interpolate::interpolate;
pub use mcp_servers::{McpServerEntry, McpServersFile, check_appended, entry_toml, server_name, to_toml};
use search::RawSearch;
pub use search::{CloudConfig, DEFAULT_CACHE_PATH, DEFAULT_MODEL_DIR, LearningConfig, SemanticConfig};
pub use server::{Builtin, ServerConfig, Start, Transport, check_server_name, is_gateway_variable};
use server::{RawServer, validate_server};
use store::RawStore;
pub use store::{AuditMode, DB_ENV, StoreLocation};

/// The default shipped with the binary, so `mcp-gateway serve` works anywhere
/// (and `add` starts a new file from it).
pub const EMBEDDED_DEFAULT: &str = include_str!("../../../gateway.toml");

/// The environment variable that overrides `--config`.
pub const CONFIG_ENV: &str = "MCP_GATEWAY_CONFIG";

/// Per-call timeout when a server sets none.
pub(crate) const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// Largest tool result passed on when a server sets no `max_result_bytes`.
pub(crate) const DEFAULT_MAX_RESULT_BYTES: u64 = 32 * 1024 * 1024;

/// How long connecting and listing tools may take before a server counts as failed.
pub(crate) const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a call waits at most for servers still in their first
/// connection when `[startup]` sets no `wait_ms`.
pub(crate) const DEFAULT_STARTUP_WAIT: Duration = Duration::from_secs(10);

/// How long a lazy server may sit without calls before it is stopped.
pub const DEFAULT_LAZY_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// Per-project connections a server runs at most, beside the shared one.
pub(crate) const DEFAULT_MAX_INSTANCES: usize = 8;
/// Most children of one stateless server: past a core or two each, more only queue.
pub(crate) const MAX_STATELESS_INSTANCES: usize = 64;

/// How long any server's tool list is trusted before it is listed again,
/// `list_changed` or not: a server may change its tools without telling
/// (a 2026-07-28 server announces changes only on a subscription, and the
/// SDKs drop the older way of announcing them), and a definition the model
/// reads or runs must be at most this old.
pub(crate) const DEFAULT_TOOLS_TTL: Duration = Duration::from_secs(300);

/// Why a configuration was refused. Every message names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not valid TOML or JSON, or has unknown or mistyped keys.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: String,
        /// The parser's message, with line and column.
        message: String,
    },
    /// An environment variable the configuration reads has an unusable value.
    #[error("{var}: {message}")]
    Env {
        /// The variable.
        var: &'static str,
        /// What is wrong and what was expected.
        message: String,
    },
    /// The file parses but breaks a rule (duplicate names, missing command...).
    #[error("{path}:{line}: {key}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// 1-based line of the offending entry.
        line: usize,
        /// The offending key, e.g. `servers[2].url`.
        key: String,
        /// What is wrong and what was expected.
        message: String,
    },
}

/// The file as written. Doc comments double as the configuration reference.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawConfig {
    /// Settings of the upstream HTTP listener.
    #[serde(default)]
    pub http: RawHttp,
    /// Downstream MCP servers.
    #[serde(default)]
    pub servers: Vec<RawServer>,
    /// Downstream servers in the Claude Desktop / `.mcp.json` shape.
    #[serde(default, rename = "mcpServers")]
    pub mcp_servers: BTreeMap<String, Spanned<McpServerEntry>>,
    /// Who may call without a token.
    #[serde(default)]
    pub auth: RawAuth,
    /// Where projects, tokens, grants and the audit log live.
    #[serde(default)]
    pub store: RawStore,
    /// Which tools exist for callers, and their tags.
    #[serde(default)]
    pub rules: Vec<RawRule>,
    /// Tools renamed, described, tagged or hidden, for all or one project.
    #[serde(default)]
    pub overrides: Vec<overrides::RawOverride>,
    /// Calls per minute and per day, per project, of a server or a tool.
    #[serde(default)]
    pub limits: Vec<limits::RawLimit>,
    /// Search providers.
    #[serde(default)]
    pub search: RawSearch,
    /// The built-in Index Network server.
    pub index: Option<Spanned<RawIndex>>,
    /// The built-in local archives server.
    pub archives: Option<Spanned<RawArchives>>,
    /// Defences against hostile servers: pinning, description scanning, credentials.
    #[serde(default)]
    pub security: security::RawSecurity,
    /// OpenTelemetry export.
    pub telemetry: Option<Spanned<telemetry::RawTelemetry>>,
    /// Calls that arrive while servers start.
    #[serde(default)]
    pub startup: RawStartup,
}

/// `[startup]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawStartup {
    /// The longest a call waits for the servers its caller may see that are
    /// still in their first connection (default 10000; 0 answers at once).
    pub wait_ms: Option<u64>,
}

/// `[auth]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAuth {
    /// Let callers without a token in, as `anonymous_project`.
    #[serde(default)]
    pub allow_anonymous: bool,
    /// The project anonymous callers act as; created (with every server granted) if missing.
    pub anonymous_project: Option<String>,
    /// OAuth 2.1 access tokens from trusted authorization servers (MCP authorization).
    pub oauth: Option<Spanned<oauth::RawOAuth>>,
}

/// One `[[rules]]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRule {
    /// Globs, `/regex/flags`, `!negations`, matched against tool names in order.
    pub pattern: Spanned<Vec<String>>,
    /// Only tools of this server.
    pub server: Option<String>,
    /// Enable or disable matching tools (any `enabled = true` makes the catalog an allow-list).
    pub enabled: Option<bool>,
    /// Tags for matching tools.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Only tools carrying a tag that matches this glob (e.g. `suspicious:*`).
    pub tagged: Option<String>,
}

/// A validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where it came from (`<embedded default>` when no file was found).
    pub source: String,
    /// The upstream HTTP listener's checks.
    pub http: HttpConfig,
    /// Every configured server, enabled or not, in file order.
    pub servers: Vec<ServerConfig>,
    /// The project callers without a token act as, if anonymous access is on.
    pub anonymous_project: Option<String>,
    /// OAuth access tokens accepted besides gateway tokens.
    pub oauth: Option<OAuthConfig>,
    /// Where the store is: a SQLite file or a PostgreSQL database.
    pub store: StoreLocation,
    /// Whether an answer waits for its audit row.
    pub audit: AuditMode,
    /// Compiled tool rules.
    pub rules: Rules,
    /// Tools renamed, described, tagged or hidden.
    pub overrides: Overrides,
    /// Calls per minute and per day, per project, of a server or a tool.
    pub limits: Limits,
    /// The cloud search provider, if configured.
    pub cloud: Option<CloudConfig>,
    /// The local embedding model, unless turned off.
    pub semantic: Option<SemanticConfig>,
    /// Learning from use.
    pub learning: LearningConfig,
    /// Defences against hostile servers.
    pub security: SecurityConfig,
    /// Where spans are exported, when they are.
    pub telemetry: Option<TelemetryConfig>,
    /// Paths the file names that are not there (an `[archives]` folder), as
    /// `file:line: key: message`. `check` refuses the file; `serve` runs, and
    /// the server concerned reports the path as its error until it appears.
    pub missing: Vec<String>,
    /// The longest a call waits for servers still in their first connection.
    pub startup_wait: Duration,
}

impl Config {
    /// Loads `path`, or the embedded default when `path` is `None`.
    ///
    /// A `.json` file is read in the `mcpServers` shape of Claude Desktop.
    pub fn load(path: Option<&Path>) -> Result<Self, Error> {
        let Some(path) = path else {
            return Self::parse(EMBEDDED_DEFAULT, "<embedded gateway.toml>", Path::new("."));
        };
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
            path: shown.clone(),
            source,
        })?;
        let base = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if path.extension().is_some_and(|e| e == "json") {
            let file: McpServersFile = serde_json::from_str(&text).map_err(|e| Error::Parse {
                path: shown.clone(),
                message: format!("line {}, column {}: {e}", e.line(), e.column()),
            })?;
            let raw = RawConfig {
                mcp_servers: file
                    .mcp_servers
                    .into_iter()
                    .map(|(k, v)| (k, Spanned::new(0..0, v)))
                    .collect(),
                ..RawConfig::default()
            };
            return Self::from_raw(raw, &shown, &text, base);
        }
        Self::parse(&text, &shown, base)
    }

    /// The sections that differ from `new` and are read only at start
    /// (servers and rules apply on reload).
    pub fn needs_restart(&self, new: &Config) -> Vec<&'static str> {
        [
            ("[http]", self.http != new.http),
            ("[store]", self.store != new.store || self.audit != new.audit),
            ("[search.cloud]", self.cloud != new.cloud),
            ("[search.semantic]", self.semantic != new.semantic),
            ("[search.learning]", self.learning != new.learning),
            ("[telemetry]", self.telemetry != new.telemetry),
        ]
        .into_iter()
        .filter_map(|(section, differs)| differs.then_some(section))
        .collect()
    }

    /// Parses TOML text; `source` names it in errors, `base` resolves relative paths.
    pub fn parse(text: &str, source: &str, base: &Path) -> Result<Self, Error> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| Error::Parse {
            path: source.to_string(),
            message: e.to_string().trim_end().to_string(),
        })?;
        Self::from_raw(raw, source, text, base)
    }

    /// Validates a parsed file. `text` is only used to turn spans into line numbers.
    pub(crate) fn from_raw(raw: RawConfig, source: &str, text: &str, base: &Path) -> Result<Self, Error> {
        let invalid = |span: Span, key: String, message: String| Error::Invalid {
            path: source.to_string(),
            line: line_of(text, span.start),
            key,
            message,
        };
        let mut servers = configured_servers(raw.servers, raw.mcp_servers, base, &invalid)?;
        let oauth = match raw.auth.oauth {
            Some(table) => {
                let span = table.span();
                Some(
                    OAuthConfig::from_raw(table.into_inner())
                        .map_err(|(field, m)| invalid(span, format!("auth.oauth.{field}"), m))?,
                )
            }
            None => None,
        };
        let missing = builtins(raw.index, raw.archives, oauth.as_ref(), base, &mut servers, &invalid)?;
        let anonymous_project = anonymous_project(raw.auth.allow_anonymous, raw.auth.anonymous_project, &invalid)?;
        let audit = raw.store.audit;
        let store = store::resolve(raw.store, std::env::var(DB_ENV).ok(), base, |key, m| {
            invalid(0..0, key.into(), m)
        })?;
        dangling_references((&raw.rules, &raw.overrides, &raw.limits), &servers, text, &invalid)?;
        let rules = compile_rules(&raw.rules, &invalid)?;
        let overrides = overrides::validate(raw.overrides).map_err(|(span, key, m)| invalid(span, key, m))?;
        let limits = limits::validate(raw.limits).map_err(|(span, key, m)| invalid(span, key, m))?;
        let search::Sections {
            cloud,
            semantic,
            learning,
        } = search::validate(raw.search, base, &invalid)?;
        let http = http::validate(raw.http, |span, key, m| invalid(span, format!("http.{key}"), m))?;
        let (span, raw_telemetry) = section(raw.telemetry);
        let telemetry =
            telemetry::validate(raw_telemetry).map_err(|m| invalid(span, "telemetry.otlp_endpoint".into(), m))?;
        Ok(Self {
            source: source.to_string(),
            http,
            servers,
            anonymous_project,
            oauth,
            store,
            audit,
            rules,
            overrides,
            limits,
            cloud,
            semantic,
            learning,
            security: security::SecurityConfig {
                code_mode: security::code_mode(&raw.security).map_err(|(key, m)| invalid(0..0, key, m))?,
                ..raw.security.into()
            },
            telemetry,
            missing,
            startup_wait: raw.startup.wait_ms.map_or(DEFAULT_STARTUP_WAIT, Duration::from_millis),
        })
    }

    /// The servers the gateway starts (enabled, and configured if built in).
    pub fn enabled_servers(&self) -> impl Iterator<Item = &ServerConfig> {
        self.servers.iter().filter(|s| s.enabled && s.unconfigured().is_none())
    }
}

/// A table of the file, with its span (`0..0` when absent, then its defaults).
/// A section's place in the file, for errors: a byte range.
type Span = std::ops::Range<usize>;

/// An error at a span, under a key (the caller's `invalid`).
trait Invalid: Fn(Span, String, String) -> Error {}
impl<F: Fn(Span, String, String) -> Error> Invalid for F {}

/// `[[servers]]` and `mcpServers`, named, checked and validated, in file order.
fn configured_servers(
    raw: Vec<RawServer>,
    mcp_servers: BTreeMap<String, Spanned<McpServerEntry>>,
    base: &Path,
    invalid: &impl Invalid,
) -> Result<Vec<ServerConfig>, Error> {
    let mut entries: Vec<(Span, String, RawServer)> = raw
        .into_iter()
        .enumerate()
        .map(|(i, s)| (s.name.span(), format!("servers[{i}]"), s))
        .collect();
    let mut derived: BTreeMap<String, String> = BTreeMap::new();
    for (original, entry) in mcp_servers {
        let span = entry.span();
        let key = format!("mcpServers.{original}");
        let name = server_name(&original);
        if let Some(other) = derived.insert(name.clone(), original.clone()) {
            return Err(invalid(
                span,
                key,
                format!("'{other}' and '{original}' both become server name '{name}'; rename one of them"),
            ));
        }
        let server = entry
            .into_inner()
            .into_raw(Spanned::new(span.clone(), name), &original)
            .map_err(|m| invalid(span.clone(), key.clone(), m))?;
        entries.push((span, key, server));
    }

    let mut seen = HashSet::new();
    let mut servers = Vec::with_capacity(entries.len() + 1);
    for (span, key, s) in entries {
        let name = s.name.get_ref().clone();
        if let Err(m) = check_server_name(&name) {
            return Err(invalid(span, format!("{key}.name"), m));
        }
        if let Some(section) = [
            (index_network::SERVER_NAME, "[index]"),
            (archives::SERVER_NAME, "[archives]"),
        ]
        .iter()
        .find_map(|(builtin, section)| (name == *builtin).then_some(section))
        {
            return Err(invalid(
                span,
                format!("{key}.name"),
                format!("'{name}' is a built-in server; configure it under {section} or pick another name"),
            ));
        }
        if !seen.insert(name.clone()) {
            return Err(invalid(
                span,
                format!("{key}.name"),
                format!("duplicate server name '{name}'; every server needs its own name"),
            ));
        }
        let server =
            validate_server(s, base).map_err(|(field, m)| invalid(span.clone(), format!("{key}.{field}"), m))?;
        servers.push(server);
    }

    Ok(servers)
}

/// `[index]` and `[archives]`: each built-in server that is enabled joins
/// `servers`. Returns the archive folders that are not there (see [`Config::missing`]).
fn builtins(
    raw_index: Option<Spanned<RawIndex>>,
    raw_archives: Option<Spanned<RawArchives>>,
    oauth: Option<&OAuthConfig>,
    base: &Path,
    servers: &mut Vec<ServerConfig>,
    invalid: &impl Invalid,
) -> Result<Vec<String>, Error> {
    let (index_span, raw_index) = section(raw_index);
    let index = IndexConfig::from_raw(raw_index)
        .map_err(|(field, m)| invalid(index_span.clone(), format!("index.{field}"), m))?;
    if let Some(issuer) = &index.oauth_issuer
        && !oauth.is_some_and(|o| o.trusts(issuer))
    {
        return Err(invalid(
            index_span.clone(),
            "index.oauth_issuer".into(),
            format!("'{issuer}' must also be one of [[auth.oauth.issuers]], so the gateway accepts its tokens"),
        ));
    }
    if index.enabled {
        servers.push(ServerConfig::builtin(
                index_network::SERVER_NAME,
                "Index Network: find people to meet or collaborate with from what you want, offer or work on (intents, discovery, VibeCheck)",
                index.timeout,
                Builtin::Index(std::sync::Arc::new(index)),
            ));
    }
    let (archives_span, raw_archives) = section(raw_archives);
    let archives = ArchivesConfig::from_raw(raw_archives, base)
        .map_err(|(field, m)| invalid(archives_span.clone(), format!("archives.{field}"), m))?;
    let mut missing = Vec::new();
    if archives.enabled
        && let Some((i, why)) = archives.missing_folder()
    {
        missing.push(invalid(archives_span.clone(), format!("archives.folders[{i}]"), why).to_string());
    }
    if archives.enabled {
        servers.push(ServerConfig::builtin(
                archives::SERVER_NAME,
                "Local research and URL archives: search saved notes and web pages, with highlighted snippets and citations",
                DEFAULT_CALL_TIMEOUT,
                Builtin::Archives(std::sync::Arc::new(archives)),
            ));
    }

    Ok(missing)
}

/// `[auth]`'s anonymous access: both keys or neither.
fn anonymous_project(allow: bool, project: Option<String>, invalid: &impl Invalid) -> Result<Option<String>, Error> {
    Ok(match (allow, project) {
        (true, Some(p)) if !p.trim().is_empty() => Some(p),
        (true, _) => {
            return Err(invalid(
                0..0,
                "auth.anonymous_project".into(),
                "allow_anonymous = true needs anonymous_project = \"NAME\", the project anonymous callers act as"
                    .into(),
            ));
        }
        (false, Some(_)) => {
            return Err(invalid(
                0..0,
                "auth.allow_anonymous".into(),
                "anonymous_project is set but allow_anonymous is not true; set both to let callers in without a token"
                    .into(),
            ));
        }
        (false, None) => None,
    })
}

/// Every reference `[[rules]]`, `[[overrides]]` and `[[limits]]` make to a
/// server the file does not configure, named in one error: removing a
/// server would otherwise take one edit, and one refused reload, per
/// reference. The error is the first one's, its message listing them all.
fn dangling_references(
    (rules, overrides, limits): (&[RawRule], &[overrides::RawOverride], &[limits::RawLimit]),
    servers: &[ServerConfig],
    text: &str,
    invalid: &impl Invalid,
) -> Result<(), Error> {
    let rules = rules.iter().enumerate().filter_map(|(i, r)| {
        let server = r.server.as_deref()?;
        Some((r.pattern.span(), format!("rules[{i}].server"), server))
    });
    let dangling: Vec<_> = rules
        .chain(overrides::servers_named(overrides))
        .chain(limits::servers_named(limits))
        .filter(|(_, _, server)| !server.is_empty() && !servers.iter().any(|s| s.name == *server))
        .collect();
    let Some((span, key, server)) = dangling.first() else {
        return Ok(());
    };
    let mut message = format!("no server named '{server}'");
    if dangling.len() > 1 {
        let all: Vec<String> = dangling
            .iter()
            .map(|(span, key, server)| format!("line {} {key} ('{server}')", line_of(text, span.start)))
            .collect();
        message += &format!(
            "; the file names servers it does not configure {} times: {}",
            dangling.len(),
            all.join(", ")
        );
    }
    Err(invalid(span.clone(), key.clone(), message))
}

/// `[[rules]]`, checked against the servers they name and compiled.
fn compile_rules(raw: &[RawRule], invalid: &impl Invalid) -> Result<Rules, Error> {
    let mut specs = Vec::with_capacity(raw.len());
    for rule in raw {
        specs.push(RuleSpec {
            pattern: rule.pattern.get_ref().clone(),
            server: rule.server.clone(),
            enabled: rule.enabled,
            tags: rule.tags.clone(),
            tagged: rule.tagged.clone(),
        });
    }
    Rules::compile(&specs).map_err(|(i, e)| {
        invalid(
            raw[i].pattern.span(),
            format!("rules[{i}].pattern[{}]", e.index),
            format!("'{}': {}", e.pattern, e.reason),
        )
    })
}

fn section<T: Default>(table: Option<Spanned<T>>) -> (std::ops::Range<usize>, T) {
    match table {
        Some(t) => (t.span(), t.into_inner()),
        None => (0..0, T::default()),
    }
}

/// 1-based line number of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Which file `--config` means when it is not given: `$MCP_GATEWAY_CONFIG` is
/// handled by clap; otherwise `./gateway.toml` if it exists, else the embedded default.
pub fn default_path() -> Option<PathBuf> {
    let local = PathBuf::from("gateway.toml");
    local.exists().then_some(local)
}

#[cfg(test)]
mod tests;
