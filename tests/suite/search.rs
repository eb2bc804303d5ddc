//! Cloud search with BM25 fallback, against a fake Cloud Search API on
//! loopback that follows the seed's `POST /catalog/search` contract and can
//! answer well, slowly, with 500s, with garbage, or with tools the caller may
//! not see.

use crate::common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use common::*;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Good,
    Slow,
    Error,
    Garbage,
    Foreign,
}

/// Each request the fake received: its Authorization header and body.
type Seen = Vec<(Option<String>, Value)>;

#[derive(Clone)]
struct Fake {
    mode: Arc<Mutex<Mode>>,
    requests: Arc<Mutex<Seen>>,
}

/// Scores each offered tool by the query words its name and description contain.
fn good_answer(request: &Value) -> Value {
    let words: Vec<String> = request["query"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|q| {
            q.as_str()
                .unwrap()
                .to_lowercase()
                .split_whitespace()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    let mut scored: Vec<(f64, &Value)> = request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let text = format!("{} {}", t["toolName"], t["description"]).to_lowercase();
            (words.iter().filter(|w| text.contains(w.as_str())).count() as f64, t)
        })
        .filter(|(s, _)| *s > 0.0)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let top = scored.first().map_or(1.0, |s| s.0);
    let max = request["maxResults"].as_u64().unwrap_or(10) as usize;
    let results: Vec<Value> = scored
        .iter()
        .take(max)
        .map(|(s, t)| {
            json!({
                "toolKey": t["toolKey"], "toolName": t["toolName"], "serverName": t["serverName"],
                "description": t["description"], "relevance": s / top, "explanation": "picked by the cloud"
            })
        })
        .collect();
    json!({ "results": results })
}

async fn catalog_search(State(fake): State<Fake>, headers: HeaderMap, body: String) -> axum::response::Response {
    let request: Value = serde_json::from_str(&body).unwrap();
    let auth = headers.get("authorization").map(|v| v.to_str().unwrap().to_string());
    fake.requests.lock().unwrap().push((auth, request.clone()));
    let mode = *fake.mode.lock().unwrap();
    match mode {
        Mode::Good => axum::Json(good_answer(&request)).into_response(),
        Mode::Slow => {
            tokio::time::sleep(Duration::from_secs(3)).await;
            axum::Json(good_answer(&request)).into_response()
        }
        Mode::Error => (axum::http::StatusCode::INTERNAL_SERVER_ERROR, "boom").into_response(),
        Mode::Garbage => "<html>not json".into_response(),
        Mode::Foreign => axum::Json(json!({"results": [
            {"toolKey": "secret:drop_everything", "toolName": "drop_everything", "serverName": "secret", "relevance": 1.0}
        ]}))
        .into_response(),
    }
}

async fn start_fake() -> (String, Fake) {
    let fake = Fake {
        mode: Arc::new(Mutex::new(Mode::Good)),
        requests: Arc::default(),
    };
    let app = axum::Router::new()
        .route("/catalog/search", axum::routing::post(catalog_search))
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, fake)
}

/// A gateway whose project `p` (granted red only) searches with the cloud.
async fn gateway_with_cloud(url: &str) -> (Gateway, String) {
    let config = format!(
        "[search.cloud]\nurl = \"{url}\"\ntoken = \"cloud-secret\"\ntimeout_ms = 500\n\n{}{}",
        chaos_server("red", ""),
        chaos_server("blue", "")
    );
    let gw = Gateway::start(&config).await;
    gw.cli(&["project", "create", "p", "--search", "cloud"]);
    gw.cli(&["grant", "--project", "p", "--server", "red"]);
    let token = gw.issue_token("p");
    (gw, token)
}

async fn ask(client: &rmcp::service::RunningService<rmcp::RoleClient, ()>) -> (Value, Duration) {
    let started = Instant::now();
    let r = call(
        client,
        "tool_discovery",
        json!({"query": "hash text sha256", "maxResults": 3}),
    )
    .await;
    (r.structured_content.unwrap(), started.elapsed())
}

#[tokio::test]
async fn the_cloud_answers_and_every_fault_falls_back_to_bm25() {
    let (url, fake) = start_fake().await;
    let (gw, token) = gateway_with_cloud(&url).await;
    let client = gw.client_with_token(&token).await.unwrap();
    let (good, _) = eventually(Duration::from_secs(20), "red's tools", || async {
        let (s, t) = ask(&client).await;
        (s["results"].as_array().is_some_and(|r| !r.is_empty())).then_some((s, t))
    })
    .await;
    assert_eq!(good["provider"], "cloud", "{good}");
    assert_eq!(good["results"][0]["toolKey"], "red:sha256");
    {
        let requests = fake.requests.lock().unwrap();
        let (auth, body) = requests.last().unwrap();
        assert_eq!(auth.as_deref(), Some("Bearer cloud-secret"));
        let offered: Vec<&str> = body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["toolKey"].as_str().unwrap())
            .collect();
        assert!(
            !offered.is_empty() && offered.iter().all(|k| k.starts_with("red:")),
            "only the caller's tools: {offered:?}"
        );
        assert_eq!(body["query"], json!(["hash text sha256"]));
        assert_eq!(body["maxResults"], 3);
    }
    // Operators see why: the cloud's reason.
    let explained = gw.explained("p", json!("hash text sha256")).await;
    assert_eq!(explained[0]["explanation"], "picked by the cloud");

    for (mode, reason) in [
        (Mode::Slow, "no answer within 500 ms"),
        (Mode::Error, "HTTP 500"),
        (Mode::Garbage, "not a search response"),
    ] {
        *fake.mode.lock().unwrap() = mode;
        let (s, took) = ask(&client).await;
        assert_eq!(s["provider"], "bm25", "{mode:?}: {s}");
        assert!(s["notice"].as_str().unwrap().contains(reason), "{mode:?}: {s}");
        assert_eq!(s["results"][0]["toolKey"], "red:sha256", "BM25 still finds it");
        assert!(took < Duration::from_secs(2), "{mode:?} took {took:?}");
    }

    // Three failures in a row open the circuit: the cloud is skipped, not waited for.
    *fake.mode.lock().unwrap() = Mode::Slow;
    let before = fake.requests.lock().unwrap().len();
    let (s, took) = ask(&client).await;
    assert!(s["notice"].as_str().unwrap().contains("skipped"), "{s}");
    assert!(
        took < Duration::from_millis(400),
        "an open circuit answers at once: {took:?}"
    );
    assert_eq!(
        fake.requests.lock().unwrap().len(),
        before,
        "no request while the circuit is open"
    );
}

#[tokio::test]
async fn a_cloud_answer_with_tools_outside_the_callers_list_is_refused() {
    let (url, fake) = start_fake().await;
    let (gw, token) = gateway_with_cloud(&url).await;
    let client = gw.client_with_token(&token).await.unwrap();
    *fake.mode.lock().unwrap() = Mode::Foreign;
    let s = eventually(Duration::from_secs(20), "red's tools", || async {
        let (s, _) = ask(&client).await;
        (s["results"].as_array().is_some_and(|r| !r.is_empty())).then_some(s)
    })
    .await;
    assert_eq!(s["provider"], "bm25");
    assert!(
        s["notice"].as_str().unwrap().contains("outside the caller's list"),
        "{s}"
    );
    let keys: Vec<&str> = s["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["toolKey"].as_str().unwrap())
        .collect();
    assert!(keys.iter().all(|k| k.starts_with("red:")), "{keys:?}");

    // A good answer after failures closes the circuit again.
    *fake.mode.lock().unwrap() = Mode::Good;
    let (s, _) = ask(&client).await;
    assert_eq!(s["provider"], "cloud", "{s}");
}

#[tokio::test]
async fn bm25_results_explain_themselves() {
    let gw = Gateway::start(&format!("{ANONYMOUS}{}", chaos_server("red", ""))).await;
    let client = gw.client().await;
    let results = eventually(Duration::from_secs(20), "red's tools", || async {
        let r = discover(&client, json!("convert a temperature from celsius")).await;
        (!r.is_empty()).then_some(r)
    })
    .await;
    assert_eq!(results[0]["toolKey"], "red:convert_temperature");
    let results = gw.explained("local", json!("convert a temperature from celsius")).await;
    let why = results[0]["explanation"].as_str().unwrap();
    assert!(why.contains("temperatur: name, description"), "{why}");
}

/// `tool_discovery` narrowed to servers (seed 004's server-specific
/// filtering) finds only their tools; a server the caller has no tool of is
/// refused naming those it has, and so is a list past the bound.
#[tokio::test]
async fn discovery_narrowed_to_servers_finds_only_theirs() {
    let gw = Gateway::start(&two_servers()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "alpha:calculate").await;
    wait_for_tool(&client, "beta:calculate").await;
    let keys = |r: &CallToolResult| -> Vec<String> {
        r.structured_content.as_ref().unwrap()["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["toolKey"].as_str().unwrap().to_string())
            .collect()
    };
    let ask = |servers: Value| {
        call(
            &client,
            "tool_discovery",
            json!({ "query": "calculate", "servers": servers }),
        )
    };
    let everywhere = keys(&ask(Value::Null).await);
    assert!(everywhere.iter().any(|k| k.starts_with("alpha:")) && everywhere.iter().any(|k| k.starts_with("beta:")));
    assert_eq!(keys(&ask(json!([])).await), everywhere, "an empty list is every server");
    let beta = keys(&ask(json!(["beta"])).await);
    assert!(
        !beta.is_empty() && beta.iter().all(|k| k.starts_with("beta:")),
        "{beta:?}"
    );

    let unknown = ask(json!(["beta", "gamma"])).await;
    assert_eq!(unknown.is_error, Some(true));
    assert!(
        text(&unknown).contains("no server 'gamma' among those you can use now: alpha, beta"),
        "{}",
        text(&unknown)
    );
    let many: Vec<String> = (0..33).map(|i| format!("s{i}")).collect();
    let too_many = ask(json!(many)).await;
    assert!(text(&too_many).contains("at most 32 servers"), "{}", text(&too_many));
    let long = ask(json!(["x".repeat(300)])).await;
    assert_eq!(long.is_error, Some(true), "{long:?}");
    assert!(
        !text(&long).contains(&"x".repeat(300)),
        "a caller's long string is not echoed whole"
    );
}

/// `mcp-gateway search --hidden` shows an operator the matches a project
/// cannot see, each with why: a rule, or a missing grant.
#[tokio::test]
async fn an_operator_search_shows_hidden_tools_and_why() {
    let other = chaos_server("other", "");
    let rules = "[[rules]]\npattern = [\"sha256\"]\nserver = \"alpha\"\nenabled = false\n";
    let gw = Gateway::start(&format!("{}{other}{rules}", chaos_server("alpha", ""))).await;
    gw.cli(&["project", "create", "ops", "--search", "bm25"]);
    gw.cli(&["grant", "--project", "ops", "--server", "alpha"]);
    let out = gw.cli(&[
        "search",
        "compute a sha256 hash of text",
        "--project",
        "ops",
        "--hidden",
        "--json",
    ]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let answered: Vec<&str> = report["answer"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["toolKey"].as_str().unwrap())
        .collect();
    assert!(
        answered.iter().all(|k| k.starts_with("alpha:") && *k != "alpha:sha256"),
        "{answered:?}"
    );
    let hidden: HashMap<&str, &str> = report["hidden"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["toolKey"].as_str().unwrap(), h["hidden"].as_str().unwrap()))
        .collect();
    assert_eq!(
        hidden.get("alpha:sha256"),
        Some(&"rules[0] in gateway.toml disables it"),
        "{report}"
    );
    assert_eq!(
        hidden.get("other:sha256"),
        Some(&"project 'ops' is not granted server 'other'"),
        "{report}"
    );
    // Narrowed to one server, the hidden list is too; and the text says the
    // same (`search --hidden` for ops narrowed to `server`: stdout, stderr).
    let narrowed = |server: &str| {
        let out = gw.cli(&[
            "search",
            "compute a sha256 hash",
            "--project",
            "ops",
            "--hidden",
            "-s",
            server,
        ]);
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (text, _) = narrowed("alpha");
    assert!(text.contains("hidden from project 'ops':"), "{text}");
    assert!(text.contains("alpha:sha256") && !text.contains("other:"), "{text}");
    assert!(text.contains("hidden: rules[0] in gateway.toml disables it"), "{text}");
    // Narrowed to a server the project has no tool of: its discovery is refused, and the reason shown.
    let (text, told) = narrowed("other");
    assert!(
        told.contains("no server 'other' among those you can use now: alpha"),
        "{told}"
    );
    assert!(
        text.contains("hidden: project 'ops' is not granted server 'other'"),
        "{text}"
    );
}
