//! `[http]`: the upstream streamable HTTP listener's checks: the hosts and
//! origins it answers, callers' request rates, and how many sessions it holds.

use serde::Deserialize;
use toml::Spanned;

/// `[http]`: the upstream streamable HTTP listener.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHttp {
    /// `Host` header values accepted (DNS-rebinding protection).
    pub allowed_hosts: Option<Vec<String>>,
    /// `Origin` header values accepted from browsers (`http://localhost:*` style).
    pub allowed_origins: Option<Vec<String>>,
    /// Requests per minute per token (anonymous callers share one budget); unlimited when absent.
    pub requests_per_minute: Option<Spanned<u32>>,
    /// Requests a caller may send back to back (default: a tenth of the minute's, at least 1).
    pub burst: Option<Spanned<u32>>,
    /// Open MCP sessions in all (default 4096); the idlest goes first when full.
    pub max_sessions: Option<Spanned<u32>>,
    /// Open MCP sessions per caller (default 256); the caller's idlest goes first when full.
    pub max_sessions_per_caller: Option<Spanned<u32>>,
}

/// Validated `[http]`.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpConfig {
    /// Accepted `Host` values.
    pub allowed_hosts: Vec<String>,
    /// Accepted `Origin` values.
    pub allowed_origins: Vec<String>,
    /// Per-caller request rate, if limited.
    pub rate: Option<Rate>,
    /// Open MCP sessions in all.
    pub max_sessions: usize,
    /// Open MCP sessions per caller (project, and subject for OAuth).
    pub max_sessions_per_caller: usize,
}

impl Default for HttpConfig {
    fn default() -> Self {
        let local = ["localhost", "127.0.0.1", "[::1]"];
        Self {
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            allowed_origins: local
                .iter()
                .flat_map(|h| [format!("http://{h}:*"), format!("https://{h}:*")])
                .collect(),
            rate: None,
            max_sessions: 4096,
            max_sessions_per_caller: 256,
        }
    }
}

/// Validates `[http]`; `invalid` names a key under it.
pub(super) fn validate(
    raw: RawHttp,
    invalid: impl Fn(std::ops::Range<usize>, &str, String) -> super::Error,
) -> Result<HttpConfig, super::Error> {
    let at_least_one = |v: Option<Spanned<u32>>, key: &str| match v {
        Some(v) if *v.get_ref() == 0 => Err(invalid(v.span(), key, "must be at least 1".into())),
        v => Ok(v.map(Spanned::into_inner)),
    };
    let per_minute = at_least_one(raw.requests_per_minute, "requests_per_minute")?;
    let burst = at_least_one(raw.burst, "burst")?;
    let max_sessions = at_least_one(raw.max_sessions, "max_sessions")?;
    let max_sessions_per_caller = at_least_one(raw.max_sessions_per_caller, "max_sessions_per_caller")?;
    let defaults = HttpConfig::default();
    Ok(HttpConfig {
        allowed_hosts: raw.allowed_hosts.unwrap_or(defaults.allowed_hosts),
        allowed_origins: raw.allowed_origins.unwrap_or(defaults.allowed_origins),
        rate: per_minute.map(|per_minute| Rate {
            per_minute,
            burst: burst.unwrap_or((per_minute / 10).max(1)),
        }),
        max_sessions: max_sessions.map_or(defaults.max_sessions, |n| n as usize),
        max_sessions_per_caller: max_sessions_per_caller.map_or(defaults.max_sessions_per_caller, |n| n as usize),
    })
}

/// A request rate: so many per minute, with bursts of up to `burst`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    /// Sustained requests per minute (at least 1).
    pub per_minute: u32,
    /// Requests allowed back to back (at least 1).
    pub burst: u32,
}
