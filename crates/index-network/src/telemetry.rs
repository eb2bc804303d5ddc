//! The Index Protocol API's figures, on whatever `metrics` recorder the
//! process installed (the gateway's Prometheus exporter describes them).

use std::time::Duration;

use metrics::{counter, histogram};

/// One `/discover/filter` request to the Index Protocol API: `ok` or `error`.
pub(crate) fn index_filter(outcome: &'static str, latency: Duration) {
    histogram!("mcp_gateway_index_filter_seconds", "outcome" => outcome).record(latency.as_secs_f64());
}

/// One batch of VibeChecks: every match of one tool call, pauses and retries included.
pub(crate) fn index_vibecheck_batch(latency: Duration) {
    histogram!("mcp_gateway_index_vibecheck_batch_seconds").record(latency.as_secs_f64());
}

/// A `Retry-After` from the Index Protocol API's `endpoint` (`exchange`,
/// `discover_new`, `discover_filter`, `vibecheck`) and the wait it asked for.
pub(crate) fn index_retry_after(endpoint: &'static str, wait: Duration) {
    counter!("mcp_gateway_index_retry_after_total", "endpoint" => endpoint).increment(1);
    histogram!("mcp_gateway_index_retry_after_seconds", "endpoint" => endpoint).record(wait.as_secs_f64());
}
