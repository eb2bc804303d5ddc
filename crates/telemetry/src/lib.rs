//! Prometheus metrics through the `metrics` facade: calls by meta-tool,
//! server and outcome; latency histograms for discovery, execute and each
//! downstream; downstream status and restarts; search fallbacks; catalog
//! size; the Index Protocol API's latency and `Retry-After`s. `GET /metrics`
//! renders them (the HTTP face serves it). [`traces`] exports spans over
//! OTLP. It knows the config and the vocabulary, nothing of the gateway's
//! own types: callers hand it names and numbers.

pub mod traces;

use std::sync::OnceLock;
use std::time::Duration;

use metrics::{counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// Histogram buckets for latencies, in seconds (100 µs to 60 s).
const BUCKETS: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Installs the process-wide recorder (once) and returns its handle.
pub fn install() -> PrometheusHandle {
    HANDLE
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), BUCKETS)
                .expect("non-empty buckets")
                .build_recorder();
            let handle = recorder.handle();
            // Another recorder (a test harness's) may already be set; metrics then go there.
            let _ = metrics::set_global_recorder(recorder);
            describe();
            handle
        })
        .clone()
}

fn describe() {
    describe_counter!(
        "mcp_gateway_calls_total",
        "Meta-tool calls by meta_tool, server and outcome"
    );
    describe_histogram!(
        "mcp_gateway_discovery_seconds",
        metrics::Unit::Seconds,
        "tool_discovery latency"
    );
    describe_histogram!(
        "mcp_gateway_execute_seconds",
        metrics::Unit::Seconds,
        "tool_execute latency, gateway included"
    );
    describe_histogram!(
        "mcp_gateway_downstream_seconds",
        metrics::Unit::Seconds,
        "Latency of calls to each downstream server"
    );
    describe_gauge!("mcp_gateway_downstream_up", "1 when the server is running, else 0");
    describe_gauge!(
        "mcp_gateway_downstream_restarts",
        "Times the server's connection was re-established"
    );
    describe_gauge!("mcp_gateway_downstream_tools", "Tools the server lists");
    describe_counter!(
        "mcp_gateway_search_fallbacks_total",
        "Discoveries answered by BM25 because the configured provider could not"
    );
    describe_gauge!("mcp_gateway_catalog_tools", "Tools in the catalog snapshot");
    describe_counter!(
        "mcp_gateway_tool_changes_total",
        "Tool definitions that differ from their pin, by server and action (held, warned, accepted)"
    );
    describe_gauge!(
        "mcp_gateway_tools_held",
        "Tools hidden and refused until an operator reviews them"
    );
    describe_counter!(
        "mcp_gateway_secrets_total",
        "Credentials found in calls, by direction (arguments, results), kind and action (blocked, redacted)"
    );
    describe_gauge!("mcp_gateway_sessions_open", "MCP sessions open on the HTTP listener");
    describe_gauge!(
        "mcp_gateway_change_listeners",
        "Sessions and subscriptions/listen streams kept to be told when their tools change"
    );
    describe_counter!(
        "mcp_gateway_sessions_evicted_total",
        "Idle MCP sessions closed to make room for new ones"
    );
    describe_counter!(
        "mcp_gateway_scripts_total",
        "Scripts run by tool_execute (code mode), by how they ended (ok, or the SCRIPT_* code)"
    );
    describe_histogram!(
        "mcp_gateway_script_cpu_seconds",
        "JavaScript run time of a script (its tool calls are counted as calls)"
    );
    describe_counter!(
        "mcp_gateway_sessions_refused_total",
        "New MCP sessions refused, by the limit that was full (caller, gateway)"
    );
    describe_histogram!(
        "mcp_gateway_index_filter_seconds",
        metrics::Unit::Seconds,
        "Latency of each Index /discover/filter request (polls included), by outcome"
    );
    describe_histogram!(
        "mcp_gateway_index_vibecheck_batch_seconds",
        metrics::Unit::Seconds,
        "Latency of each batch of Index VibeChecks (one tool call's matches, retries included)"
    );
    describe_gauge!(
        "mcp_gateway_tokens_saved",
        "o200k tokens discovery kept out of models' context since start, by project: each session's listing of every tool it may see, less the meta-tools and the tools its discoveries returned"
    );
    describe_counter!(
        "mcp_gateway_code_mode_bytes_kept_total",
        "Bytes of tool results code-mode scripts read but did not return to the model, by project"
    );
    describe_counter!(
        "mcp_gateway_index_retry_after_total",
        "Index Protocol API answers that carried Retry-After, by endpoint"
    );
    describe_histogram!(
        "mcp_gateway_index_retry_after_seconds",
        metrics::Unit::Seconds,
        "The wait each Index Retry-After asked for, by endpoint"
    );
}

/// One meta-tool call; `server` is the target's for `tool_execute`.
pub fn call(meta_tool: &'static str, server: Option<&str>, outcome: &'static str, latency: Duration) {
    let server = server.unwrap_or("").to_string();
    counter!("mcp_gateway_calls_total", "meta_tool" => meta_tool, "server" => server, "outcome" => outcome)
        .increment(1);
    let name = if meta_tool == vocab::wire::DISCOVERY {
        "mcp_gateway_discovery_seconds"
    } else {
        "mcp_gateway_execute_seconds"
    };
    histogram!(name).record(latency.as_secs_f64());
}

/// o200k tokens one discovery of `project` saved (negative: what it cost).
pub fn tokens_saved(project: &str, tokens: i64) {
    gauge!("mcp_gateway_tokens_saved", "project" => project.to_string()).increment(tokens as f64);
}

/// Bytes of tool results one script of `project` kept out of the model's context.
pub fn bytes_kept(project: &str, bytes: i64) {
    counter!("mcp_gateway_code_mode_bytes_kept_total", "project" => project.to_string()).increment(bytes.max(0) as u64);
}

/// One script of code mode: how it ended and its JavaScript run time.
pub fn script(outcome: &'static str, cpu: Duration) {
    counter!("mcp_gateway_scripts_total", "outcome" => outcome).increment(1);
    histogram!("mcp_gateway_script_cpu_seconds").record(cpu.as_secs_f64());
}

/// One request to a downstream server.
pub fn downstream_call(server: &str, latency: Duration) {
    histogram!("mcp_gateway_downstream_seconds", "server" => server.to_string()).record(latency.as_secs_f64());
}

/// A server's state after a change.
pub fn downstream_state(server: &str, up: bool, restarts: u32, tools: usize) {
    let label = server.to_string();
    gauge!("mcp_gateway_downstream_up", "server" => label.clone()).set(if up { 1.0 } else { 0.0 });
    gauge!("mcp_gateway_downstream_restarts", "server" => label.clone()).set(f64::from(restarts));
    gauge!("mcp_gateway_downstream_tools", "server" => label).set(tools as f64);
}

/// A discovery the configured provider could not answer.
pub fn search_fallback(provider: &'static str) {
    counter!("mcp_gateway_search_fallbacks_total", "provider" => provider).increment(1);
}

/// A configuration reload was `applied` or `refused`.
pub fn config_reload(outcome: &'static str) {
    counter!("mcp_gateway_config_reloads_total", "outcome" => outcome).increment(1);
}

/// An HTTP request refused for its caller's rate.
pub fn rate_limited() {
    counter!("mcp_gateway_rate_limited_total").increment(1);
}

/// An OAuth access token checked at the HTTP listener. `issuer` is a
/// trusted one, or empty when the token did not get that far (a claimed
/// issuer is the caller's input, so never a label).
pub fn oauth_token(issuer: &str, outcome: &'static str) {
    counter!("mcp_gateway_oauth_tokens_total", "issuer" => issuer.to_string(), "outcome" => outcome).increment(1);
}

/// The catalog was rebuilt.
pub fn catalog_size(tools: usize) {
    gauge!("mcp_gateway_catalog_tools").set(tools as f64);
}

/// A tool whose definition differs from its pin (or is new on a pinned
/// server, or holds on a scan finding): `held`, `warned` or `accepted`.
pub fn tool_change(server: &str, action: &'static str) {
    counter!("mcp_gateway_tool_changes_total", "server" => server.to_string(), "action" => action).increment(1);
}

/// Tools held for review in the current catalog.
pub fn tools_held(n: usize) {
    gauge!("mcp_gateway_tools_held").set(n as f64);
}

/// A credential found in a call; the kind, never the match.
pub fn secret(direction: &'static str, kind: &'static str, action: &'static str) {
    counter!("mcp_gateway_secrets_total", "direction" => direction, "kind" => kind, "action" => action).increment(1);
}

/// MCP sessions open on the HTTP listener.
pub fn sessions_open(n: usize) {
    gauge!("mcp_gateway_sessions_open").set(n as f64);
}

/// Listeners of tool-list changes added (a positive `delta`) or dropped: a
/// sum, as the stdio and HTTP faces keep their own.
pub fn change_listeners(delta: isize) {
    gauge!("mcp_gateway_change_listeners").increment(delta as f64);
}

/// An idle session closed to make room for a new one.
pub fn session_evicted() {
    counter!("mcp_gateway_sessions_evicted_total").increment(1);
}

/// A new session refused: the caller's (`caller`) or the gateway's (`gateway`) limit was full.
pub fn session_refused(limit: &'static str) {
    counter!("mcp_gateway_sessions_refused_total", "limit" => limit).increment(1);
}

/// Fields through which rmcp logs whole messages, peers' details or session
/// ids; an event carrying one is never logged, at any level.
const PAYLOAD_FIELDS: &[&str] = &[
    "request",
    "result",
    "notification",
    "message_body",
    "peer_info",
    "session_id",
    "evt",
    "params",
    "param",
];

/// Whether a log event may be written at all, whatever `RUST_LOG` asks: rmcp
/// logs requests, results and session ids at info and debug, so only its
/// warnings and errors pass, and none that carry a payload field.
pub fn loggable(meta: &tracing::Metadata<'_>) -> bool {
    if !meta.target().starts_with("rmcp") {
        return true;
    }
    *meta.level() <= tracing::Level::WARN && !meta.fields().iter().any(|f| PAYLOAD_FIELDS.contains(&f.name()))
}
