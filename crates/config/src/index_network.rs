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
    /// `/discover/filter` endpoint (default `${protocol_api_url}/discover/filter`) [DISCOVER_FILTER_URL].
    pub discover_filter_url: Option<String>,
    /// `/synthesis/vibecheck` endpoint (default `${protocol_api_url}/synthesis/vibecheck`) [VIBECHECK_URL].
    pub vibecheck_url: Option<String>,
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
    /// `https://` origins the card widget may load avatar images from,
    /// declared in its content security policy; `https://*.example.com`
    /// allows subdomains (default: the Protocol API's origin when it is https).
    pub avatar_origins: Option<Vec<String>>,
}

/// `[index]`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexConfig {
    /// Registered at all.
    pub enabled: bool,
    /// Protocol API base (empty: not configured).
    pub protocol_api_url: String,
    /// `/discover/filter` endpoint (empty: not configured).
    pub discover_filter_url: String,
    /// `/synthesis/vibecheck` endpoint (empty: not configured).
    pub vibecheck_url: String,
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
    /// Origins of avatar images the widget may show (normalised, see [`avatar_origin`]).
    pub avatar_origins: Vec<String>,
}

impl IndexConfig {
    /// Validates `[index]`; an error names the key.
    pub fn from_raw(raw: RawIndex) -> Result<Self, (String, String)> {
        Self::from_raw_with(raw, &|name| std::env::var(name).ok())
    }

    /// [`Self::from_raw`] reading environment variables through `lookup`.
    fn from_raw_with(raw: RawIndex, lookup: &dyn Fn(&str) -> Option<String>) -> Result<Self, (String, String)> {
        let env = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
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
                            format!("'{}' is not an http:// or https:// URL", vocab::mask::url(&value)),
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
        let protocol_api_url = url("protocol_api_url", raw.protocol_api_url, env("PROTOCOL_API_URL"))?;
        let derived = |path: &str| {
            (!protocol_api_url.is_empty()).then(|| format!("{}{path}", protocol_api_url.trim_end_matches('/')))
        };
        let discover_filter_url = url(
            "discover_filter_url",
            raw.discover_filter_url,
            env("DISCOVER_FILTER_URL").or_else(|| derived("/discover/filter")),
        )?;
        let vibecheck_url = url(
            "vibecheck_url",
            raw.vibecheck_url,
            env("VIBECHECK_URL").or_else(|| derived("/synthesis/vibecheck")),
        )?;
        let avatar_origins = match raw.avatar_origins {
            Some(origins) => origins
                .iter()
                .enumerate()
                .map(|(i, o)| avatar_origin(o).map_err(|m| (format!("avatar_origins[{i}]"), m)))
                .collect::<Result<Vec<_>, _>>()?,
            None => https_origin(&protocol_api_url).into_iter().collect(),
        };
        let retry_delays = raw
            .vibecheck_retry_delays_ms
            .unwrap_or_else(|| vec![250, 500])
            .into_iter()
            .map(Duration::from_millis)
            .collect();
        Ok(Self {
            enabled: raw.enabled.unwrap_or(true),
            protocol_api_url,
            discover_filter_url,
            vibecheck_url,
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
            avatar_origins,
        })
    }

    /// Whether the widget may load the image at `url`: https, from one of [`Self::avatar_origins`].
    pub fn avatar_allowed(&self, url: &str) -> bool {
        https_origin(url).is_some_and(|origin| self.avatar_origins.iter().any(|p| origin_allows(p, &origin)))
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

/// `https://host[:port]` of an https URL (lower case, port 443 left out);
/// None for any other scheme or text that is not a URL.
pub(crate) fn https_origin(url: &str) -> Option<String> {
    let u = url::Url::parse(url.trim()).ok()?;
    (u.scheme() == "https" && u.host_str().is_some()).then(|| u.origin().ascii_serialization())
}

/// A configured avatar origin, normalised: `https://host[:port]`, or
/// `https://*.host[:port]` for every subdomain (the CSP source forms hosts accept).
pub(crate) fn avatar_origin(value: &str) -> Result<String, String> {
    let bad = || {
        format!(
            "'{}' is not an https:// origin (a scheme and a host, no path), e.g. https://avatars.example.com",
            vocab::mask::url(value)
        )
    };
    let trimmed = value.trim().trim_end_matches('/');
    let (wildcard, plain) = match trimmed.strip_prefix("https://*.") {
        Some(rest) => (true, format!("https://{rest}")),
        None => (false, trimmed.to_string()),
    };
    let u = url::Url::parse(&plain).map_err(|_| bad())?;
    let bare = u.path() == "/" && u.query().is_none() && u.fragment().is_none();
    let anonymous = u.username().is_empty() && u.password().is_none();
    if u.scheme() != "https" || u.host_str().is_none() || !bare || !anonymous {
        return Err(bad());
    }
    let origin = u.origin().ascii_serialization();
    Ok(if wildcard {
        origin.replacen("https://", "https://*.", 1)
    } else {
        origin
    })
}

/// Whether the normalised `pattern` (see [`avatar_origin`]) covers `origin`.
fn origin_allows(pattern: &str, origin: &str) -> bool {
    match pattern.strip_prefix("https://*.") {
        Some(suffix) => origin
            .strip_prefix("https://")
            .is_some_and(|host| host.len() > suffix.len() + 1 && host.ends_with(&format!(".{suffix}"))),
        None => pattern == origin,
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

    fn env_of(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn endpoint_urls_default_to_the_protocol_url_and_can_be_set() {
        let base = || RawIndex {
            protocol_api_url: Some("https://index.network/api/".into()),
            ..Default::default()
        };
        let c = IndexConfig::from_raw_with(base(), &env_of(&[])).unwrap();
        assert_eq!(c.discover_filter_url, "https://index.network/api/discover/filter");
        assert_eq!(c.vibecheck_url, "https://index.network/api/synthesis/vibecheck");

        let vars = &[
            ("DISCOVER_FILTER_URL", "https://filter.example.com/v2/filter"),
            ("VIBECHECK_URL", "https://synth.example.com/vibe"),
        ];
        let c = IndexConfig::from_raw_with(base(), &env_of(vars)).unwrap();
        assert_eq!(c.discover_filter_url, "https://filter.example.com/v2/filter");
        assert_eq!(c.vibecheck_url, "https://synth.example.com/vibe");

        // The file wins over the environment, as for every other key.
        let c = IndexConfig::from_raw_with(
            RawIndex {
                vibecheck_url: Some("http://127.0.0.1:9/vibe".into()),
                ..base()
            },
            &env_of(vars),
        )
        .unwrap();
        assert_eq!(c.vibecheck_url, "http://127.0.0.1:9/vibe");

        let unset = IndexConfig::from_raw_with(RawIndex::default(), &env_of(&[])).unwrap();
        assert_eq!(
            (unset.discover_filter_url.as_str(), unset.vibecheck_url.as_str()),
            ("", "")
        );
        let e = IndexConfig::from_raw_with(base(), &env_of(&[("VIBECHECK_URL", "not a url")])).unwrap_err();
        assert_eq!(e.0, "vibecheck_url");
    }

    #[test]
    fn avatar_origins_default_to_the_api_and_are_https_only() {
        let with = |url: &str, origins: Option<Vec<&str>>| {
            IndexConfig::from_raw_with(
                RawIndex {
                    protocol_api_url: Some(url.into()),
                    avatar_origins: origins.map(|o| o.into_iter().map(String::from).collect()),
                    ..Default::default()
                },
                &env_of(&[]),
            )
        };
        let c = with("https://Index.Network/api", None).unwrap();
        assert_eq!(c.avatar_origins, ["https://index.network"]);
        assert!(c.avatar_allowed("https://index.network/avatars/1.png"));
        assert!(!c.avatar_allowed("http://index.network/avatars/1.png"));
        assert!(!c.avatar_allowed("https://evil.example/index.network.png"));
        assert!(!c.avatar_allowed("data:image/png;base64,AAAA"));
        // A plain-http API declares nothing.
        assert!(with("http://127.0.0.1:9/api", None).unwrap().avatar_origins.is_empty());

        let c = with(
            "https://index.network/api",
            Some(vec![
                "https://cdn.example.com/",
                "https://*.googleusercontent.com",
                "https://img.example.com:8443",
            ]),
        )
        .unwrap();
        assert_eq!(
            c.avatar_origins,
            [
                "https://cdn.example.com",
                "https://*.googleusercontent.com",
                "https://img.example.com:8443"
            ]
        );
        assert!(c.avatar_allowed("https://cdn.example.com/a.png?size=64"));
        assert!(c.avatar_allowed("https://lh3.googleusercontent.com/a/x"));
        assert!(!c.avatar_allowed("https://googleusercontent.com/a/x"));
        assert!(!c.avatar_allowed("https://evilgoogleusercontent.com/a/x"));
        assert!(c.avatar_allowed("https://img.example.com:8443/a.png"));
        assert!(!c.avatar_allowed("https://img.example.com/a.png"));
        assert!(
            !c.avatar_allowed("https://index.network/a.png"),
            "an explicit list replaces the default"
        );

        for bad in [
            "http://cdn.example.com",
            "https://cdn.example.com/avatars",
            "cdn.example.com",
            "https://u:p@x.com",
        ] {
            let e = with("https://index.network/api", Some(vec![bad])).unwrap_err();
            assert_eq!(e.0, "avatar_origins[0]", "{bad}");
        }
    }
}
