//! `[auth.oauth]`: the authorization servers whose access tokens the gateway
//! accepts, the audience and scopes it requires, and how a token maps to a
//! project. Parsed and checked here; verified per request by the gateway's `oauth` module.

use std::time::Duration;

use serde::Deserialize;

use super::interpolate::interpolate;

/// `[auth.oauth]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOAuth {
    /// The gateway's canonical resource URI (RFC 8707), e.g.
    /// `https://gateway.example.com/mcp`: the `aud` every token must carry.
    pub audience: String,
    /// Scopes every caller's token must hold (default none).
    #[serde(default)]
    pub scopes: Vec<String>,
    /// A scope that makes a token an operator's: it opens the console (default: none does).
    pub admin_scope: Option<String>,
    /// Trusted authorization servers.
    pub issuers: Vec<RawIssuer>,
    /// A claim whose value names the caller's project (checked after `projects`).
    pub project_claim: Option<String>,
    /// The claim holding the caller's groups (default `groups`).
    pub groups_claim: Option<String>,
    /// Subjects and groups mapped to projects, first match wins.
    #[serde(default)]
    pub projects: Vec<RawProjectMap>,
    /// Clock skew allowed on `exp` and `nbf`, in seconds (default 30).
    pub leeway_seconds: Option<u64>,
}

/// One `[[auth.oauth.issuers]]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawIssuer {
    /// Issuer identifier; its metadata is found through RFC 8414 or OpenID discovery.
    pub issuer: String,
    /// JWS algorithms accepted (default: every RSA, RSA-PSS, ECDSA and EdDSA one; never HMAC or `none`).
    pub algorithms: Option<Vec<String>>,
    /// Keys are fetched again when older than this, and on an unknown `kid` at
    /// most this often, in milliseconds (default 60000).
    pub jwks_refresh_ms: Option<u64>,
    /// Validate opaque tokens by RFC 7662 introspection instead of as JWTs.
    pub introspection: Option<RawIntrospection>,
}

/// `introspection = { client_id, client_secret, cache_ttl_ms }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawIntrospection {
    /// The gateway's client id at the authorization server.
    pub client_id: String,
    /// Its secret (use `${ENV}`).
    pub client_secret: String,
    /// Longest an answer is reused, in milliseconds (default 60000; never past the token's `exp`).
    pub cache_ttl_ms: Option<u64>,
}

/// One `[[auth.oauth.projects]]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProjectMap {
    /// The project these callers act as.
    pub project: String,
    /// Only tokens of this issuer (default: any trusted issuer).
    pub issuer: Option<String>,
    /// `sub` values.
    #[serde(default)]
    pub subjects: Vec<String>,
    /// Group names found in the groups claim.
    #[serde(default)]
    pub groups: Vec<String>,
}

/// Validated `[auth.oauth]`.
#[derive(Debug, Clone, PartialEq)]
pub struct OAuthConfig {
    /// The required `aud`, also the `resource` of the protected-resource metadata.
    pub audience: String,
    /// Scopes every token must hold.
    pub scopes: Vec<String>,
    /// The scope that opens the operator console.
    pub admin_scope: Option<String>,
    /// Trusted issuers, in file order.
    pub issuers: Vec<IssuerConfig>,
    /// Claim naming the project.
    pub project_claim: Option<String>,
    /// Claim listing groups.
    pub groups_claim: String,
    /// Explicit mapping, first match wins.
    pub projects: Vec<ProjectMap>,
    /// Allowed clock skew.
    pub leeway: Duration,
}

/// One trusted authorization server.
#[derive(Debug, Clone, PartialEq)]
pub struct IssuerConfig {
    /// Its identifier, exactly as tokens carry it in `iss`.
    pub issuer: String,
    /// Accepted JWS algorithms (upper case, e.g. `RS256`).
    pub algorithms: Vec<String>,
    /// JWKS refresh interval.
    pub jwks_refresh: Duration,
    /// Introspection instead of JWT validation.
    pub introspection: Option<Introspection>,
}

/// RFC 7662 client settings.
#[derive(Clone, PartialEq)]
pub struct Introspection {
    /// Client id.
    pub client_id: String,
    /// Client secret; `Debug` hides it.
    pub client_secret: String,
    /// Longest reuse of an answer.
    pub cache_ttl: Duration,
}

impl std::fmt::Debug for Introspection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Introspection")
            .field("client_id", &self.client_id)
            .field("cache_ttl", &self.cache_ttl)
            .finish_non_exhaustive()
    }
}

/// Subjects and groups that act as one project.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectMap {
    /// The project.
    pub project: String,
    /// Only this issuer's tokens.
    pub issuer: Option<String>,
    /// Matching `sub` values.
    pub subjects: Vec<String>,
    /// Matching groups.
    pub groups: Vec<String>,
}

/// Asymmetric algorithms only: HMAC would let anyone holding the (public)
/// JWKS forge tokens, and `none` is no signature at all.
pub(crate) const DEFAULT_ALGORITHMS: &[&str] = &[
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA",
];

impl OAuthConfig {
    /// Checks `[auth.oauth]`; an error is `(key, message)` relative to `auth.oauth`.
    pub fn from_raw(raw: RawOAuth) -> Result<Self, (String, String)> {
        let audience = interpolate(&raw.audience).map_err(|m| ("audience".to_string(), m))?;
        if !(audience.starts_with("https://") || audience.starts_with("http://")) {
            return Err((
                "audience".into(),
                format!(
                    "'{audience}' is not an absolute http(s) URI; use the gateway's public MCP URL, e.g. https://gateway.example.com/mcp"
                ),
            ));
        }
        if raw.issuers.is_empty() {
            return Err((
                "issuers".into(),
                "name at least one [[auth.oauth.issuers]] with an issuer URL".into(),
            ));
        }
        let mut issuers = Vec::with_capacity(raw.issuers.len());
        for (i, raw) in raw.issuers.into_iter().enumerate() {
            let key = |k: &str| format!("issuers[{i}].{k}");
            let issuer = interpolate(&raw.issuer).map_err(|m| (key("issuer"), m))?;
            if !(issuer.starts_with("https://") || issuer.starts_with("http://")) {
                return Err((key("issuer"), format!("'{issuer}' is not an http(s) URL")));
            }
            if issuers.iter().any(|i: &IssuerConfig| i.issuer == issuer) {
                return Err((key("issuer"), format!("'{issuer}' is listed twice")));
            }
            let algorithms = raw
                .algorithms
                .unwrap_or_else(|| DEFAULT_ALGORITHMS.iter().map(|a| a.to_string()).collect());
            if let Some(bad) = algorithms.iter().find(|a| !DEFAULT_ALGORITHMS.contains(&a.as_str())) {
                return Err((
                    key("algorithms"),
                    format!(
                        "'{bad}' is not accepted; choose among {}",
                        DEFAULT_ALGORITHMS.join(", ")
                    ),
                ));
            }
            let introspection = match raw.introspection {
                None => None,
                Some(r) => Some(Introspection {
                    client_id: interpolate(&r.client_id).map_err(|m| (key("introspection.client_id"), m))?,
                    client_secret: interpolate(&r.client_secret)
                        .map_err(|m| (key("introspection.client_secret"), m))?,
                    cache_ttl: Duration::from_millis(r.cache_ttl_ms.unwrap_or(60_000)),
                }),
            };
            issuers.push(IssuerConfig {
                issuer,
                algorithms,
                jwks_refresh: Duration::from_millis(raw.jwks_refresh_ms.unwrap_or(60_000)),
                introspection,
            });
        }
        let mut projects = Vec::with_capacity(raw.projects.len());
        for (i, p) in raw.projects.into_iter().enumerate() {
            if p.subjects.is_empty() && p.groups.is_empty() {
                return Err((format!("projects[{i}]"), "give subjects or groups (or both)".into()));
            }
            if let Some(iss) = &p.issuer
                && !issuers.iter().any(|i| &i.issuer == iss)
            {
                return Err((
                    format!("projects[{i}].issuer"),
                    format!("'{iss}' is not one of [[auth.oauth.issuers]]"),
                ));
            }
            projects.push(ProjectMap {
                project: p.project,
                issuer: p.issuer,
                subjects: p.subjects,
                groups: p.groups,
            });
        }
        if projects.is_empty() && raw.project_claim.is_none() {
            return Err((
                "projects".into(),
                "no token could map to a project: add [[auth.oauth.projects]] or project_claim".into(),
            ));
        }
        Ok(Self {
            audience,
            scopes: raw.scopes,
            admin_scope: raw.admin_scope.filter(|s| !s.trim().is_empty()),
            issuers,
            project_claim: raw.project_claim,
            groups_claim: raw.groups_claim.unwrap_or_else(|| "groups".into()),
            projects,
            leeway: Duration::from_secs(raw.leeway_seconds.unwrap_or(30)),
        })
    }

    /// Whether `issuer` is trusted.
    pub fn trusts(&self, issuer: &str) -> bool {
        self.issuers.iter().any(|i| i.issuer == issuer)
    }
}

/// A `url` server's `oauth = { … }`: how `mcp-gateway login` signs a
/// project in to it. Without it, login registers by dynamic client
/// registration (RFC 7591) and asks for the scopes the server advertises.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawServerOAuth {
    /// A client registered by hand at the server's authorization server.
    pub client_id: Option<String>,
    /// Its secret, for a confidential client (use `${ENV}`).
    pub client_secret: Option<String>,
    /// Scopes to ask for (default: those the server advertises).
    #[serde(default)]
    pub scopes: Vec<String>,
}

/// Validated `oauth = { … }` of a server.
#[derive(Clone, PartialEq)]
pub struct ServerOAuth {
    /// Pre-registered client id; `None`: dynamic registration.
    pub client_id: Option<String>,
    /// Its secret; `Debug` hides it.
    pub client_secret: Option<String>,
    /// Scopes to ask for.
    pub scopes: Vec<String>,
}

impl std::fmt::Debug for ServerOAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerOAuth")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "[hidden]"))
            .field("scopes", &self.scopes)
            .finish()
    }
}

impl ServerOAuth {
    /// Checks a raw entry; errors name the field.
    pub fn from_raw(raw: RawServerOAuth) -> Result<Self, (String, String)> {
        let client_secret = raw
            .client_secret
            .map(|s| interpolate(&s).map_err(|m| ("client_secret".to_string(), m)))
            .transpose()?;
        if client_secret.is_some() && raw.client_id.is_none() {
            return Err((
                "client_secret".into(),
                "`client_secret` needs the `client_id` it belongs to".into(),
            ));
        }
        Ok(Self {
            client_id: raw.client_id,
            client_secret,
            scopes: raw.scopes,
        })
    }
}
