//! OpenTelemetry traces: a span per meta-tool call (`call`) and per
//! downstream call (`downstream`), exported over OTLP/HTTP (JSON) when
//! `[telemetry] otlp_endpoint` is set. The W3C trace context of a call's
//! `_meta` (`traceparent`, `tracestate`) becomes the parent of its span, and
//! the downstream call carries the context of the gateway's own span, so one
//! trace goes client → gateway → downstream. Spans carry ids, names and
//! outcomes, never arguments or results.

use std::collections::HashMap;
use std::sync::OnceLock;

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use rmcp::model::JsonObject;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::{Layer, Registry};

use config::TelemetryConfig;

/// The W3C trace context keys of `_meta`.
const CONTEXT_KEYS: [&str; 2] = ["traceparent", "tracestate"];

/// The exporting provider, once `[telemetry]` set one up.
/// The crates whose spans are exported (a span's target is its module's
/// path): the gateway's own, not its dependencies' (rmcp, hyper).
const OUR_CRATES: &[&str] = &["mcp_gateway", "gateway", "downstream", "server", "web_console", "oauth"];

static PROVIDER: OnceLock<SdkTracerProvider> = OnceLock::new();

/// Why spans cannot be exported.
#[derive(Debug, thiserror::Error)]
#[error("cannot export traces to {url}: {reason}")]
pub struct Error {
    url: String,
    reason: String,
}

/// A layer that exports this crate's spans (at info and above) to
/// `config`'s collector, in batches, from a thread of its own.
pub fn layer(config: &TelemetryConfig) -> Result<Box<dyn Layer<Registry> + Send + Sync>, Error> {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpJson)
        .with_endpoint(config.traces_url.clone())
        .build()
        .map_err(|e| Error {
            url: vocab::mask::url(&config.traces_url),
            reason: vocab::mask::urls_in(&e.to_string()),
        })?;
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(
            Resource::builder()
                .with_service_name(config.service_name.clone())
                .build(),
        )
        .build();
    let tracer = provider.tracer("mcp-gateway");
    let _ = PROVIDER.set(provider);
    let ours = OUR_CRATES.iter().fold(Targets::new(), |targets, name| {
        targets.with_target(*name, tracing::Level::INFO)
    });
    Ok(tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_filter(ours)
        .boxed())
}

/// Whether spans are exported.
pub fn enabled() -> bool {
    PROVIDER.get().is_some()
}

/// Sends what is still buffered and stops the exporter (at shutdown).
pub fn flush() {
    if let Some(provider) = PROVIDER.get()
        && let Err(e) = provider.shutdown()
    {
        tracing::warn!(error = %e, "some spans could not be exported at shutdown");
    }
}

/// Makes `span` a child of the caller's trace, when `meta` carries a valid `traceparent`.
pub fn adopt(span: &tracing::Span, meta: &JsonObject) {
    if !enabled() {
        return;
    }
    let carrier: HashMap<String, String> = CONTEXT_KEYS
        .iter()
        .filter_map(|k| Some((k.to_string(), meta.get(*k)?.as_str()?.to_string())))
        .collect();
    if carrier.contains_key("traceparent") {
        let _ = span.set_parent(TraceContextPropagator::new().extract(&carrier));
    }
}

/// Puts `span`'s trace context in a downstream call's `meta`, in place of
/// the caller's: the downstream's spans then hang below the gateway's.
/// Without export the caller's context passes through as it came.
pub fn propagate(span: &tracing::Span, meta: &mut JsonObject) {
    if !enabled() {
        return;
    }
    let mut carrier: HashMap<String, String> = HashMap::new();
    TraceContextPropagator::new().inject_context(&span.context(), &mut carrier);
    if carrier.contains_key("traceparent") {
        for key in CONTEXT_KEYS {
            meta.remove(key);
        }
        meta.extend(carrier.into_iter().map(|(k, v)| (k, v.into())));
    }
}
