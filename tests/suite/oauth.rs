//! Callers signed in with OAuth (MCP authorization): the real gateway in
//! front of real demo servers, tokens from a real authorization server
//! (`oidc-provider`), and the official TypeScript SDK as the client that
//! runs the whole sign-in with no human.

use crate::common;

use std::time::Duration;

use common::oauth::{Provider, jwt_provider, now, opaque_provider, other_provider, scripts};
use common::*;
use serde_json::{Value, json};

/// `[auth.oauth]` trusting `issuers`, alice → alpha (server `a`), the
/// `team-b` group → beta (server `b`), and two chaos demo servers.
fn config(url: &str, issuers: &str) -> String {
    format!(
        "[auth.oauth]\naudience = \"{url}\"\nscopes = [\"mcp:tools\"]\n{issuers}\n\
         [[auth.oauth.projects]]\nproject = \"alpha\"\nsubjects = [\"alice\", \"carol\"]\n\
         [[auth.oauth.projects]]\nproject = \"beta\"\ngroups = [\"team-b\"]\n\n{}{}",
        chaos_server("a", ""),
        chaos_server("b", "")
    )
}

fn jwt_issuer(p: &Provider) -> String {
    format!(
        "[[auth.oauth.issuers]]\nissuer = \"{}\"\njwks_refresh_ms = 300\n",
        p.issuer
    )
}

/// A gateway trusting `issuers`, with projects alpha (granted `a`) and beta (granted `b`).
async fn gateway(issuers: String) -> Gateway {
    let gw = Gateway::start_knowing_url(|url| config(url, &issuers)).await;
    for (project, server) in [("alpha", "a"), ("beta", "b")] {
        gw.cli(&["project", "create", project]);
        gw.cli(&["grant", "--project", project, "--server", server]);
    }
    gw
}

/// An `initialize` POSTed with `token`: the status and `WWW-Authenticate`.
async fn initialize(gw: &Gateway, token: Option<&str>) -> (u16, String) {
    let mut request = reqwest::Client::new()
        .post(&gw.url)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }
        }));
    if let Some(t) = token {
        request = request.bearer_auth(t);
    }
    let response = request.send().await.unwrap();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (response.status().as_u16(), challenge)
}

#[tokio::test]
#[ignore = "full tier: needs oidc-provider (scripts/setup)"]
async fn an_oauth_only_client_signs_in_through_the_authorization_server_and_uses_its_tools() {
    let provider = jwt_provider();
    let gw = gateway(jwt_issuer(provider)).await;
    // Alice is mapped to alpha, which sees server a only.
    let out = tokio::process::Command::new("node")
        .arg(scripts().join("client.mjs"))
        .args(["--url", &gw.url, "--login", "alice", "--scope", "mcp:tools"])
        .args([
            "--query",
            "echo the arguments",
            "--execute",
            "a:echo",
            "--args",
            r#"{"hello":"world"}"#,
        ])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "client failed: {stderr}\ngateway log:\n{}",
        gw.log()
    );
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    // The meta-tools, and the App of the one server (its echo).
    assert_eq!(answer["tools"], json!(["tool_discovery", "tool_execute", "a__echo"]));
    assert_eq!(
        answer["accessTokenAud"],
        json!(gw.url),
        "the SDK asked for this resource (RFC 8707)"
    );
    assert!(
        answer["registeredClientId"].as_str().is_some_and(|c| !c.is_empty()),
        "registered by DCR"
    );
    let keys: Vec<&str> = answer["discovery"]["structuredContent"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["toolKey"].as_str().unwrap())
        .collect();
    assert!(keys.contains(&"a:echo"), "{keys:?}");
    assert!(keys.iter().all(|k| k.starts_with("a:")), "alpha sees only a: {keys:?}");
    let echoed = &answer["execute"]["structuredContent"];
    assert_eq!(echoed["arguments"], json!({"hello": "world"}), "{answer}");
    // Invariant 7: the caller's token reaches no ordinary downstream.
    let seen = echoed.to_string();
    assert!(
        !seen.contains("eyJ") && !seen.contains("callerToken"),
        "a token reached the server: {echoed}"
    );

    // The audit log names the subject and issuer (its writer batches rows, so
    // they land a moment after the answer); no log line carries a token.
    eventually(Duration::from_secs(5), "the call's audit row", || async {
        let audit = String::from_utf8(gw.cli(&["audit", "tail", "--json"]).stdout).unwrap();
        (audit.contains("alice") && audit.contains(&provider.issuer)).then_some(())
    })
    .await;
    let log = gw.log();
    assert!(
        log.lines()
            .any(|l| l.contains("tool_execute") && l.contains("subject=\"alice\"")),
        "the call's log line names the subject:\n{log}"
    );
    assert!(!log.contains("eyJ"), "a JWT reached the log");
}

#[tokio::test]
#[ignore = "full tier: needs oidc-provider (scripts/setup)"]
async fn refused_tokens_get_the_status_and_challenge_the_spec_names() {
    let provider = jwt_provider();
    let gw = gateway(jwt_issuer(provider)).await;
    let aud = gw.url.as_str();
    let metadata_url = gw.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");

    // No token: 401 naming the metadata, which names the issuer.
    let (status, challenge) = initialize(&gw, None).await;
    assert_eq!(status, 401);
    assert!(
        challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{challenge}"
    );
    for url in [
        metadata_url.clone(),
        gw.url.replace("/mcp", "/.well-known/oauth-protected-resource"),
    ] {
        let metadata: Value = reqwest::get(&url).await.unwrap().json().await.unwrap();
        assert_eq!(metadata["resource"], json!(aud));
        assert_eq!(metadata["authorization_servers"], json!([provider.issuer]));
        assert_eq!(metadata["scopes_supported"], json!(["mcp:tools"]));
        assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));
    }

    let good = provider.token("alice", aud, "mcp:tools").await;
    assert_eq!(initialize(&gw, Some(&good)).await.0, 200, "{}", gw.log());

    let mut expired = provider.claims("alice", aud, "mcp:tools");
    expired["exp"] = json!(now() - 3600);
    let mut premature = provider.claims("alice", aud, "mcp:tools");
    premature["nbf"] = json!(now() + 3600);
    let mut foreign_iss = provider.claims("alice", aud, "mcp:tools");
    foreign_iss["iss"] = json!("https://attacker.example.com");
    // One signature byte changed (well inside it, so the base64 stays valid).
    let mut tampered = good.clone().into_bytes();
    let at = tampered.len() - 20;
    tampered[at] = if tampered[at] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    let (header, rest) = good.split_once('.').unwrap();
    let (payload, _) = rest.split_once('.').unwrap();
    let mut forged_payload: Value = serde_json::from_slice(
        &base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, payload).unwrap(),
    )
    .unwrap();
    forged_payload["sub"] = json!("mallory");
    let forged = format!(
        "{header}.{}.{}",
        base64::Engine::encode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            forged_payload.to_string()
        ),
        good.rsplit('.').next().unwrap()
    );
    let other = other_provider().token("alice", aud, "mcp:tools").await;
    let refused = [
        ("expired", provider.mint(expired).await, "expired"),
        ("not yet valid", provider.mint(premature).await, "not valid yet"),
        (
            "another audience",
            provider.token("alice", "http://127.0.0.1:1/mcp", "mcp:tools").await,
            "not for this resource",
        ),
        (
            "untrusted issuer claim",
            provider.mint(foreign_iss).await,
            "not trusted",
        ),
        ("an issuer the gateway does not trust", other, "not trusted"),
        ("tampered signature", tampered, "signature"),
        ("payload changed after signing", forged, "signature"),
        (
            "alg none",
            provider.mint_unsigned(provider.claims("alice", aud, "mcp:tools")).await,
            "invalid_token",
        ),
        ("garbage", "not-a-token".to_string(), "invalid_token"),
    ];
    for (what, token, needle) in refused {
        let (status, challenge) = initialize(&gw, Some(&token)).await;
        assert_eq!(status, 401, "{what}");
        assert!(challenge.contains("error=\"invalid_token\""), "{what}: {challenge}");
        assert!(challenge.contains(needle), "{what}: {challenge}");
        assert!(challenge.contains("resource_metadata="), "{what}: {challenge}");
    }

    // Valid, but without the scope: 403 insufficient_scope naming it.
    let unscoped = provider.token("alice", aud, "openid").await;
    let (status, challenge) = initialize(&gw, Some(&unscoped)).await;
    assert_eq!(status, 403);
    assert!(
        challenge.contains("error=\"insufficient_scope\"") && challenge.contains("scope=\"mcp:tools\""),
        "{challenge}"
    );

    // Valid, but mapped to no project: 403, never a default project.
    let stranger = provider.token("stranger", aud, "mcp:tools").await;
    assert_eq!(initialize(&gw, Some(&stranger)).await.0, 403);

    // Gateway tokens keep working beside OAuth.
    let token = gw.issue_token("beta");
    assert_eq!(initialize(&gw, Some(&token)).await.0, 200);
    assert!(!gw.log().contains("eyJ"), "a JWT reached the log");
}

#[tokio::test]
#[ignore = "full tier: needs oidc-provider (scripts/setup)"]
async fn signing_keys_rotate_without_a_restart() {
    // A provider of its own: rotating keys must not disturb the other tests.
    let provider = Box::leak(Box::new(common::oauth::Provider::start_own()));
    let gw = gateway(jwt_issuer(provider)).await;
    let aud = gw.url.clone();
    let old = provider.token("alice", &aud, "mcp:tools").await;
    assert_eq!(initialize(&gw, Some(&old)).await.0, 200, "{}", gw.log());

    provider.rotate().await;
    let new = provider.token("alice", &aud, "mcp:tools").await;
    assert_ne!(old.split('.').next(), new.split('.').next(), "signed with another kid");
    // The new key is fetched on its unknown kid (at most once per jwks_refresh_ms).
    eventually(
        Duration::from_secs(10),
        "a token signed by the new key is accepted",
        || async { (initialize(&gw, Some(&new)).await.0 == 200).then_some(()) },
    )
    .await;
    assert_eq!(
        initialize(&gw, Some(&old)).await.0,
        200,
        "the old key is still published"
    );

    provider.drop_old_keys().await;
    eventually(
        Duration::from_secs(10),
        "a token signed by a removed key is refused",
        || async { (initialize(&gw, Some(&old)).await.0 == 401).then_some(()) },
    )
    .await;
    assert_eq!(initialize(&gw, Some(&new)).await.0, 200);
}

#[tokio::test]
#[ignore = "full tier: needs oidc-provider (scripts/setup)"]
async fn two_oauth_subjects_in_two_projects_stay_isolated() {
    let provider = jwt_provider();
    let gw = gateway(jwt_issuer(provider)).await;
    let alice = provider.token("alice", &gw.url, "mcp:tools").await;
    // bob maps through his group claim.
    let mut bob_claims = provider.claims("bob", &gw.url, "mcp:tools");
    bob_claims["groups"] = json!(["team-b"]);
    let bob = provider.mint(bob_claims).await;
    let alice = gw.client_with_token(&alice).await.unwrap();
    let bob = gw.client_with_token(&bob).await.unwrap();
    wait_for_tool(&alice, "a:echo").await;
    wait_for_tool(&bob, "b:echo").await;

    for (client, mine, theirs) in [(&alice, "a", "b"), (&bob, "b", "a")] {
        let keys: Vec<String> = discover(client, json!("echo the arguments"))
            .await
            .iter()
            .map(|r| r["toolKey"].as_str().unwrap().to_string())
            .collect();
        assert!(keys.iter().all(|k| k.starts_with(&format!("{mine}:"))), "{keys:?}");
        let refused = execute(client, &format!("{theirs}:echo"), json!({})).await;
        let unknown = execute(client, "nosuch:echo", json!({})).await;
        assert_eq!(refused.is_error, Some(true));
        assert_eq!(
            text(&refused).replace(&format!("{theirs}:echo"), "K"),
            text(&unknown).replace("nosuch:echo", "K"),
            "another project's tool reads exactly as an unknown one"
        );
        assert_ne!(
            execute(client, &format!("{mine}:echo"), json!({})).await.is_error,
            Some(true)
        );
    }
}

/// A session is its OAuth subject's: carol, of alice's project, cannot use
/// alice's session; alice can, with any of her tokens.
#[tokio::test]
#[ignore = "full tier: needs oidc-provider (scripts/setup)"]
async fn a_session_is_its_subjects_even_within_a_project() {
    let provider = jwt_provider();
    let gw = gateway(jwt_issuer(provider)).await;
    let alice = provider.token("alice", &gw.url, "mcp:tools").await;
    let carol = provider.token("carol", &gw.url, "mcp:tools").await;
    let http = reqwest::Client::new();
    let post = |token: &str, session: Option<&str>, body: Value| {
        let mut r = http
            .post(&gw.url)
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .json(&body);
        if let Some(s) = session {
            r = r.header("mcp-session-id", s);
        }
        r.send()
    };
    let init = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }
    });
    let opened = post(&alice, None, init).await.unwrap();
    assert_eq!(opened.status(), 200);
    let session = opened.headers()["mcp-session-id"].to_str().unwrap().to_string();
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    let theirs = post(&carol, Some(&session), ping.clone()).await.unwrap();
    assert_eq!(theirs.status(), 404, "another subject of the same project");
    // A fresh token of alice's (another jti, the same subject) is still alice.
    let mut claims = provider.claims("alice", &gw.url, "mcp:tools");
    claims["jti"] = json!("alice-second-token");
    let again = provider.mint(claims).await;
    assert_ne!(again, alice);
    let mine = post(&again, Some(&session), ping).await.unwrap();
    assert_eq!(mine.status(), 200);
}

#[tokio::test]
#[ignore = "full tier: needs oidc-provider (scripts/setup)"]
async fn opaque_tokens_are_checked_by_introspection() {
    let provider = opaque_provider();
    let (id, secret) = register_introspection_client(provider).await;
    let issuer = format!(
        "[[auth.oauth.issuers]]\nissuer = \"{}\"\nintrospection = {{ client_id = \"{id}\", client_secret = \"{secret}\" }}\n",
        provider.issuer
    );
    let gw = gateway(issuer).await;
    // The SDK signs in as alice; the provider hands out an opaque token.
    let out = tokio::process::Command::new("node")
        .arg(scripts().join("client.mjs"))
        .args(["--url", &gw.url, "--login", "alice", "--scope", "mcp:tools"])
        .args(["--query", "echo", "--execute", "a:echo", "--args", "{}"])
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "client failed: {}\ngateway log:\n{}",
        String::from_utf8_lossy(&out.stderr),
        gw.log()
    );
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_ne!(answer["execute"]["isError"], json!(true), "{answer}");
    assert_eq!(initialize(&gw, Some("opaque-but-unknown")).await.0, 401);
}

/// A confidential client the gateway introspects with (dynamic registration).
async fn register_introspection_client(p: &Provider) -> (String, String) {
    let config: Value = reqwest::get(format!("{}/.well-known/openid-configuration", p.issuer))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let registered: Value = reqwest::Client::new()
        .post(config["registration_endpoint"].as_str().unwrap())
        .json(&json!({
            "client_name": "mcp-gateway introspection",
            "redirect_uris": ["http://127.0.0.1/unused"],
            "grant_types": ["client_credentials"],
            "response_types": [],
            "token_endpoint_auth_method": "client_secret_basic"
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    (
        registered["client_id"].as_str().unwrap().to_string(),
        registered["client_secret"].as_str().unwrap().to_string(),
    )
}
