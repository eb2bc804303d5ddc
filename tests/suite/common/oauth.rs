//! A real OAuth authorization server for the tests: `oidc-provider` (npm)
//! run by `tests/oauth/provider.mjs`, one per test binary and kind (JWT or
//! opaque access tokens), stopped when the test binary exits (its stdin closes).
#![allow(dead_code)] // each test binary and bench uses a different part

use std::io::BufRead;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;

use serde_json::{Value, json};

/// A running provider.
pub(crate) struct Provider {
    /// `http://127.0.0.1:PORT`, exactly as tokens carry it in `iss`.
    pub issuer: String,
    _child: Child,
    _stdin: ChildStdin,
}

/// The provider issuing JWT access tokens.
pub(crate) fn jwt_provider() -> &'static Provider {
    static P: OnceLock<Provider> = OnceLock::new();
    P.get_or_init(|| Provider::start(&[]))
}

/// A second, separate provider (another issuer, its own keys).
pub(crate) fn other_provider() -> &'static Provider {
    static P: OnceLock<Provider> = OnceLock::new();
    P.get_or_init(|| Provider::start(&[]))
}

/// The provider issuing opaque access tokens (checked by introspection).
pub(crate) fn opaque_provider() -> &'static Provider {
    static P: OnceLock<Provider> = OnceLock::new();
    P.get_or_init(|| Provider::start(&["--format", "opaque"]))
}

/// A provider whose access tokens live 20 s: rmcp refreshes a token with
/// under 30 s left, so every call through a sign-in refreshes first.
pub(crate) fn short_lived_provider() -> &'static Provider {
    static P: OnceLock<Provider> = OnceLock::new();
    P.get_or_init(|| Provider::start(&["--access-ttl", "20"]))
}

/// The folder of the node scripts.
pub(crate) fn scripts() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oauth")
}

fn log_file() -> Stdio {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    match std::fs::File::create(dir.join(format!("oidc-provider-{}.log", std::process::id()))) {
        Ok(f) => f.into(),
        Err(_) => Stdio::null(),
    }
}

/// Seconds since the epoch.
pub(crate) fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

impl Provider {
    /// A provider of the caller's own (for tests that change its keys).
    pub(crate) fn start_own() -> Provider {
        Self::start(&[])
    }

    fn start(args: &[&str]) -> Provider {
        let dir = scripts();
        assert!(
            dir.join("node_modules/oidc-provider").is_dir(),
            "tests/oauth/node_modules is missing: run scripts/setup"
        );
        let mut child = Command::new("node")
            .arg(dir.join("provider.mjs"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // Its log, for a failing test: target/oidc-provider-PID.log.
            .stderr(log_file())
            .spawn()
            .expect("node runs tests/oauth/provider.mjs");
        let stdin = child.stdin.take().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let ready: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("provider said {line:?}: {e}"));
        Provider {
            issuer: ready["issuer"].as_str().unwrap().to_string(),
            _child: child,
            _stdin: stdin,
        }
    }

    async fn admin(&self, path: &str, body: Value) -> Value {
        let response = reqwest::Client::new()
            .post(format!("{}/test/{path}", self.issuer))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success(), "/test/{path}: {}", response.status());
        response.json().await.unwrap()
    }

    /// A JWT with exactly `claims`, signed with the provider's current key
    /// (or `kid`); `alg: "none"` gives an unsigned one.
    pub(crate) async fn mint(&self, claims: Value) -> String {
        self.admin("mint", json!({ "claims": claims })).await["token"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// An unsigned (`alg: none`) token with `claims`.
    pub(crate) async fn mint_unsigned(&self, claims: Value) -> String {
        self.admin("mint", json!({ "claims": claims, "alg": "none" })).await["token"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// The claims of an ordinary access token for `subject` at `audience`.
    pub(crate) fn claims(&self, subject: &str, audience: &str, scope: &str) -> Value {
        json!({
            "iss": self.issuer, "sub": subject, "aud": audience, "scope": scope,
            "iat": now(), "exp": now() + 600, "jti": format!("{subject}-{}", now()),
        })
    }

    /// A valid token for `subject` at `audience` with `scope`.
    pub(crate) async fn token(&self, subject: &str, audience: &str, scope: &str) -> String {
        self.mint(self.claims(subject, audience, scope)).await
    }

    /// Adds a signing key that signs from now on; the old ones stay published.
    pub(crate) async fn rotate(&self) -> String {
        self.admin("rotate", json!({})).await["kid"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Unpublishes every key but the newest.
    pub(crate) async fn drop_old_keys(&self) {
        self.admin("drop-old", json!({})).await;
    }

    /// Revokes every grant `login` made, as an administrator would: their refresh tokens stop working.
    pub(crate) async fn revoke(&self, login: &str) {
        self.admin("revoke", json!({ "login": login })).await;
    }
}
