//! `mcp-gateway demo-server`: the demo server (the `demo` crate) on stdio,
//! or on streamable HTTP, optionally behind bearer tokens as an
//! OAuth-protected MCP server is (checked by the gateway's own verifier).

use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use sha2::Digest;

use demo::{Demo, SignedIn};

/// Runs the demo server on stdio, or on streamable HTTP at `http` (its address
/// is printed on stderr). With `session_idle`, HTTP serves only legacy
/// sessions and closes each after that long without requests. With
/// `require_jwt`, HTTP requires an access token from that issuer, as an
/// OAuth-protected MCP server does (401, RFC 9728 metadata).
pub(super) async fn serve(
    chaos: bool,
    conformance: bool,
    http: Option<std::net::SocketAddr>,
    session_idle: Option<Duration>,
    require_jwt: Option<String>,
) -> anyhow::Result<()> {
    let demo = Demo::new(chaos)
        .conformance(conformance)
        .legacy_only(session_idle.is_some());
    match http {
        None => {
            demo.serve(rmcp::transport::stdio()).await?.waiting().await?;
        }
        Some(addr) => {
            use rmcp::transport::streamable_http_server::StreamableHttpService;
            use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
            let mut sessions = LocalSessionManager::default();
            if session_idle.is_some() {
                sessions.session_config.keep_alive = session_idle;
            }
            let service: StreamableHttpService<Demo, LocalSessionManager> =
                StreamableHttpService::new(move || Ok(demo.clone()), Arc::new(sessions), Default::default());
            let listener = tokio::net::TcpListener::bind(addr).await?;
            let url = format!("http://{}/mcp", listener.local_addr()?);
            let mut app = axum::Router::new().nest_service("/mcp", service);
            if let Some(issuer) = require_jwt {
                app = protect(app, &url, &issuer)?;
            }
            eprintln!("listening on {url}");
            axum::serve(listener, app).await?;
        }
    }
    Ok(())
}

/// Puts `app` behind bearer tokens from `issuer` for the resource `url`,
/// checked by the gateway's own verifier (signature, `iss`, `aud`, expiry).
fn protect(app: axum::Router, url: &str, issuer: &str) -> anyhow::Result<axum::Router> {
    use axum::extract::{Request, State};
    use axum::middleware::Next;
    use axum::response::{IntoResponse, Response};

    let raw: config::oauth::RawOAuth = toml::from_str(&format!(
        // project_claim: config requires a way to a project; the demo has no projects and ignores it.
        "audience = {url:?}\nscopes = [\"mcp:tools\"]\nproject_claim = \"sub\"\n[[issuers]]\nissuer = {issuer:?}\n"
    ))?;
    let config =
        config::OAuthConfig::from_raw(raw).map_err(|(field, message)| anyhow::anyhow!("{field}: {message}"))?;
    let verifier = Arc::new(oauth::Verifier::new(config));
    let metadata = verifier.metadata();

    async fn guard(State(verifier): State<Arc<oauth::Verifier>>, mut request: Request, next: Next) -> Response {
        let token = request
            .headers()
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::to_string);
        let refused = |error: Option<(&str, &str)>| {
            (
                http::StatusCode::UNAUTHORIZED,
                [(http::header::WWW_AUTHENTICATE, verifier.challenge(error))],
            )
                .into_response()
        };
        let Some(token) = token else { return refused(None) };
        match verifier.verify(&token).await {
            Ok(identity) => {
                let digest = sha2::Sha256::digest(token.as_bytes());
                request.extensions_mut().insert(SignedIn {
                    subject: identity.subject,
                    token_id: vocab::text::hex(&digest[..6]),
                });
                next.run(request).await
            }
            Err(e) => refused(Some(("invalid_token", &e.to_string()))),
        }
    }

    let path = oauth::metadata_url(url);
    let path = path
        .split_once("://")
        .and_then(|(_, rest)| rest.find('/').map(|i| rest[i..].to_string()));
    let guarded = app.layer(axum::middleware::from_fn_with_state(verifier, guard));
    Ok(axum::Router::new()
        .route(
            &path.unwrap_or_else(|| "/.well-known/oauth-protected-resource".into()),
            axum::routing::get(move || async move { axum::Json(metadata) }),
        )
        .merge(guarded))
}
