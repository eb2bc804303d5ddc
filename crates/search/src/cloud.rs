//! The cloud provider: `POST {url}/catalog/search` with the caller's
//! Available Tool List, bearer auth, a short timeout, and a circuit breaker
//! so that a dead service does not make every discovery wait for its timeout.
//! Any failure is an `Err` with the reason; the gateway then answers with BM25.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{Ranked, Request};
use config::CloudConfig;

/// Consecutive failures that open the circuit.
pub(crate) const FAILURES_TO_OPEN: u32 = 3;
/// How long an open circuit skips the cloud before one trial call.
pub(crate) const OPEN_FOR: Duration = Duration::from_secs(30);
/// Largest response body read.
const MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;

/// One tool as the cloud sees it (the seed's `ToolInfo`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolInfo<'a> {
    pub tool_key: &'a str,
    pub tool_name: &'a str,
    pub server_name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<&'a str>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct SearchRequest<'a> {
    query: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    context: Option<&'a str>,
    tools: Vec<ToolInfo<'a>>,
    max_results: usize,
}

#[derive(Debug, Deserialize)]
struct SearchResponse {
    results: Vec<SearchResult>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SearchResult {
    tool_key: String,
    relevance: f64,
    #[serde(default)]
    explanation: Option<String>,
}

/// Closed, counting failures; or open until a moment, then one trial.
#[derive(Debug, Default)]
struct Breaker {
    failures: u32,
    open_until: Option<Instant>,
}

impl Breaker {
    /// `Err(remaining)` while open.
    fn admit(&self, now: Instant) -> Result<(), Duration> {
        match self.open_until {
            Some(until) if now < until => Err(until - now),
            _ => Ok(()),
        }
    }

    fn record(&mut self, ok: bool, now: Instant) {
        if ok {
            *self = Breaker::default();
            return;
        }
        self.failures += 1;
        // A failed trial after the open period re-opens at once.
        if self.failures >= FAILURES_TO_OPEN {
            self.open_until = Some(now + OPEN_FOR);
        }
    }
}

/// The cloud search client.
#[derive(Debug)]
pub struct CloudSearch {
    config: CloudConfig,
    endpoint: String,
    http: reqwest::Client,
    breaker: Mutex<Breaker>,
}

impl CloudSearch {
    /// A client for `config`.
    pub fn new(config: CloudConfig) -> Self {
        let endpoint = format!("{}/catalog/search", config.url.trim_end_matches('/'));
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .build()
            .unwrap_or_default();
        Self {
            config,
            endpoint,
            http,
            breaker: Mutex::default(),
        }
    }

    /// Ranks `tools` (the caller's own) for `request`. While the breaker is
    /// open, or on any failure, an `Err` with the reason.
    pub async fn rank(&self, tools: Vec<ToolInfo<'_>>, request: &Request) -> Result<Vec<Ranked>, String> {
        if let Err(remaining) = self.breaker.lock().expect("breaker lock").admit(Instant::now()) {
            return Err(format!(
                "skipped: {FAILURES_TO_OPEN} failures in a row, next try in {} s",
                remaining.as_secs() + 1
            ));
        }
        let outcome = self.ask(tools, request).await;
        self.breaker
            .lock()
            .expect("breaker lock")
            .record(outcome.is_ok(), Instant::now());
        outcome
    }

    async fn ask(&self, tools: Vec<ToolInfo<'_>>, request: &Request) -> Result<Vec<Ranked>, String> {
        let sent: std::collections::HashSet<String> = tools.iter().map(|t| t.tool_key.to_string()).collect();
        let body = SearchRequest {
            query: &request.queries,
            context: request.context.as_deref(),
            tools,
            max_results: request.limit,
        };
        let body = serde_json::to_vec(&body).map_err(|e| e.to_string())?;
        let mut req = self
            .http
            .post(&self.endpoint)
            .header("content-type", "application/json")
            .body(body);
        if let Some(token) = &self.config.token {
            req = req.bearer_auth(token);
        }
        let response = req.send().await.map_err(|e| {
            if e.is_timeout() {
                format!("no answer within {} ms", self.config.timeout.as_millis())
            } else {
                format!("request failed: {}", vocab::text::root_cause(&e))
            }
        })?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("the service answered HTTP {status}"));
        }
        let bytes = response
            .bytes()
            .await
            .map_err(|e| format!("reading the answer failed: {}", vocab::text::root_cause(&e)))?;
        if bytes.len() > MAX_RESPONSE_BYTES {
            return Err("the answer is larger than 4 MiB".into());
        }
        let parsed: SearchResponse =
            serde_json::from_slice(&bytes).map_err(|e| format!("the answer is not a search response ({e})"))?;
        ranked_within(parsed, &sent, request.limit)
    }
}

/// Keeps the cloud's ranking, but only over the caller's own tools (those
/// `sent`): a key outside them means the service is answering for someone
/// else, and the whole answer is refused.
fn ranked_within(
    response: SearchResponse,
    sent: &std::collections::HashSet<String>,
    limit: usize,
) -> Result<Vec<Ranked>, String> {
    let mut out = Vec::with_capacity(response.results.len().min(limit));
    for r in response.results {
        if !sent.contains(&r.tool_key) {
            return Err(format!(
                "the service returned '{}', a tool outside the caller's list",
                r.tool_key
            ));
        }
        if !r.relevance.is_finite() {
            return Err(format!(
                "the service gave '{}' a relevance that is not a number",
                r.tool_key
            ));
        }
        if out.iter().any(|o: &Ranked| o.key == r.tool_key) {
            continue;
        }
        out.push(Ranked {
            key: r.tool_key,
            relevance: r.relevance.clamp(0.0, 1.0) as f32,
            explanation: r.explanation,
            query: 0,
        });
    }
    out.truncate(limit);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_breaker_opens_after_repeated_failures_and_closes_on_success() {
        let t0 = Instant::now();
        let mut b = Breaker::default();
        for _ in 0..FAILURES_TO_OPEN - 1 {
            b.record(false, t0);
            assert!(b.admit(t0).is_ok());
        }
        b.record(false, t0);
        assert!(b.admit(t0 + Duration::from_secs(1)).is_err());
        let later = t0 + OPEN_FOR + Duration::from_millis(1);
        assert!(b.admit(later).is_ok(), "one trial after the open period");
        b.record(false, later);
        assert!(b.admit(later).is_err(), "a failed trial re-opens at once");
        b.record(true, later);
        assert!(b.admit(later).is_ok());
        assert_eq!(b.failures, 0);
    }
}
