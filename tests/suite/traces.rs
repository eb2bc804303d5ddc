//! OpenTelemetry end to end: the real gateway exports its spans over
//! OTLP/HTTP (JSON) to a collector on loopback (a small receiver here: no
//! collector ships in Debian), and one trace goes client → gateway →
//! downstream through `_meta.traceparent`.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

/// An OTLP/HTTP receiver: every `POST /v1/traces` body, as JSON. Like a
/// collector, it refuses another content type (415) and a body that is not
/// an OTLP/JSON export request (400), and keeps only what it accepted.
struct Collector {
    url: String,
    bodies: Arc<Mutex<Vec<Value>>>,
}

impl Collector {
    async fn start() -> Collector {
        let bodies: Arc<Mutex<Vec<Value>>> = Arc::default();
        let kept = bodies.clone();
        let app = axum::Router::new().route(
            "/v1/traces",
            axum::routing::post(move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                let kept = kept.clone();
                async move {
                    use axum::http::StatusCode;
                    let json = headers
                        .get("content-type")
                        .and_then(|v| v.to_str().ok())
                        .is_some_and(|v| v.starts_with("application/json"));
                    if !json {
                        return (StatusCode::UNSUPPORTED_MEDIA_TYPE, axum::Json(json!({})));
                    }
                    match serde_json::from_slice::<Value>(&body) {
                        Ok(export) if export["resourceSpans"].is_array() => {
                            kept.lock().unwrap().push(export);
                            (StatusCode::OK, axum::Json(json!({})))
                        }
                        _ => (
                            StatusCode::BAD_REQUEST,
                            axum::Json(json!({ "message": "not an OTLP/JSON export" })),
                        ),
                    }
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Collector { url, bodies }
    }

    /// Every span received so far (OTLP/JSON: resourceSpans → scopeSpans → spans).
    fn spans(&self) -> Vec<Value> {
        self.bodies
            .lock()
            .unwrap()
            .iter()
            .flat_map(|b| b["resourceSpans"].as_array().cloned().unwrap_or_default())
            .flat_map(|r| r["scopeSpans"].as_array().cloned().unwrap_or_default())
            .flat_map(|s| s["spans"].as_array().cloned().unwrap_or_default())
            .collect()
    }

    fn text(&self) -> String {
        serde_json::to_string(&*self.bodies.lock().unwrap()).unwrap()
    }
}

/// The string value of attribute `key` of an OTLP/JSON span.
fn attribute(span: &Value, key: &str) -> Option<String> {
    let a = span["attributes"].as_array()?.iter().find(|a| a["key"] == key)?;
    let v = &a["value"];
    v["stringValue"]
        .as_str()
        .map(str::to_string)
        .or_else(|| v["intValue"].as_str().map(str::to_string))
        .or_else(|| v["intValue"].as_i64().map(|n| n.to_string()))
}

#[tokio::test]
async fn one_trace_goes_from_the_client_through_the_gateway_to_the_downstream() {
    let otel = Collector::start().await;
    let config = format!(
        "{ANONYMOUS}[telemetry]\notlp_endpoint = \"{}\"\nservice_name = \"gw-test\"\n\n{}",
        otel.url,
        chaos_server("demo", "")
    );
    let gw = Gateway::spawn_with(&config, &[("OTEL_BSP_SCHEDULE_DELAY", "100")]).await;
    let client = gw.client().await;
    wait_for_tool(&client, "demo:echo").await;

    let (trace, parent) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let mut params = CallToolRequestParams::new("tool_execute").with_arguments(
        json!({ "toolKey": "demo:echo", "arguments": { "note": "an-argument-never-exported" } })
            .as_object()
            .unwrap()
            .clone(),
    );
    params.meta = Some(
        json!({ "traceparent": format!("00-{trace}-{parent}-01"), "tracestate": "vendor=1" })
            .as_object()
            .unwrap()
            .clone()
            .into(),
    );
    let result = client.call_tool(params).await.unwrap();
    assert_ne!(result.is_error, Some(true), "{}", text(&result));
    let seen = result.structured_content.unwrap()["meta"].clone();

    let spans = eventually(Duration::from_secs(15), "the call's spans exported", || async {
        let spans: Vec<Value> = otel.spans().into_iter().filter(|s| s["traceId"] == trace).collect();
        (spans.len() >= 2).then_some(spans)
    })
    .await;
    let call = spans
        .iter()
        .find(|s| s["name"] == "tool_execute")
        .expect("the meta-tool call's span");
    let downstream = spans
        .iter()
        .find(|s| s["name"] == "tools/call demo:echo")
        .expect("the downstream call's span");

    // The caller's span is the gateway's parent; the gateway's call span is
    // the downstream span's parent; the downstream received that span's context.
    assert_eq!(call["parentSpanId"], parent);
    assert_eq!(downstream["parentSpanId"], call["spanId"]);
    let downstream_id = downstream["spanId"].as_str().unwrap();
    assert_eq!(seen["traceparent"], format!("00-{trace}-{downstream_id}-01"));
    assert_eq!(seen["tracestate"], "vendor=1");

    // Names and outcomes, no arguments.
    assert_eq!(attribute(call, "outcome").as_deref(), Some("ok"));
    assert_eq!(attribute(call, "tool_key").as_deref(), Some("demo:echo"));
    assert_eq!(attribute(downstream, "server").as_deref(), Some("demo"));
    assert_eq!(attribute(downstream, "outcome").as_deref(), Some("ok"));
    assert!(!otel.text().contains("an-argument-never-exported"));
    assert!(otel.text().contains("gw-test"), "service.name");

    // A call without trace context starts a trace of its own.
    let before = otel.spans().len();
    let r = execute(&client, "demo:echo", json!({})).await;
    let own = r.structured_content.unwrap()["meta"]["traceparent"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!own.contains(trace));
    eventually(Duration::from_secs(15), "a fresh trace exported", || async {
        (otel.spans().len() >= before + 2).then_some(())
    })
    .await;
}

#[test]
fn a_bad_endpoint_is_a_config_error_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gateway.toml");
    std::fs::write(&path, "[telemetry]\notlp_endpoint = \"grpc://127.0.0.1:4317\"\n").unwrap();
    let out = std::process::Command::new(bin())
        .arg("--config")
        .arg(&path)
        .arg("check")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("telemetry.otlp_endpoint") && err.contains("http or https"),
        "{err}"
    );
}
