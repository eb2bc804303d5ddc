//! Tests of OAuth access tokens: JWTs against a JWKS, introspection, and the project they map to.

use super::*;
use config::oauth::{IssuerConfig, ProjectMap};

fn config() -> OAuthConfig {
    OAuthConfig {
        audience: "https://gw.example.com/mcp".into(),
        scopes: vec!["mcp:tools".into()],
        admin_scope: None,
        issuers: vec![IssuerConfig {
            issuer: "https://as.example.com".into(),
            algorithms: vec!["RS256".into()],
            jwks_refresh: std::time::Duration::from_secs(60),
            introspection: None,
        }],
        project_claim: Some("org".into()),
        groups_claim: "groups".into(),
        projects: vec![
            ProjectMap {
                project: "alpha".into(),
                issuer: None,
                subjects: vec!["alice".into()],
                groups: vec![],
            },
            ProjectMap {
                project: "beta".into(),
                issuer: Some("https://other.example.com".into()),
                subjects: vec![],
                groups: vec!["team-b".into()],
            },
        ],
        leeway: std::time::Duration::from_secs(30),
    }
}

fn who(subject: &str, groups: &[&str], org: Option<&str>) -> Identity {
    Identity {
        issuer: "https://as.example.com".into(),
        subject: subject.into(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        scopes: vec![],
        project: org.map(str::to_string),
    }
}

#[test]
fn subjects_groups_then_the_claim_map_to_projects() {
    let c = config();
    assert_eq!(project_for(&c, &who("alice", &[], Some("zeta"))), Some("alpha"));
    // The group entry is limited to another issuer.
    assert_eq!(project_for(&c, &who("bob", &["team-b"], None)), None);
    let mut other = who("bob", &["team-b"], None);
    other.issuer = "https://other.example.com".into();
    assert_eq!(project_for(&c, &other), Some("beta"));
    assert_eq!(project_for(&c, &who("carol", &[], Some("zeta"))), Some("zeta"));
    assert_eq!(
        project_for(&c, &who("carol", &[], None)),
        None,
        "no mapping, no project"
    );
}

#[test]
fn every_required_scope_must_be_granted() {
    let required = vec!["a".to_string(), "b".to_string()];
    assert_eq!(missing_scope(&required, &["b".into(), "a".into(), "c".into()]), None);
    assert_eq!(missing_scope(&required, &["a".into()]), Some("b"));
    assert_eq!(missing_scope(&[], &[]), None);
}

#[test]
fn claims_become_an_identity() {
    let c = config();
    let claims = serde_json::json!({"sub": "alice", "scope": "mcp:tools openid", "groups": ["x", "y"], "org": "acme"});
    let id = identity("https://as.example.com", claims.as_object().unwrap(), &c).unwrap();
    assert_eq!(id.scopes, ["mcp:tools", "openid"]);
    assert_eq!(id.groups, ["x", "y"]);
    assert_eq!(id.project.as_deref(), Some("acme"));
    let scp = serde_json::json!({"sub": "bob", "scp": ["mcp:tools"]});
    assert_eq!(
        identity("i", scp.as_object().unwrap(), &c).unwrap().scopes,
        ["mcp:tools"]
    );
    let anonymous = serde_json::json!({"scope": "mcp:tools"});
    assert!(matches!(
        identity("i", anonymous.as_object().unwrap(), &c),
        Err(Error::Invalid(_))
    ));
}

#[test]
fn audiences_are_a_string_or_a_list() {
    let aud = "https://gw.example.com/mcp";
    assert!(has_audience(Some(&json!(aud)), aud));
    assert!(has_audience(Some(&json!(["https://x", aud])), aud));
    assert!(!has_audience(Some(&json!("https://gw.example.com/mcp/other")), aud));
    assert!(!has_audience(None, aud));
}

#[test]
fn metadata_sits_before_the_resource_path() {
    assert_eq!(
        metadata_url("https://gw.example.com/mcp"),
        "https://gw.example.com/.well-known/oauth-protected-resource/mcp"
    );
    assert_eq!(
        metadata_url("http://127.0.0.1:8931/"),
        "http://127.0.0.1:8931/.well-known/oauth-protected-resource"
    );
}

#[test]
fn challenges_name_the_metadata_scopes_and_error() {
    let v = Verifier::new(config());
    assert_eq!(
        v.challenge(None),
        "Bearer resource_metadata=\"https://gw.example.com/.well-known/oauth-protected-resource/mcp\", scope=\"mcp:tools\""
    );
    assert!(
        v.challenge(Some(("invalid_token", "the \"token\" has expired")))
            .ends_with("error=\"invalid_token\", error_description=\"the 'token' has expired\"")
    );
}

#[tokio::test]
async fn unsigned_and_untrusted_tokens_are_refused_before_any_fetch() {
    let v = Verifier::new(config());
    let b64 =
        |v: serde_json::Value| base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, v.to_string());
    let claims = json!({"iss": "https://as.example.com", "sub": "alice", "aud": "https://gw.example.com/mcp", "exp": 4_000_000_000u64});
    let none = format!("{}.{}.", b64(json!({"alg": "none"})), b64(claims.clone()));
    assert!(matches!(v.verify(&none).await, Err(Error::Invalid(_))), "alg none");
    let hmac = format!("{}.{}.c2ln", b64(json!({"alg": "HS256"})), b64(claims));
    let err = v.verify(&hmac).await.unwrap_err().to_string();
    assert!(err.contains("HS256") && err.contains("not accepted"), "{err}");
    let foreign = json!({"iss": "https://evil.example.com", "sub": "alice"});
    let err = v
        .verify(&format!("{}.{}.c2ln", b64(json!({"alg": "RS256"})), b64(foreign)))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not trusted"), "{err}");
}
