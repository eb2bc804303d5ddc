//! The discovery widget end to end: the gateway serves it as an MCP resource
//! (in the form each host renders) and over HTTP with cache headers, and the
//! built page renders a real `discover_filter` result in headless Chromium
//! (widgets/test/widget.test.mjs, run by node with playwright-core).

use crate::common;
use crate::fake_index;

use std::time::Duration;

use common::*;
use fake_index::{FakeIndex, INTENT_A, INTENT_B};
use rmcp::ServiceExt;
use rmcp::model::{ClientCapabilities, ClientConfig, ReadResourceRequestParams, ResourceContents};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};

/// The discovery widget as a client sees it: listed Apps are in their server's namespace.
const WIDGET_URI: &str = "ui://mcp-gateway/index/widget/index-discover@v1.html";

fn node(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    std::process::Command::new("node")
        .args(args)
        .current_dir(repo_path("widgets"))
        .envs(env.iter().copied())
        .output()
        .expect("node runs (scripts/setup installs the widget test tools)")
}

#[test]
#[ignore = "full tier: needs Node.js and esbuild (scripts/setup)"]
fn the_committed_widget_build_matches_its_sources() {
    let out = node(&["build.mjs", "--check"], &[]);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn mime_and_text(contents: &ResourceContents) -> (String, String) {
    match contents {
        ResourceContents::TextResourceContents { mime_type, text, .. } => (mime_type.clone().unwrap(), text.clone()),
        other => panic!("expected text contents, got {other:?}"),
    }
}

/// A gateway before a fake Index API of 8 people, whose project `p` may use
/// `index`, and the token of the Index user `me`, signed in.
async fn signed_in_gateway() -> (FakeIndex, Gateway, String) {
    let fake = FakeIndex::start(8).await;
    let index_as = common::oauth::jwt_provider();
    let gw = Gateway::start_knowing_url(|url| {
        format!(
            "{ANONYMOUS}{}",
            fake.signed_in_config(url, &index_as.issuer, &[], "me", "")
        )
    })
    .await;
    gw.cli(&["project", "create", "p"]);
    gw.cli(&["grant", "--project", "p", "--server", "index"]);
    let token = index_as.token("me", &gw.url, "mcp:tools privy:token:exchange").await;
    (fake, gw, token)
}

#[tokio::test]
#[ignore = "full tier: needs oidc-provider, Node.js and Chromium (scripts/setup)"]
async fn the_widget_is_served_to_both_hosts_and_renders_a_real_result_in_chromium() {
    let (_fake, gw, token) = signed_in_gateway().await;
    let client = gw.client_with_token(&token).await.unwrap();
    let result = eventually(Duration::from_secs(10), "a discover_filter result", || async {
        let r = execute(
            &client,
            "index:discover_filter",
            json!({ "intentIds": [INTENT_A, INTENT_B], "limit": 3 }),
        )
        .await;
        (r.is_error != Some(true)).then_some(r)
    })
    .await;

    // A client without the MCP Apps extension gets the ChatGPT form...
    let listed = client.list_all_resources().await.unwrap();
    let entry = listed
        .iter()
        .find(|r| r.uri == WIDGET_URI)
        .expect("the widget is listed");
    assert_eq!(entry.mime_type.as_deref(), Some("text/html;profile=mcp-app"));
    let read = client
        .read_resource(ReadResourceRequestParams::new(WIDGET_URI))
        .await
        .unwrap();
    let (mime, page) = mime_and_text(&read.contents[0]);
    assert_eq!(mime, "text/html+skybridge");
    assert_eq!(
        page,
        std::fs::read_to_string(repo_path("widgets/dist/index-discover.inline.html")).unwrap()
    );
    // ...one that advertises it gets the MCP Apps form, with the ui keys.
    let mut caps = ClientCapabilities::default();
    caps.extensions = Some(
        [(
            "io.modelcontextprotocol/ui".to_string(),
            json!({ "mimeTypes": ["text/html;profile=mcp-app"] })
                .as_object()
                .unwrap()
                .clone(),
        )]
        .into(),
    );
    let mut info = ClientConfig::default();
    info.capabilities = caps;
    let apps_client = info
        .serve(StreamableHttpClientTransport::from_uri(gw.url.as_str()))
        .await
        .unwrap();
    let read = apps_client
        .read_resource(ReadResourceRequestParams::new(WIDGET_URI))
        .await
        .unwrap();
    let (mime, _) = mime_and_text(&read.contents[0]);
    assert_eq!(mime, "text/html;profile=mcp-app");
    let meta = serde_json::to_value(&read.contents[0]).unwrap()["_meta"].clone();
    assert_eq!(meta["ui"]["prefersBorder"], true);
    assert_eq!(meta["openai/widgetCSP"]["connect_domains"], json!([]));

    // Over HTTP: fingerprinted assets for a year, the template for minutes.
    let base = gw.url.trim_end_matches("/mcp");
    let template = reqwest::get(format!("{base}/widgets/index-discover.html"))
        .await
        .unwrap();
    assert_eq!(template.headers()["cache-control"], "public, max-age=300");
    let template = template.text().await.unwrap();
    let js = template
        .split('"')
        .find(|s| s.starts_with("index-widgets.") && s.ends_with(".js"))
        .expect("the template links its script");
    let asset = reqwest::get(format!("{base}/widgets/{js}")).await.unwrap();
    assert_eq!(asset.status(), 200);
    assert_eq!(asset.headers()["cache-control"], "public, max-age=31536000, immutable");
    assert!(
        asset.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/javascript")
    );
    let missing = reqwest::get(format!("{base}/widgets/nope.js")).await.unwrap();
    assert_eq!(missing.status(), 404);

    // The real result in the browser, with the fixture states.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("real-result.json");
    std::fs::write(&path, serde_json::to_vec(&result).unwrap()).unwrap();
    let structured: &Value = result.structured_content.as_ref().unwrap();
    assert_eq!(structured["cards"].as_array().unwrap().len(), 3);
    let artifacts = repo_path("target/widget-screenshots");
    let out = node(
        &["--test", "test/widget.test.mjs"],
        &[
            ("WIDGET_REAL_RESULT", path.to_str().unwrap()),
            ("WIDGET_ARTIFACTS", artifacts.to_str().unwrap()),
        ],
    );
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "browser tests failed:\n{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        report
            .lines()
            .any(|l| l.starts_with("ok ") && l.contains("- a real discover_filter result")),
        "{report}"
    );
    assert!(!report.contains("# SKIP"), "{report}");
    assert!(artifacts.join("real-result.png").exists());
}

/// On the default exposure, as a user of ChatGPT or Claude meets it: the
/// Index tools are listed beside the meta-tools with their templates (and
/// `archive_intent`, for the intent display alone), and
/// widgets/test/hosts.test.mjs renders each in two hosts in Chromium (the
/// official ext-apps host side, and a `window.openai` bridge), where the
/// discovery cards page forward by the name the host listed, a connection's
/// Connect asks the chat, and the intent display removes its intents.
/// Multi-threaded: the fake Index API answers on this runtime while node runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "full tier: needs oidc-provider, Node.js and Chromium (scripts/setup)"]
async fn the_index_apps_render_in_real_hosts_on_the_default_exposure() {
    let (fake, gw, token) = signed_in_gateway().await;
    let client = gw.client_with_token(&token).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "tool_discovery",
            "tool_execute",
            "index__extract_intent",
            "index__discover_filter",
            "index__discover_connections",
            "index__archive_intent"
        ]
    );
    for tool in &tools[2..5] {
        let annotations = tool.annotations.as_ref().unwrap();
        assert_eq!(annotations.read_only_hint, Some(false), "{} writes intents", tool.name);
        let template = tool.meta.as_ref().unwrap()["ui"]["resourceUri"].as_str().unwrap();
        assert!(template.starts_with("ui://mcp-gateway/index/widget/"), "{template}");
    }
    // Listed for the intent display to call; hosts keep it from the model.
    assert_eq!(tools[5].meta.as_ref().unwrap()["ui"]["visibility"], json!(["app"]));

    let cases = json!({
        "index__discover_filter": { "intentIds": [INTENT_A, INTENT_B], "limit": 3 },
        "index__discover_connections": { "text": "Looking for people to build a distributed database with", "maxConnections": 3 },
        "index__extract_intent": { "fullInputText": "I am building a distributed database and want mentors" },
    });
    let artifacts = repo_path("target/widget-screenshots");
    let out = node(
        &["--test", "test/hosts.test.mjs"],
        &[
            ("GATEWAY_URL", gw.url.as_str()),
            ("GATEWAY_TOKEN", token.as_str()),
            ("HOST_CASES", cases.to_string().as_str()),
            ("WIDGET_ARTIFACTS", artifacts.to_str().unwrap()),
        ],
    );
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "host tests failed:\n{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(report.contains("# pass 6") && report.contains("# fail 0"), "{report}");
    assert!(!report.contains("# SKIP"), "{report}");
    // Each host extracted one intent and removed it: both archived at Index.
    assert_eq!(fake.archived().len(), 2, "{:?}", fake.archived());
}
