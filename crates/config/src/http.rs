//! `[http]`: the upstream streamable HTTP listener's checks: the hosts and
//! origins it answers, callers' request rates, how many sessions and
//! connections it holds, and how long a request may take to arrive.

use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

/// `[http]`: the upstream streamable HTTP listener.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawHttp {
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
    /// Seconds a connection has to send a request's headers, the first or the
    /// next on a kept-alive connection (default 10); it is closed otherwise.
    pub header_timeout_secs: Option<Spanned<u32>>,
    /// Seconds from a request's headers to the end of its body (default 30);
    /// 408 and a closed connection otherwise.
    pub body_timeout_secs: Option<Spanned<u32>>,
    /// Open HTTP connections in all (default 4096, within half the open-file
    /// limit); past it, new ones wait to be accepted.
    pub max_connections: Option<Spanned<u32>>,
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
    /// How long a connection may take to send a request's headers.
    pub header_timeout: Duration,
    /// How long a request's body may take to arrive once its headers have.
    pub body_timeout: Duration,
    /// Open HTTP connections in all.
    pub max_connections: usize,
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
            // Long enough for a client on a slow link, short enough that a
            // connection which sends nothing gives its slot back soon.
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            // Two per session (a POST and the SSE stream) for the sessions
            // one caller may hold, many times over; the listener lowers it
            // to half the open-file limit, so that a full listener cannot
            // starve the store, stdio servers' pipes and outgoing connections.
            max_connections: 4096,
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
    let header_timeout_secs = at_least_one(raw.header_timeout_secs, "header_timeout_secs")?;
    let body_timeout_secs = at_least_one(raw.body_timeout_secs, "body_timeout_secs")?;
    let max_connections = at_least_one(raw.max_connections, "max_connections")?;
    let secs = |s: u32| Duration::from_secs(s.into());
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
        header_timeout: header_timeout_secs.map_or(defaults.header_timeout, secs),
        body_timeout: body_timeout_secs.map_or(defaults.body_timeout, secs),
        max_connections: max_connections.map_or(defaults.max_connections, |n| n as usize),
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
