//! OAuth sign-in of a project to a remote MCP server, as the MCP
//! authorization spec asks of a client, through rmcp's `auth` module:
//! the server's 401 leads to its protected-resource metadata (RFC 9728) and
//! its authorization server's metadata (RFC 8414); the client registers
//! dynamically (RFC 7591) unless `oauth.client_id` is configured; the
//! person signs in by authorization code with PKCE (S256) and a loopback
//! redirect; every token request names the server as `resource` (RFC 8707).
//! The tokens are sealed in the store for that project alone, and refreshed
//! before they expire (or when the server refuses one).

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationMetadataSource, AuthorizationRequest,
    AuthorizationSession, CredentialStore, OAuthClientConfig, StoredCredentials,
};
use tokio::net::TcpListener;

use super::Error;
use config::{Builtin, ServerConfig, Transport};
use credentials::{CredentialKind, CredentialRows, row_aad};
use store::Store;
use store::access::Project;
use store::secrets::Key;

/// Client name shown on the authorization server's consent page.
const CLIENT_NAME: &str = "mcp-gateway";

/// rmcp's credential store over one project's sealed `oauth` row for one server.
struct SealedSignIn {
    store: Arc<Store>,
    key: Arc<Key>,
    project_id: i64,
    server: String,
    /// Saves mark a new sign-in (`login`), not a refresh of the current one.
    renew: bool,
}

impl SealedSignIn {
    fn aad(&self) -> String {
        row_aad(self.project_id, &self.server, CredentialKind::OAuth, "")
    }
}

fn store_error(e: impl std::fmt::Display) -> AuthError {
    AuthError::CredentialStoreError(e.to_string())
}

#[async_trait::async_trait]
impl CredentialStore for SealedSignIn {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let Some(row) = self
            .store
            .credential(self.project_id, &self.server, CredentialKind::OAuth, "")
            .map_err(store_error)?
        else {
            return Ok(None);
        };
        let plain = self
            .key
            .open(&row.key_id, &self.aad(), &row.sealed)
            .map_err(store_error)?;
        serde_json::from_slice(&plain).map(Some).map_err(store_error)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let plain = serde_json::to_vec(&credentials).map_err(store_error)?;
        let sealed = self.key.seal(&self.aad(), &plain);
        self.store
            .put_credential(
                self.project_id,
                &self.server,
                CredentialKind::OAuth,
                "",
                self.key.id(),
                &sealed,
                self.renew,
            )
            .map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.store
            .remove_credential(self.project_id, &self.server, CredentialKind::OAuth, None)
            .map(|_| ())
            .map_err(store_error)
    }
}

/// Where a server's OAuth discovery starts: a `url` server's endpoint, or
/// the Index built-in's authorization server (`[index] oauth_issuer`).
pub fn base_url(server: &ServerConfig) -> Option<&str> {
    match &server.transport {
        Transport::Http { url, .. } => Some(url),
        Transport::Builtin(Builtin::Index(index)) => index.oauth_issuer.as_deref(),
        _ => None,
    }
}

async fn manager(
    store: &Arc<Store>,
    key: Arc<Key>,
    project: &Project,
    server: &ServerConfig,
    renew: bool,
) -> Result<AuthorizationManager, AuthError> {
    let base = base_url(server).ok_or_else(|| {
        AuthError::InternalError(format!(
            "'{}' is not a `url` server; only those sign in with OAuth",
            server.name
        ))
    })?;
    // Private addresses are fine: operators run MCP servers and identity providers inside their networks.
    let mut manager = AuthorizationManager::new_allowing_private_addresses(base).await?;
    manager.set_credential_store(SealedSignIn {
        store: store.clone(),
        key,
        project_id: project.id,
        server: server.name.clone(),
        renew,
    });
    Ok(manager)
}

/// An HTTP client that sends `project`'s access token for `server` and
/// refreshes it when due: for the project's own connection, and for
/// `fresh_token`. Discovers the authorization server once.
pub async fn client(
    store: &Arc<Store>,
    key: Arc<Key>,
    project: &Project,
    server: &ServerConfig,
) -> Result<AuthClient<reqwest::Client>, AuthError> {
    let mut manager = manager(store, key, project, server, false).await?;
    if !manager.initialize_from_store().await? {
        return Err(AuthError::AuthorizationRequired);
    }
    if let Some(oauth) = &server.oauth
        && let (Some(id), Some(secret)) = (&oauth.client_id, &oauth.client_secret)
    {
        // A confidential client authenticates its refreshes too.
        manager.configure_client(
            OAuthClientConfig::new(id.clone(), "http://127.0.0.1/callback").with_client_secret(secret.clone()),
        )?;
    }
    // The client every remote server gets: no idle connections, same-origin 307/308 redirects only.
    Ok(AuthClient::new(downstream::reqwest_client(), manager))
}

/// Maps rmcp's error for `project` at `server` to ours: what needs the
/// person again (a missing or refused sign-in), and what does not.
pub fn explain(e: AuthError, project: &str, server: &str) -> Error {
    let project = project.to_string();
    let server = server.to_string();
    match e {
        AuthError::AuthorizationRequired => Error::SignInRequired {
            project,
            server,
            why: "not signed in, or the sign-in expired and cannot be refreshed".into(),
        },
        AuthError::TokenRefreshRejected(why) => Error::SignInRequired {
            project,
            server,
            why: format!("the authorization server refused the refresh token: {why}"),
        },
        other => Error::SignIn {
            project,
            server,
            reason: other.to_string(),
        },
    }
}

/// A sign-in under way: the URL the person opens, and what finishes it.
pub struct Pending {
    session: AuthorizationSession,
    url: String,
    listener: TcpListener,
    project: String,
    server: String,
}

impl Pending {
    /// The authorization server's page to open.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Waits (up to `timeout`) for the browser to come back to the loopback
    /// redirect, then trades the code for tokens and seals them for the project.
    pub async fn finish(self, timeout: Duration) -> Result<(), Error> {
        let failed = |reason: String| Error::SignIn {
            project: self.project.clone(),
            server: self.server.clone(),
            reason,
        };
        let callback = tokio::time::timeout(timeout, redirect::wait(self.listener))
            .await
            .map_err(|_| failed(format!("no answer from the browser within {} s", timeout.as_secs())))?
            .map_err(|e| failed(format!("the loopback redirect failed: {e}")))?;
        self.session
            .handle_callback_url(&callback)
            .await
            .map(|_| ())
            .map_err(|e| failed(e.to_string()))
    }
}

/// Starts signing `project` in to `server`: discovery from the server's
/// 401, registration, and the authorization URL with PKCE and `resource`.
pub async fn begin(
    store: &Arc<Store>,
    key: Arc<Key>,
    project: &Project,
    server: &ServerConfig,
) -> Result<Pending, Error> {
    let failed = |reason: String| Error::SignIn {
        project: project.name.clone(),
        server: server.name.clone(),
        reason,
    };
    let listener = TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| failed(format!("cannot listen on loopback for the redirect: {e}")))?;
    let port = listener.local_addr().map_err(|e| failed(e.to_string()))?.port();
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");
    let mut manager = manager(store, key, project, server, true)
        .await
        .map_err(|e| failed(e.to_string()))?;
    let challenge = match &server.transport {
        Transport::Http { url, .. } => challenge(url).await.map_err(failed)?,
        _ => None,
    };
    let resolution = manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await
        .map_err(|e| failed(format!("cannot discover its authorization server: {e}")))?;
    if resolution.source == AuthorizationMetadataSource::LegacyEndpointFallback {
        return Err(failed(
            "it publishes no OAuth metadata (RFC 9728 or RFC 8414), so it does not take OAuth sign-ins".into(),
        ));
    }
    manager.set_metadata(resolution.metadata);
    let mut request = AuthorizationRequest::new(&redirect_uri).with_client_name(CLIENT_NAME);
    if let Some(challenge) = challenge {
        request = request.with_challenge(challenge);
    }
    if let Some(oauth) = &server.oauth {
        if !oauth.scopes.is_empty() {
            request = request.with_scopes(oauth.scopes.iter().cloned());
        }
        if let Some(id) = &oauth.client_id {
            request = request.with_preregistered_client(id.clone());
        }
        if let Some(secret) = &oauth.client_secret {
            request = request.with_client_secret(secret.clone());
        }
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| failed(e.to_string()))?;
    let url = with_consent_for_offline_access(session.get_authorization_url());
    Ok(Pending {
        session,
        url,
        listener,
        project: project.name.clone(),
        server: server.name.clone(),
    })
}

/// OpenID Connect grants `offline_access` (a refresh token) only with
/// `prompt=consent` (Core §11), and providers such as oidc-provider drop
/// the scope without it; rmcp asks for the scope but not the prompt.
fn with_consent_for_offline_access(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else {
        return url.to_string();
    };
    let pairs: Vec<(String, String)> = parsed.query_pairs().into_owned().collect();
    let offline = pairs
        .iter()
        .any(|(k, v)| k == "scope" && v.split(' ').any(|s| s == "offline_access"));
    if offline && !pairs.iter().any(|(k, _)| k == "prompt") {
        parsed.query_pairs_mut().append_pair("prompt", "consent");
    }
    parsed.into()
}

/// The `WWW-Authenticate` of the server's 401 to an unauthenticated
/// request, if it answers with one (the start of MCP authorization).
async fn challenge(url: &str) -> Result<Option<String>, String> {
    let probe = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")}}
    });
    let response = reqwest::Client::new()
        .post(url)
        .header(http::header::ACCEPT, "application/json, text/event-stream")
        .json(&probe)
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .map_err(|e| vocab::mask::urls_in(&format!("cannot reach {url}: {e}")))?;
    if response.status() != http::StatusCode::UNAUTHORIZED {
        return Ok(None);
    }
    Ok(response
        .headers()
        .get(http::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string))
}

/// The loopback end of the redirect: one request to `/callback`.
mod redirect {
    use axum::extract::State;
    use axum::http::Uri;
    use axum::response::Html;
    use tokio::net::TcpListener;
    use tokio::sync::mpsc;

    /// Serves until the authorization server sends the browser back; the full callback URL.
    pub(super) async fn wait(listener: TcpListener) -> std::io::Result<String> {
        let base = format!("http://{}", listener.local_addr()?);
        let (tx, mut rx) = mpsc::channel::<String>(1);
        let app = axum::Router::new()
            .route("/callback", axum::routing::get(arrived))
            .with_state(tx);
        let server = axum::serve(listener, app);
        tokio::select! {
            served = server => served.and(Err(std::io::Error::other("the redirect listener stopped"))),
            query = rx.recv() => Ok(format!("{base}{}", query.unwrap_or_default())),
        }
    }

    async fn arrived(State(tx): State<mpsc::Sender<String>>, uri: Uri) -> Html<&'static str> {
        let _ = tx.send(uri.to_string()).await;
        Html(
            "<!doctype html><meta charset=utf-8><title>mcp-gateway</title><p>Signed in. You can close this tab and go back to the terminal.</p>",
        )
    }
}

/// What `login --status` shows of one sign-in. Never a token.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// The project's name.
    pub project: String,
    /// The server.
    pub server: String,
    /// `signedIn`, `expired` (refreshes on the next call), or `signInRequired`.
    pub state: &'static str,
    /// When the access token expires (RFC 3339), if the server said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Whether a refresh token is held.
    pub refreshable: bool,
    /// When `login` completed.
    pub signed_in_at: String,
    /// The authorization server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
}

/// The state of `project`'s sign-in to `server`, read from its sealed row.
pub fn status(
    key: &Key,
    project: &Project,
    server: &str,
    row: &credentials::SealedCredential,
) -> Result<Status, Error> {
    let aad = row_aad(project.id, server, CredentialKind::OAuth, "");
    let sealed = |source| Error::Sealed {
        project: project.name.clone(),
        server: server.to_string(),
        source,
    };
    let plain = key.open(&row.key_id, &aad, &row.sealed).map_err(sealed)?;
    let stored: StoredCredentials =
        serde_json::from_slice(&plain).map_err(|_| sealed(store::secrets::Error::Corrupt))?;
    // The token response as JSON: its standard fields, whatever type oauth2 gives them.
    let token = serde_json::to_value(&stored.token_response).unwrap_or_default();
    let refreshable = token.get("refresh_token").is_some_and(|t| !t.is_null());
    let expires = match (
        token.get("expires_in").and_then(|v| v.as_u64()),
        stored.token_received_at,
    ) {
        (Some(lifetime), Some(received)) => chrono::DateTime::from_timestamp((received + lifetime) as i64, 0),
        _ => None,
    };
    let expired = expires.is_some_and(|at| at <= chrono::Utc::now());
    let state = match (token.is_null(), expired, refreshable) {
        (true, _, _) => "signInRequired",
        (false, false, _) => "signedIn",
        (false, true, true) => "expired",
        (false, true, false) => "signInRequired",
    };
    Ok(Status {
        project: project.name.clone(),
        server: server.to_string(),
        state,
        expires_at: expires.map(|at| at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
        refreshable,
        signed_in_at: row.set_at.clone(),
        issuer: stored.issuer,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offline_access_asks_for_consent_once() {
        let url = with_consent_for_offline_access("https://as.example/auth?scope=mcp%3Atools+offline_access&state=s");
        assert!(url.ends_with("&prompt=consent"), "{url}");
        let kept = "https://as.example/auth?scope=mcp%3Atools&state=s";
        assert_eq!(with_consent_for_offline_access(kept), kept);
        let asked = "https://as.example/auth?scope=offline_access&prompt=login";
        assert_eq!(with_consent_for_offline_access(asked), asked);
    }
}
