//! `[telemetry]`: where the gateway exports its OpenTelemetry spans
//! (`src/traces.rs` builds the exporter).

use serde::Deserialize;

use super::interpolate::interpolate;

/// `[telemetry]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTelemetry {
    /// An OTLP/HTTP collector, e.g. `http://127.0.0.1:4318` (spans go to
    /// `/v1/traces` below it); unset, nothing is exported.
    pub otlp_endpoint: Option<String>,
    /// `service.name` of the spans (default `mcp-gateway`).
    pub service_name: Option<String>,
}

/// Validated `[telemetry]`, present when spans are exported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TelemetryConfig {
    /// The full URL spans are posted to (`…/v1/traces`).
    pub traces_url: String,
    /// `service.name`.
    pub service_name: String,
}

/// Validated `[telemetry]`: `None` when nothing is exported; an error
/// message is about `otlp_endpoint`.
pub fn validate(raw: RawTelemetry) -> Result<Option<TelemetryConfig>, String> {
    let Some(endpoint) = raw.otlp_endpoint else {
        return Ok(None);
    };
    Ok(Some(TelemetryConfig {
        traces_url: traces_url(&interpolate(&endpoint)?)?,
        service_name: raw.service_name.unwrap_or_else(|| "mcp-gateway".into()),
    }))
}

/// The spans' URL for `endpoint`: a collector's base URL gets `/v1/traces`,
/// a URL that already names it is kept. Only http and https.
pub fn traces_url(endpoint: &str) -> Result<String, String> {
    let shown = || vocab::mask::url(endpoint);
    let url = url::Url::parse(endpoint.trim()).map_err(|e| format!("not a URL ({e}): '{}'", shown()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("must be an http or https URL (OTLP/HTTP), not '{}'", shown()));
    }
    let text = url.as_str().trim_end_matches('/');
    Ok(if text.ends_with("/v1/traces") {
        text.to_string()
    } else {
        format!("{text}/v1/traces")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_collector_base_gets_the_traces_path_once() {
        assert_eq!(
            traces_url("http://127.0.0.1:4318").unwrap(),
            "http://127.0.0.1:4318/v1/traces"
        );
        assert_eq!(
            traces_url("https://otel.example.com/").unwrap(),
            "https://otel.example.com/v1/traces"
        );
        assert_eq!(
            traces_url("http://c:4318/v1/traces").unwrap(),
            "http://c:4318/v1/traces"
        );
        assert!(traces_url("grpc://c:4317").unwrap_err().contains("http or https"));
        assert!(traces_url("c:4318 x").is_err());
    }
}
