//! One trusted authorization server: its metadata (RFC 8414, else OpenID
//! discovery), its signing keys (JWKS, cached and refreshed), and its
//! introspection endpoint (RFC 7662, answers cached briefly).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Header, Validation, errors::ErrorKind};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::{Error, Identity, algorithms, has_audience, identity};
use config::OAuthConfig;
use config::oauth::IssuerConfig;

/// Introspection answers kept at most; past it, expired ones go, then all.
const MAX_INTROSPECTED: usize = 10_000;

/// After a failed key fetch, the stale keys serve this long before the next try.
const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(5);

#[derive(Debug)]
pub(super) struct Issuer {
    pub(super) config: IssuerConfig,
    algorithms: Vec<Algorithm>,
    http: reqwest::Client,
    metadata: tokio::sync::OnceCell<Metadata>,
    keys: Mutex<Option<Keys>>,
    /// One key fetch at a time; the others wait and reuse its answer.
    fetching: tokio::sync::Mutex<()>,
    /// Introspection answers by SHA-256 of the token, until their expiry.
    introspected: Mutex<HashMap<[u8; 32], (Identity, Instant)>>,
}

#[derive(Debug, serde::Deserialize)]
struct Metadata {
    issuer: String,
    jwks_uri: Option<String>,
    introspection_endpoint: Option<String>,
}

#[derive(Debug, Clone)]
struct Keys {
    set: JwkSet,
    fetched: Instant,
}

impl Issuer {
    pub(super) fn new(config: IssuerConfig, http: reqwest::Client) -> Self {
        Self {
            algorithms: algorithms(&config.algorithms),
            config,
            http,
            metadata: tokio::sync::OnceCell::new(),
            keys: Mutex::new(None),
            fetching: tokio::sync::Mutex::new(()),
            introspected: Mutex::new(HashMap::new()),
        }
    }

    fn unavailable(&self, reason: impl std::fmt::Display) -> Error {
        Error::Unavailable {
            issuer: self.config.issuer.clone(),
            reason: reason.to_string(),
        }
    }

    /// The issuer's metadata, fetched once (a failure is retried on the next token).
    async fn metadata(&self) -> Result<&Metadata, Error> {
        self.metadata
            .get_or_try_init(|| async {
                let mut last = None;
                for url in metadata_urls(&self.config.issuer) {
                    match self.get_json::<Metadata>(&url).await {
                        Ok(m) if m.issuer == self.config.issuer => return Ok(m),
                        // RFC 8414 §3.3: metadata naming another issuer must not be used.
                        Ok(m) => last = Some(format!("{url} names issuer '{}'", m.issuer)),
                        Err(e) => last = Some(e),
                    }
                }
                Err(self.unavailable(last.unwrap_or_default()))
            })
            .await
    }

    async fn get_json<T: serde::de::DeserializeOwned>(&self, url: &str) -> Result<T, String> {
        let response = self.http.get(url).send().await.map_err(|e| format!("{url}: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("{url}: HTTP {}", response.status()));
        }
        response.json().await.map_err(|e| format!("{url}: {e}"))
    }

    /// Verifies a JWT signed by this issuer.
    pub(super) async fn verify_jwt(
        &self,
        token: &str,
        header: &Header,
        config: &OAuthConfig,
    ) -> Result<Identity, Error> {
        if !self.algorithms.contains(&header.alg) {
            return Err(Error::Invalid(format!("algorithm {:?} is not accepted", header.alg)));
        }
        let jwk = self.key(header).await?;
        let key = DecodingKey::from_jwk(&jwk).map_err(|e| Error::Invalid(format!("unusable signing key: {e}")))?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_audience(&[&config.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.validate_nbf = true;
        validation.leeway = config.leeway.as_secs();
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation).map_err(|e| {
            Error::Invalid(match e.kind() {
                ErrorKind::ExpiredSignature => "the token has expired".into(),
                ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)".into(),
                ErrorKind::InvalidAudience => format!("the token is not for this resource ({})", config.audience),
                ErrorKind::InvalidIssuer => "the token names another issuer".into(),
                ErrorKind::InvalidSignature => "the signature does not verify".into(),
                ErrorKind::MissingRequiredClaim(c) => format!("the token has no '{c}' claim"),
                ErrorKind::Base64(_) | ErrorKind::Json(_) | ErrorKind::Utf8(_) | ErrorKind::InvalidToken => {
                    "the token is malformed".into()
                }
                other => format!("{other:?}"),
            })
        })?;
        identity(&self.config.issuer, &data.claims, config)
    }

    /// The key that signed a token with `header`: by `kid`, else the only
    /// signing key that fits the algorithm. Keys older than `jwks_refresh`
    /// are fetched again first, so a removed key stops working and an added
    /// one starts, without a restart; an unknown `kid` alone never fetches
    /// more often than that.
    async fn key(&self, header: &Header) -> Result<Jwk, Error> {
        let cached = self.keys.lock().expect("keys lock").clone();
        let keys = match cached {
            Some(k) if k.fetched.elapsed() < self.config.jwks_refresh => k,
            stale => {
                let _one = self.fetching.lock().await;
                let again = self.keys.lock().expect("keys lock").clone();
                match again {
                    // Another request fetched while this one waited.
                    Some(k) if k.fetched.elapsed() < self.config.jwks_refresh => k,
                    _ => match self.fetch_keys().await {
                        Ok(set) => self.store_keys(set, Instant::now()),
                        Err(e) => match stale {
                            Some(k) => {
                                tracing::warn!(issuer = %self.config.issuer, error = %e, "keys could not be refreshed; using the cached ones");
                                let retry_at = Instant::now() + RETRY_AFTER_FAILURE;
                                let fetched = retry_at.checked_sub(self.config.jwks_refresh).unwrap_or(k.fetched);
                                self.store_keys(k.set, fetched)
                            }
                            None => return Err(e),
                        },
                    },
                }
            }
        };
        pick_key(&keys.set, header).ok_or_else(|| {
            Error::Invalid(match &header.kid {
                Some(kid) => format!("no key '{kid}' in the issuer's JWKS"),
                None => "no kid, and no single signing key fits".into(),
            })
        })
    }

    fn store_keys(&self, set: JwkSet, fetched: Instant) -> Keys {
        let keys = Keys { set, fetched };
        *self.keys.lock().expect("keys lock") = Some(keys.clone());
        keys
    }

    /// An endpoint the metadata names, or why it is missing.
    async fn endpoint(&self, name: &str, pick: fn(&Metadata) -> Option<&String>) -> Result<String, Error> {
        let metadata = self.metadata().await?;
        pick(metadata)
            .cloned()
            .ok_or_else(|| self.unavailable(format!("its metadata has no {name}")))
    }

    async fn fetch_keys(&self) -> Result<JwkSet, Error> {
        let uri = self.endpoint("jwks_uri", |m| m.jwks_uri.as_ref()).await?;
        let set: JwkSet = self.get_json(&uri).await.map_err(|e| self.unavailable(e))?;
        tracing::debug!(issuer = %self.config.issuer, keys = set.keys.len(), "fetched signing keys");
        Ok(set)
    }

    /// RFC 7662: asks the issuer whether `token` is active; answers are
    /// reused until the token's `exp` or `cache_ttl`, whichever comes first.
    pub(super) async fn introspect(&self, token: &str, config: &OAuthConfig) -> Result<Identity, Error> {
        let settings = self.config.introspection.as_ref().expect("an introspecting issuer");
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let now = Instant::now();
        if let Some((identity, until)) = self.introspected.lock().expect("introspection cache").get(&digest)
            && *until > now
        {
            return Ok(identity.clone());
        }
        let endpoint = self
            .endpoint("introspection_endpoint", |m| m.introspection_endpoint.as_ref())
            .await?;
        let response = self
            .http
            .post(&endpoint)
            .basic_auth(&settings.client_id, Some(&settings.client_secret))
            .form(&[("token", token), ("token_type_hint", "access_token")])
            .send()
            .await
            .map_err(|e| self.unavailable(format!("{endpoint}: {e}")))?;
        if !response.status().is_success() {
            return Err(self.unavailable(format!("{endpoint}: HTTP {}", response.status())));
        }
        let answer: Map<String, Value> = response
            .json()
            .await
            .map_err(|e| self.unavailable(format!("{endpoint}: {e}")))?;
        let identity = self.check_introspection(&answer, config)?;
        let unix_now = jsonwebtoken::get_current_timestamp();
        let exp = answer.get("exp").and_then(Value::as_u64).unwrap_or(u64::MAX);
        let until = now
            + settings
                .cache_ttl
                .min(Duration::from_secs(exp.saturating_sub(unix_now)));
        let mut cache = self.introspected.lock().expect("introspection cache");
        if cache.len() >= MAX_INTROSPECTED {
            cache.retain(|_, (_, until)| *until > now);
            if cache.len() >= MAX_INTROSPECTED {
                cache.clear();
            }
        }
        cache.insert(digest, (identity.clone(), until));
        Ok(identity)
    }

    /// The checks a JWT gets, on an introspection answer: active, this
    /// issuer, this audience (no token passthrough), in its lifetime.
    fn check_introspection(&self, answer: &Map<String, Value>, config: &OAuthConfig) -> Result<Identity, Error> {
        if answer.get("active") != Some(&Value::Bool(true)) {
            return Err(Error::Invalid("the token is not active".into()));
        }
        if answer
            .get("iss")
            .and_then(Value::as_str)
            .is_some_and(|iss| iss != self.config.issuer)
        {
            return Err(Error::Invalid("the token names another issuer".into()));
        }
        if !has_audience(answer.get("aud"), &config.audience) {
            return Err(Error::Invalid(format!(
                "the token is not for this resource ({})",
                config.audience
            )));
        }
        let now = jsonwebtoken::get_current_timestamp();
        let leeway = config.leeway.as_secs();
        if answer
            .get("exp")
            .and_then(Value::as_u64)
            .is_some_and(|exp| exp + leeway <= now)
        {
            return Err(Error::Invalid("the token has expired".into()));
        }
        if answer
            .get("nbf")
            .and_then(Value::as_u64)
            .is_some_and(|nbf| nbf > now + leeway)
        {
            return Err(Error::Invalid("the token is not valid yet (nbf)".into()));
        }
        identity(&self.config.issuer, answer, config)
    }
}

/// RFC 8414 first (the well-known segment goes before the issuer's path),
/// then OpenID Connect discovery (appended to it).
fn metadata_urls(issuer: &str) -> [String; 2] {
    let issuer = issuer.trim_end_matches('/');
    let (scheme, rest) = issuer.split_once("://").unwrap_or(("https", issuer));
    let (authority, path) = rest
        .split_once('/')
        .map_or((rest, String::new()), |(a, p)| (a, format!("/{p}")));
    [
        format!("{scheme}://{authority}/.well-known/oauth-authorization-server{path}"),
        format!("{issuer}/.well-known/openid-configuration"),
    ]
}

/// The signing key for `header` in `set`.
fn pick_key(set: &JwkSet, header: &Header) -> Option<Jwk> {
    let signs = |k: &&Jwk| {
        !matches!(k.common.public_key_use, Some(PublicKeyUse::Encryption))
            && k.common
                .key_algorithm
                .is_none_or(|a| a.to_string() == format!("{:?}", header.alg))
    };
    match &header.kid {
        Some(kid) => set
            .keys
            .iter()
            .filter(signs)
            .find(|k| k.common.key_id.as_deref() == Some(kid))
            .cloned(),
        None => {
            let mut fitting = set
                .keys
                .iter()
                .filter(signs)
                .filter(|k| DecodingKey::from_jwk(k).is_ok_and(|d| d.family() == header.alg.family()));
            match (fitting.next(), fitting.next()) {
                (Some(only), None) => Some(only.clone()),
                _ => None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_looked_up_the_rfc_8414_way_then_the_openid_way() {
        assert_eq!(
            metadata_urls("https://as.example.com"),
            [
                "https://as.example.com/.well-known/oauth-authorization-server",
                "https://as.example.com/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            metadata_urls("https://as.example.com/tenant/1/"),
            [
                "https://as.example.com/.well-known/oauth-authorization-server/tenant/1",
                "https://as.example.com/tenant/1/.well-known/openid-configuration"
            ]
        );
    }
}
