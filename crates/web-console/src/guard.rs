//! Who may use the console: an admin token (`mcp-gateway token issue
//! --admin`), or an OAuth access token holding `[auth.oauth] admin_scope`.
//! Project tokens get 403.
//!
//! The page signs in once (`POST /console/api/session`) and then holds an
//! HttpOnly, SameSite=Strict session cookie; the token itself stays out of
//! the page's reach. Every change also needs the session's CSRF token in
//! `X-CSRF-Token` and a same-origin request. Scripts may instead send the
//! admin token as a bearer on each request (no cookie, so nothing to forge).
//! Sessions live in this process: a restart signs operators out.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::Digest;

use gateway::Gateway;
use gateway::operator::Actor;
use store::secrets::constant_time_eq;

/// The session cookie.
pub const COOKIE: &str = "mcpgw_console";
/// The header that carries the session's CSRF token on every change.
pub const CSRF_HEADER: &str = "x-csrf-token";
/// How long a session opened with an admin token lasts.
const ADMIN_SESSION: Duration = Duration::from_secs(12 * 3600);
/// How long one opened with an OAuth token lasts (the token may expire sooner
/// than the gateway can tell; an hour bounds that).
const OAUTH_SESSION: Duration = Duration::from_secs(3600);
/// Sessions kept at most; the oldest goes first.
const MAX_SESSIONS: usize = 1024;

/// An operator, as the console knows them for one request.
#[derive(Debug, Clone)]
pub(super) struct Admin {
    /// Who, for the admin log.
    pub actor: Actor,
}

/// Why a console request was refused.
#[derive(Debug, thiserror::Error)]
pub(super) enum Denied {
    /// No credential, or one that is unknown, revoked or expired.
    #[error("sign in with an admin token (mcp-gateway token issue --admin)")]
    NoCredential,
    /// A valid credential that is not an operator's.
    #[error("{0}")]
    NotAdmin(&'static str),
    /// A change from another origin, or without the session's CSRF token.
    #[error("{0}")]
    Forged(&'static str),
    /// The store could not answer.
    #[error("the store could not check the credential: {0}")]
    Store(#[from] store::Error),
}

impl IntoResponse for Denied {
    fn into_response(self) -> Response {
        let (status, code) = match &self {
            Denied::NoCredential => (StatusCode::UNAUTHORIZED, "UNAUTHORIZED"),
            Denied::NotAdmin(_) => (StatusCode::FORBIDDEN, "NOT_AN_ADMIN"),
            Denied::Forged(_) => (StatusCode::FORBIDDEN, "CROSS_SITE_REQUEST"),
            Denied::Store(_) => (StatusCode::SERVICE_UNAVAILABLE, "STORE_UNAVAILABLE"),
        };
        super::api::error(status, code, &self.to_string())
    }
}

struct Session {
    actor: Actor,
    csrf: String,
    expires: Instant,
}

/// Open console sessions, by the SHA-256 of their cookie value.
#[derive(Default)]
pub(super) struct Sessions(Mutex<HashMap<[u8; 32], Session>>);

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sessions")
    }
}

fn digest(value: &str) -> [u8; 32] {
    sha2::Sha256::digest(value.as_bytes()).into()
}

/// The value of cookie `name` in a `Cookie` header.
pub fn cookie<'a>(header: &'a str, name: &str) -> Option<&'a str> {
    header
        .split(';')
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// Whether a request comes from the console's own origin: a browser's
/// `Sec-Fetch-Site` says so, and an `Origin` header, when sent, names this
/// host. Requests without either (curl, scripts) are not a browser's forgery.
pub fn same_origin(origin: Option<&str>, host: Option<&str>, fetch_site: Option<&str>) -> bool {
    if fetch_site.is_some_and(|s| s != "same-origin" && s != "none") {
        return false;
    }
    match (origin, host) {
        (None, _) => true,
        (Some(origin), Some(host)) => {
            let rest = origin
                .strip_prefix("http://")
                .or_else(|| origin.strip_prefix("https://"));
            rest.is_some_and(|h| h.eq_ignore_ascii_case(host))
        }
        (Some(_), None) => false,
    }
}

fn text(headers: &HeaderMap, name: impl header::AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn check_origin(headers: &HeaderMap) -> Result<(), Denied> {
    let ok = same_origin(
        text(headers, header::ORIGIN),
        text(headers, header::HOST),
        text(headers, "sec-fetch-site"),
    );
    ok.then_some(())
        .ok_or(Denied::Forged("the console takes changes only from its own page"))
}

impl Sessions {
    /// Who `token` is, if an operator: an admin token, or an OAuth token
    /// with the admin scope. A project token is refused with 403.
    pub(super) async fn identify(gateway: &Gateway, token: &str) -> Result<(Actor, Duration), Denied> {
        let token = token.trim();
        if let Some(id) = gateway.store().authenticate_admin(token)? {
            return Ok((Actor::AdminToken(id), ADMIN_SESSION));
        }
        if gateway.store().authenticate(token)?.is_some() {
            return Err(Denied::NotAdmin(
                "a project token cannot open the console; use an admin token (mcp-gateway token issue --admin)",
            ));
        }
        let Some(verifier) = gateway.oauth() else {
            return Err(Denied::NoCredential);
        };
        let identity = match verifier.verify(token).await {
            Ok(identity) => identity,
            Err(oauth::Error::InsufficientScope(_)) => {
                return Err(Denied::NotAdmin("this OAuth token lacks a scope the gateway requires"));
            }
            Err(_) => return Err(Denied::NoCredential),
        };
        match &verifier.config().admin_scope {
            Some(scope) if identity.scopes.contains(scope) => Ok((
                Actor::OAuth {
                    issuer: identity.issuer,
                    subject: identity.subject,
                },
                OAUTH_SESSION,
            )),
            _ => Err(Denied::NotAdmin(
                "this OAuth token lacks the admin scope ([auth.oauth] admin_scope)",
            )),
        }
    }

    /// Opens a session for `token`: the cookie's value and the CSRF token.
    pub(super) async fn open(
        &self,
        gateway: &Gateway,
        headers: &HeaderMap,
        token: &str,
    ) -> Result<(Admin, String, String), Denied> {
        check_origin(headers)?;
        let (actor, lifetime) = Self::identify(gateway, token).await?;
        let fresh = || store::secrets::random_hex().expect("the OS has randomness");
        let (cookie, csrf) = (fresh(), fresh());
        let mut sessions = self.0.lock().expect("console sessions lock");
        let now = Instant::now();
        sessions.retain(|_, s| s.expires > now);
        if sessions.len() >= MAX_SESSIONS
            && let Some(oldest) = sessions.iter().min_by_key(|(_, s)| s.expires).map(|(k, _)| *k)
        {
            sessions.remove(&oldest);
        }
        sessions.insert(
            digest(&cookie),
            Session {
                actor: actor.clone(),
                csrf: csrf.clone(),
                expires: now + lifetime,
            },
        );
        Ok((Admin { actor }, cookie, csrf))
    }

    /// Ends the session the request carries.
    pub(super) fn close(&self, headers: &HeaderMap) {
        if let Some(value) = text(headers, header::COOKIE).and_then(|c| cookie(c, COOKIE)) {
            self.0.lock().expect("console sessions lock").remove(&digest(value));
        }
    }

    /// The operator behind a request, and the session's CSRF token when it
    /// came with a session. Changes (any method but GET) must be same-origin
    /// and, with a session, carry its CSRF token.
    pub(super) async fn admit(
        &self,
        gateway: &Gateway,
        method: &Method,
        headers: &HeaderMap,
    ) -> Result<(Admin, Option<String>), Denied> {
        let changes = method != Method::GET && method != Method::HEAD;
        if changes {
            check_origin(headers)?;
        }
        if let Some(token) = text(headers, header::AUTHORIZATION).and_then(gateway::auth::bearer) {
            let (actor, _) = Self::identify(gateway, token).await?;
            return Ok((Admin { actor }, None));
        }
        let value = text(headers, header::COOKIE)
            .and_then(|c| cookie(c, COOKIE))
            .ok_or(Denied::NoCredential)?;
        let key = digest(value);
        let (actor, csrf) = {
            let mut sessions = self.0.lock().expect("console sessions lock");
            match sessions.get(&key) {
                Some(s) if s.expires > Instant::now() => (s.actor.clone(), s.csrf.clone()),
                Some(_) => {
                    sessions.remove(&key);
                    return Err(Denied::NoCredential);
                }
                None => return Err(Denied::NoCredential),
            }
        };
        // A revoked admin token ends its sessions at their next request.
        if let Actor::AdminToken(id) = actor
            && !gateway.store().admin_token_live(id)?
        {
            self.0.lock().expect("console sessions lock").remove(&key);
            return Err(Denied::NoCredential);
        }
        if changes && !text(headers, CSRF_HEADER).is_some_and(|sent| constant_time_eq(sent.as_bytes(), csrf.as_bytes()))
        {
            return Err(Denied::Forged("missing or wrong X-CSRF-Token; reload the console"));
        }
        Ok((Admin { actor }, Some(csrf)))
    }
}

/// `Set-Cookie` for a new session (`None`: the one that ends it).
pub(super) fn set_cookie(value: Option<&str>) -> String {
    match value {
        Some(v) => format!(
            "{COOKIE}={v}; Path=/console; HttpOnly; SameSite=Strict; Max-Age={}",
            ADMIN_SESSION.as_secs()
        ),
        None => format!("{COOKIE}=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_are_found_by_exact_name() {
        let h = "a=1; mcpgw_console=abc; mcpgw_console_x=2";
        assert_eq!(cookie(h, COOKIE), Some("abc"));
        assert_eq!(cookie("mcpgw_console_x=2", COOKIE), None);
        assert_eq!(cookie("", COOKIE), None);
    }

    #[test]
    fn only_the_consoles_own_origin_may_change_things() {
        assert!(same_origin(
            Some("http://127.0.0.1:8080"),
            Some("127.0.0.1:8080"),
            Some("same-origin")
        ));
        assert!(
            same_origin(None, Some("127.0.0.1:8080"), None),
            "a script sends no Origin"
        );
        assert!(!same_origin(Some("http://evil.test"), Some("127.0.0.1:8080"), None));
        assert!(!same_origin(
            Some("http://127.0.0.1:8080.evil.test"),
            Some("127.0.0.1:8080"),
            None
        ));
        assert!(!same_origin(None, Some("127.0.0.1:8080"), Some("cross-site")));
        assert!(!same_origin(Some("null"), Some("127.0.0.1:8080"), None));
    }
}
