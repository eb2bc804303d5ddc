//! One meta-tool call from its caller to its audit row. A face (the MCP
//! server) hands each call here once: the answer, the metrics, the access
//! log line and the audit row all come from this one place, and under strict
//! audit no answer leaves before its row is durable.

use std::time::Instant;

use rmcp::model::{CallToolResponse, JsonObject, ResultType};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use super::{Answer, ExecuteArgs, Gateway, Retry};
use crate::auth::{self, Caller};
use crate::downstream::CallOrigin;
use crate::leaks;
use crate::learning::Trail;
use crate::ratelimit::Budget;
use crate::store::Outcome;
use crate::wire::{DISCOVERY, REQUEST_ID_META, split_key};

/// What a face knows of one call once its caller is known.
#[derive(Debug)]
pub struct CallRequest {
    /// The meta-tool's arguments, unparsed.
    pub arguments: Option<JsonObject>,
    /// An execute's retry after input requests (2026-07-28 clients).
    pub retry: Retry,
    /// The caller's `_meta` that travels on to the downstream (the gateway adds its request id).
    pub meta: JsonObject,
    /// Which session the call belongs to (learning links an execute to the discovery before it).
    pub session: String,
    /// Where the downstream's progress and questions go.
    pub origin: CallOrigin,
    /// What the face charged the request to, when it meters requests: each
    /// call of a script is charged there too.
    pub budget: Option<Budget>,
}

/// Why a call got no answer at all (an answer, even an error, is `Ok`).
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// The caller could not be authenticated.
    #[error(transparent)]
    Caller(#[from] auth::Error),
    /// The client cancelled the request; the downstream call is dropped.
    #[error("request cancelled")]
    Cancelled,
}

impl Gateway {
    /// `meta_tool` for `caller` (or the reason it has none), answered and
    /// audited. `request` builds the rest once the caller is known; when
    /// `cancelled` fires first, the call is dropped (and with it its
    /// downstream call) and audited as failed.
    pub async fn call(
        &self,
        meta_tool: &'static str,
        request_id: &str,
        caller: Result<Caller, auth::Error>,
        cancelled: &CancellationToken,
        request: impl FnOnce(&Caller) -> CallRequest,
    ) -> Result<CallToolResponse, Refused> {
        let started = Instant::now();
        let caller = match caller {
            Ok(c) => c,
            Err(e) => {
                info!(request_id, meta_tool, outcome = "denied", "refused caller");
                crate::telemetry::call(meta_tool, None, Outcome::Denied.as_str(), started.elapsed());
                // A refusal is an error either way: its row is not waited for.
                let row = Self::audit_row(
                    request_id,
                    None,
                    meta_tool,
                    None,
                    Outcome::Denied,
                    started.elapsed(),
                    None,
                    Trail::default(),
                );
                let _ = self.audit(row, false).await;
                return Err(e.into());
            }
        };
        let CallRequest {
            arguments,
            retry,
            mut meta,
            session,
            origin,
            budget,
        } = request(&caller);
        let (answer, tool_key) = if meta_tool == DISCOVERY {
            (
                self.answer_discovery(&caller, arguments, &session, request_id).await,
                None,
            )
        } else {
            let args = ExecuteArgs::parse(arguments).map(|args| ExecuteArgs { retry, ..args });
            // A script's row has no key: its calls have rows of their own.
            let key = args.as_ref().ok().map(|a| a.tool_key.clone()).filter(|k| !k.is_empty());
            meta.insert(REQUEST_ID_META.into(), request_id.into());
            tokio::select! {
                a = self.answer_execute(&caller, args, Some(meta), origin, &session, budget.as_ref()) => (a, key),
                // Dropping the call cancels it downstream.
                _ = cancelled.cancelled() => {
                    info!(request_id, "call cancelled by the client");
                    let row = Self::audit_row(request_id, Some(&caller), meta_tool, key, Outcome::Failed, started.elapsed(), None, Trail::default());
                    let _ = self.audit(row, false).await;
                    return Err(Refused::Cancelled);
                }
            }
        };
        Ok(self
            .finish(meta_tool, request_id, &caller, tool_key, answer, started)
            .await)
    }

    /// An answered call's span fields, metric, access log line and audit
    /// row; the answer itself, or in its place why it was withheld. A
    /// script's calls end here too (`script.rs`).
    pub(super) async fn finish(
        &self,
        meta_tool: &'static str,
        request_id: &str,
        caller: &Caller,
        tool_key: Option<String>,
        answer: Answer,
        started: Instant,
    ) -> CallToolResponse {
        let latency = started.elapsed();
        let span = tracing::Span::current();
        span.record("project", caller.project.id);
        span.record("outcome", answer.outcome.as_str());
        // The key is the caller's (a script's may be anything): logs carry
        // it as any caller's string is quoted.
        let shown_key = tool_key.as_deref().map(leaks::quote);
        if let Some(key) = &shown_key {
            span.record("tool_key", key.as_str());
        }
        // A metric's label is a server the gateway runs, never a caller's
        // word: each new label would be a new series.
        let server = tool_key
            .as_deref()
            .and_then(split_key)
            .map(|(s, _)| s)
            .filter(|s| self.registry.get(s).is_some());
        crate::telemetry::call(meta_tool, server, answer.outcome.as_str(), latency);
        // The access log has its own target, so an operator can keep it apart
        // or off (`RUST_LOG=info,mcp_gateway::calls=off`): every call is in the
        // audit log too.
        info!(
            target: "mcp_gateway::calls",
            request_id,
            project = caller.project.id,
            subject = caller.subject.as_deref().unwrap_or(""),
            issuer = caller.issuer.as_deref().unwrap_or(""),
            meta_tool,
            tool_key = shown_key.as_deref().unwrap_or(""),
            outcome = ?answer.outcome,
            results = answer.result_count,
            latency_us = latency.as_micros() as u64,
            "call"
        );
        let key = tool_key.clone().unwrap_or_else(|| meta_tool.to_string());
        // A call refused for want of its `started` row ran nothing: its row is written behind.
        let answered = !Self::refused_unaudited(&answer.result);
        let row = Self::audit_row(
            request_id,
            Some(caller),
            meta_tool,
            tool_key,
            answer.outcome,
            latency,
            answer.result_count,
            answer.trail,
        );
        // No answer leaves before its row is durable (strict audit).
        match self.audit(row, answered).await {
            Ok(()) => complete(answer.result),
            Err(why) => {
                warn!(request_id, meta_tool, error = %why, "answer withheld: its audit row was not written");
                complete(Self::withhold(&key, why))
            }
        }
    }
}

fn complete(mut r: CallToolResponse) -> CallToolResponse {
    // 2026-07-28 peers need resultType; rmcp strips it again for older ones.
    if let CallToolResponse::Complete(ref mut result) = r {
        result.result_type.get_or_insert(ResultType::COMPLETE);
    }
    r
}
