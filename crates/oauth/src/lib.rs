//! The gateway as an OAuth 2.1 protected resource (MCP authorization,
//! RFC 9728): access tokens from trusted authorization servers, checked as
//! JWTs against each issuer's JWKS or by RFC 7662 introspection, become an
//! [`Identity`] that maps to a project.
//!
//! The raw token never leaves this crate and the gateway's `auth`: what the rest
//! of the gateway sees is the issuer, the subject, groups and scopes.

mod issuer;

use std::str::FromStr;

use jsonwebtoken::Algorithm;
use serde_json::{Map, Value, json};

use config::OAuthConfig;
use issuer::Issuer;

/// Who a valid access token says the caller is.
#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    /// `iss`.
    pub issuer: String,
    /// `sub`.
    pub subject: String,
    /// The groups claim.
    pub groups: Vec<String>,
    /// Granted scopes (`scope` or `scp`).
    pub scopes: Vec<String>,
    /// The value of `project_claim`, if configured and present.
    pub project: Option<String>,
}

/// Why a token was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Malformed, badly signed, expired, for another audience or issuer (401 `invalid_token`).
    #[error("invalid token: {0}")]
    Invalid(String),
    /// Valid, but without a required scope (403 `insufficient_scope`).
    #[error("the token lacks the scope '{0}'")]
    InsufficientScope(String),
    /// The issuer's metadata, keys or introspection endpoint could not be reached.
    #[error("authorization server '{issuer}' is unavailable: {reason}")]
    Unavailable {
        /// The issuer.
        issuer: String,
        /// What failed.
        reason: String,
    },
}

/// Checks access tokens against `[auth.oauth]`.
#[derive(Debug)]
pub struct Verifier {
    config: OAuthConfig,
    issuers: Vec<Issuer>,
}

/// The claims read before the signature is checked, only to pick the issuer's keys.
#[derive(serde::Deserialize)]
struct Unverified {
    iss: Option<String>,
}

impl Verifier {
    /// A verifier for `config`; nothing is fetched until the first token.
    pub fn new(config: OAuthConfig) -> Self {
        let http = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(10))
            .build()
            .expect("an HTTP client with rustls");
        let issuers = config
            .issuers
            .iter()
            .map(|c| Issuer::new(c.clone(), http.clone()))
            .collect();
        Self { config, issuers }
    }

    /// The settings this verifier checks against.
    pub fn config(&self) -> &OAuthConfig {
        &self.config
    }

    /// Verifies `token` completely: signature (or introspection), `iss`,
    /// `aud`, `exp`/`nbf`, then the required scopes.
    pub async fn verify(&self, token: &str) -> Result<Identity, Error> {
        let identity = match jsonwebtoken::decode_header(token) {
            Ok(header) => {
                let iss = jsonwebtoken::dangerous::insecure_decode_claims::<Unverified>(token)
                    .ok()
                    .and_then(|c| c.iss)
                    .ok_or_else(|| Error::Invalid("the token has no issuer (iss)".into()))?;
                let issuer = self
                    .issuers
                    .iter()
                    .find(|i| i.config.issuer == iss)
                    .ok_or_else(|| Error::Invalid(format!("issuer '{iss}' is not trusted")))?;
                if issuer.config.introspection.is_some() {
                    issuer.introspect(token, &self.config).await?
                } else {
                    issuer.verify_jwt(token, &header, &self.config).await?
                }
            }
            // Not a JWT (or `alg: none`, which is no JWS): an opaque token,
            // known only to an issuer that introspects.
            Err(_) => self.introspect_opaque(token).await?,
        };
        if let Some(missing) = missing_scope(&self.config.scopes, &identity.scopes) {
            return Err(Error::InsufficientScope(missing.to_string()));
        }
        Ok(identity)
    }

    async fn introspect_opaque(&self, token: &str) -> Result<Identity, Error> {
        let mut last = Error::Invalid("not a JWT, and no issuer is configured for introspection".into());
        for issuer in self.issuers.iter().filter(|i| i.config.introspection.is_some()) {
            match issuer.introspect(token, &self.config).await {
                Ok(identity) => return Ok(identity),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// The project `identity` acts as: the first `[[auth.oauth.projects]]`
    /// entry naming its subject or one of its groups, else `project_claim`.
    pub fn project_for<'a>(&'a self, identity: &'a Identity) -> Option<&'a str> {
        project_for(&self.config, identity)
    }

    /// `/.well-known/oauth-protected-resource` (RFC 9728).
    pub fn metadata(&self) -> Value {
        json!({
            "resource": self.config.audience,
            "authorization_servers": self.config.issuers.iter().map(|i| &i.issuer).collect::<Vec<_>>(),
            "scopes_supported": self.config.scopes,
            "bearer_methods_supported": ["header"],
            "resource_name": "mcp-gateway",
        })
    }

    /// Where the metadata is served for this resource: the well-known
    /// prefix inserted before the audience's path (RFC 9728 §3.1).
    pub fn metadata_url(&self) -> String {
        metadata_url(&self.config.audience)
    }

    /// A `WWW-Authenticate` value: where to find the metadata, the scopes,
    /// and the error (RFC 6750 §3) when a token was refused.
    pub fn challenge(&self, error: Option<(&str, &str)>) -> String {
        let mut value = format!("Bearer resource_metadata=\"{}\"", self.metadata_url());
        if !self.config.scopes.is_empty() {
            value.push_str(&format!(", scope=\"{}\"", self.config.scopes.join(" ")));
        }
        if let Some((code, description)) = error {
            let description = description.replace(['"', '\\'], "'");
            value.push_str(&format!(", error=\"{code}\", error_description=\"{description}\""));
        }
        value
    }
}

/// See [`Verifier::project_for`].
fn project_for<'a>(config: &'a OAuthConfig, identity: &'a Identity) -> Option<&'a str> {
    config
        .projects
        .iter()
        .find(|m| {
            m.issuer.as_ref().is_none_or(|i| *i == identity.issuer)
                && (m.subjects.contains(&identity.subject) || m.groups.iter().any(|g| identity.groups.contains(g)))
        })
        .map(|m| m.project.as_str())
        .or(identity.project.as_deref())
}

/// The first required scope not granted.
fn missing_scope<'a>(required: &'a [String], granted: &[String]) -> Option<&'a str> {
    required.iter().find(|s| !granted.contains(s)).map(String::as_str)
}

/// `https://host/.well-known/oauth-protected-resource/path` for `https://host/path`.
pub fn metadata_url(resource: &str) -> String {
    let (scheme, rest) = resource.split_once("://").unwrap_or(("https", resource));
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let path = path.trim_end_matches('/');
    let suffix = if path.is_empty() {
        String::new()
    } else {
        format!("/{path}")
    };
    format!("{scheme}://{authority}{WELL_KNOWN}{suffix}")
}

/// The well-known path of protected-resource metadata.
pub const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// An [`Identity`] from verified claims (a JWT's or an introspection answer's).
fn identity(issuer: &str, claims: &Map<String, Value>, config: &OAuthConfig) -> Result<Identity, Error> {
    let subject = claims
        .get("sub")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| Error::Invalid("the token has no subject (sub)".into()))?;
    Ok(Identity {
        issuer: issuer.to_string(),
        subject: subject.to_string(),
        groups: strings(claims.get(&config.groups_claim)),
        scopes: claims
            .get("scope")
            .or_else(|| claims.get("scp"))
            .map(|v| strings(Some(v)))
            .unwrap_or_default(),
        project: config
            .project_claim
            .as_ref()
            .and_then(|c| claims.get(c))
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

/// A claim that is a space-separated string or an array of strings.
fn strings(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::String(s)) => s.split_whitespace().map(str::to_string).collect(),
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        _ => Vec::new(),
    }
}

/// Whether `aud` (a string or an array) names `audience`.
fn has_audience(aud: Option<&Value>, audience: &str) -> bool {
    strings(aud).iter().any(|a| a == audience)
}

/// The configured algorithm names as `jsonwebtoken` values (config already
/// limited them to asymmetric ones).
fn algorithms(names: &[String]) -> Vec<Algorithm> {
    names.iter().filter_map(|n| Algorithm::from_str(n).ok()).collect()
}

#[cfg(test)]
mod tests;
