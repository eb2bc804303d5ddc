//! `[index]`: the Index Network built-in's settings. Every key falls back to
//! the environment variable the prior Index MCP read, then to its default.

use std::time::Duration;

use serde::Deserialize;

/// The built-in server's name (the `index:` of its tool keys).
pub const SERVER_NAME: &str = "index";
/// Largest page size the Protocol API serves.
pub const MAX_LIMIT: u64 = 100;
/// Most VibeCheck calls in flight for one request.
pub const MAX_CONCURRENCY: u64 = 5;
/// Character limits for the intent payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PayloadLimits {
    /// Per section.
    pub section: usize,
    /// For the user's instruction.
    pub instruction: usize,
}

/// `[index]` as written. Every key falls back to the environment variable
/// the prior Index MCP read (shown in brackets), then to its default.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawIndex {
    /// Register the `index` server at all (default true).
    pub enabled: Option<bool>,
    /// Protocol API base, e.g. `https://index.network/api` [PROTOCOL_API_URL].
    pub protocol_api_url: Option<String>,
    /// Where the caller's token is exchanged for a Protocol API token
    /// [INDEX_TOKEN_EXCHANGE_URL, else `${SERVER_BASE_URL}/token/privy/access-token`].
    pub token_exchange_url: Option<String>,
    /// Index's authorization server: the issuer (one of `[[auth.oauth.issuers]]`)
    /// whose access tokens callers bring and `token_exchange_url` exchanges.
    pub oauth_issuer: Option<String>,
    /// `/discover/new` timeout (default 60000) [PROTOCOL_API_TIMEOUT_MS].
    pub protocol_api_timeout_ms: Option<u64>,
    /// `/discover/filter` timeout (default 30000) [DISCOVER_FILTER_TIMEOUT_MS].
    pub discover_filter_timeout_ms: Option<u64>,
    /// Token exchange timeout (default 10000) [PRIVY_TOKEN_EXCHANGE_TIMEOUT_MS].
    pub token_exchange_timeout_ms: Option<u64>,
    /// Per-VibeCheck timeout (default 30000) [VIBECHECK_TIMEOUT_MS].
    pub vibecheck_timeout_ms: Option<u64>,
    /// VibeCheck calls in flight when the caller sets none, 1..=5 (default 2) [VIBECHECK_CONCURRENCY].
    pub vibecheck_concurrency: Option<u64>,
    /// Pause after each VibeCheck call, per worker (default 75) [VIBECHECK_THROTTLE_MS].
    pub vibecheck_throttle_ms: Option<u64>,
    /// Delays before VibeCheck retries; their count is the number of retries (default [250, 500]).
    pub vibecheck_retry_delays_ms: Option<Vec<u64>>,
    /// Characters per section of the intent payload (default 5000) [EXTRACT_INTENT_SECTION_CHAR_LIMIT].
    pub section_char_limit: Option<u64>,
    /// Characters of the user's instruction (default 2000) [EXTRACT_INTENT_INSTRUCTION_CHAR_LIMIT].
    pub instruction_char_limit: Option<u64>,
    /// `discover_connections` results when the caller sets none (default 10) [MAX_CONNECTIONS].
    pub max_connections: Option<u64>,
    /// How long to wait for matches of freshly extracted intents (default 5000).
    pub match_wait_ms: Option<u64>,
    /// Whole-call timeout of one tool call (default 300000).
    pub timeout_ms: Option<u64>,
}

/// `[index]`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexConfig {
    /// Registered at all.
    pub enabled: bool,
    /// Protocol API base (empty: not configured).
    pub protocol_api_url: String,
    /// Token exchange endpoint (empty: not configured).
    pub token_exchange_url: String,
    /// The issuer whose tokens reach the exchange; none: no caller token ever does.
    pub oauth_issuer: Option<String>,
    /// `/discover/new` timeout.
    pub protocol_api_timeout: Duration,
    /// `/discover/filter` timeout.
    pub discover_filter_timeout: Duration,
    /// Token exchange timeout.
    pub token_exchange_timeout: Duration,
    /// Per-VibeCheck timeout.
    pub vibecheck_timeout: Duration,
    /// Default VibeCheck concurrency.
    pub vibecheck_concurrency: u64,
    /// Pause after each VibeCheck call.
    pub vibecheck_throttle: Duration,
    /// VibeCheck retry delays.
    pub vibecheck_retry_delays: Vec<Duration>,
    /// Intent payload limits.
    pub payload_limits: PayloadLimits,
    /// Default `maxConnections`.
    pub max_connections: u64,
    /// Budget for polling matches of fresh intents.
    pub match_wait: Duration,
    /// Whole-call timeout.
    pub timeout: Duration,
}

impl IndexConfig {
    /// Validates `[index]`; an error names the key.
    pub fn from_raw(raw: RawIndex) -> Result<Self, (String, String)> {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let url = |key: &str, value: Option<String>, fallback: Option<String>| -> Result<String, (String, String)> {
            let value = match value {
                Some(v) => super::interpolate(&v).map_err(|m| (key.to_string(), m))?,
                None => fallback.unwrap_or_default(),
            };
            let value = value.trim().to_string();
            if !value.is_empty() {
                match value.parse::<http::Uri>() {
                    Ok(u) if matches!(u.scheme_str(), Some("http" | "https")) && u.host().is_some() => {}
                    _ => {
                        return Err((
                            key.into(),
                            format!("'{}' is not an http:// or https:// URL", crate::mask::url(&value)),
                        ));
                    }
                }
            }
            Ok(value)
        };
        let number = |key: &str, value: Option<u64>, var: Option<&str>, default: u64, min: u64, max: u64| {
            let n = match (value, var.and_then(|v| env(v).map(|x| (v, x)))) {
                (Some(n), _) => n,
                (None, Some((var, v))) => v.trim().parse().map_err(|_| {
                    (
                        key.to_string(),
                        format!("environment variable {var}='{v}' is not a number"),
                    )
                })?,
                (None, None) => default,
            };
            if n < min || n > max {
                return Err((key.to_string(), format!("{n} is out of range {min}..={max}")));
            }
            Ok(n)
        };
        let ms = |key, value, var, default| number(key, value, var, default, 1, u64::MAX).map(Duration::from_millis);
        let token_exchange_url = url(
            "token_exchange_url",
            raw.token_exchange_url,
            env("INDEX_TOKEN_EXCHANGE_URL").or_else(|| {
                env("SERVER_BASE_URL").map(|b| format!("{}/token/privy/access-token", b.trim_end_matches('/')))
            }),
        )?;
        let retry_delays = raw
            .vibecheck_retry_delays_ms
            .unwrap_or_else(|| vec![250, 500])
            .into_iter()
            .map(Duration::from_millis)
            .collect();
        Ok(Self {
            enabled: raw.enabled.unwrap_or(true),
            protocol_api_url: url("protocol_api_url", raw.protocol_api_url, env("PROTOCOL_API_URL"))?,
            token_exchange_url,
            oauth_issuer: raw.oauth_issuer.filter(|i| !i.trim().is_empty()),
            protocol_api_timeout: ms(
                "protocol_api_timeout_ms",
                raw.protocol_api_timeout_ms,
                Some("PROTOCOL_API_TIMEOUT_MS"),
                60_000,
            )?,
            discover_filter_timeout: ms(
                "discover_filter_timeout_ms",
                raw.discover_filter_timeout_ms,
                Some("DISCOVER_FILTER_TIMEOUT_MS"),
                30_000,
            )?,
            token_exchange_timeout: ms(
                "token_exchange_timeout_ms",
                raw.token_exchange_timeout_ms,
                Some("PRIVY_TOKEN_EXCHANGE_TIMEOUT_MS"),
                10_000,
            )?,
            vibecheck_timeout: ms(
                "vibecheck_timeout_ms",
                raw.vibecheck_timeout_ms,
                Some("VIBECHECK_TIMEOUT_MS"),
                30_000,
            )?,
            vibecheck_concurrency: number(
                "vibecheck_concurrency",
                raw.vibecheck_concurrency,
                Some("VIBECHECK_CONCURRENCY"),
                2,
                1,
                MAX_CONCURRENCY,
            )?,
            vibecheck_throttle: Duration::from_millis(number(
                "vibecheck_throttle_ms",
                raw.vibecheck_throttle_ms,
                Some("VIBECHECK_THROTTLE_MS"),
                75,
                0,
                60_000,
            )?),
            vibecheck_retry_delays: retry_delays,
            payload_limits: PayloadLimits {
                section: number(
                    "section_char_limit",
                    raw.section_char_limit,
                    Some("EXTRACT_INTENT_SECTION_CHAR_LIMIT"),
                    5000,
                    1,
                    1 << 20,
                )? as usize,
                instruction: number(
                    "instruction_char_limit",
                    raw.instruction_char_limit,
                    Some("EXTRACT_INTENT_INSTRUCTION_CHAR_LIMIT"),
                    2000,
                    1,
                    1 << 20,
                )? as usize,
            },
            max_connections: number(
                "max_connections",
                raw.max_connections,
                Some("MAX_CONNECTIONS"),
                10,
                1,
                MAX_LIMIT,
            )?,
            match_wait: Duration::from_millis(number("match_wait_ms", raw.match_wait_ms, None, 5000, 0, 60_000)?),
            timeout: ms("timeout_ms", raw.timeout_ms, None, 300_000)?,
        })
    }

    /// Why the server cannot run, if it cannot.
    pub fn unconfigured(&self) -> Option<String> {
        if self.protocol_api_url.is_empty() {
            Some("not configured: set [index] protocol_api_url (or PROTOCOL_API_URL)".into())
        } else if self.token_exchange_url.is_empty() {
            Some("not configured: set [index] token_exchange_url (or INDEX_TOKEN_EXCHANGE_URL)".into())
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_seeds() {
        let c = IndexConfig::from_raw(RawIndex {
            protocol_api_url: Some("http://127.0.0.1:9/api".into()),
            token_exchange_url: Some("http://127.0.0.1:9/token".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(c.protocol_api_timeout, Duration::from_secs(60));
        assert_eq!(c.token_exchange_timeout, Duration::from_secs(10));
        assert_eq!(c.vibecheck_concurrency, 2);
        assert_eq!(c.vibecheck_throttle, Duration::from_millis(75));
        assert_eq!(
            c.vibecheck_retry_delays,
            vec![Duration::from_millis(250), Duration::from_millis(500)]
        );
        assert_eq!(
            c.payload_limits,
            PayloadLimits {
                section: 5000,
                instruction: 2000
            }
        );
        assert_eq!(c.unconfigured(), None);
    }

    #[test]
    fn bad_values_name_their_key() {
        let e = IndexConfig::from_raw(RawIndex {
            vibecheck_concurrency: Some(9),
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(e.0, "vibecheck_concurrency");
        let e = IndexConfig::from_raw(RawIndex {
            protocol_api_url: Some("ftp://x".into()),
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(e.0, "protocol_api_url");
    }
}
