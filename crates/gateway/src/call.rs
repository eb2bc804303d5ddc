//! One meta-tool call from its caller to its audit row. A face (the MCP
//! server) hands each call here once: the answer, the metrics, the access
//! log line and the audit row all come from this one place, and under strict
//! audit no answer leaves before its row is durable.

use std::time::Instant;

use rmcp::model::{CallToolResponse, JsonObject, ResultType};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use super::audit::{AuditState, Row};
use super::{Answer, DiscoverArgs, ExecuteArgs, Gateway, Retry};
use crate::auth::{self, Caller};
use crate::ratelimit::Budget;
use downstream::CallOrigin;
use vocab::keys::RequestId;
use vocab::outcome::Outcome;
use vocab::wire::{EXECUTE, MetaTool, split_key};

/// One meta-tool call as the face read it, once: its arguments parsed
/// (or why they could not be), a call by a tool's listed name already an
/// execute of its key. No later step reads the JSON again.
#[derive(Debug)]
pub enum MetaCall {
    /// `tool_discovery`.
    Discovery(Result<DiscoverArgs, String>),
    /// `tool_execute`: a key, a script, or a tool's listed name.
    Execute(Result<ExecuteArgs, String>),
}

impl MetaCall {
    /// The meta-tool's arguments as a client sent them, parsed.
    pub fn parse(meta_tool: MetaTool, arguments: Option<JsonObject>) -> Self {
        match meta_tool {
            MetaTool::Discovery => MetaCall::Discovery(DiscoverArgs::parse(arguments)),
            MetaTool::Execute => MetaCall::Execute(ExecuteArgs::parse(arguments)),
        }
    }

    /// A tool called by its listed name (the path an App calls by): an
    /// execute of `key`, the catalog's, with the tool's own `arguments`.
    pub fn by_name(key: String, arguments: Option<JsonObject>) -> Self {
        MetaCall::Execute(Ok(ExecuteArgs {
            tool_key: key,
            arguments: arguments.map(Value::Object),
            by_name: true,
            ..Default::default()
        }))
    }

    /// The key an execute names, once parsed (none for a script).
    pub fn tool_key(&self) -> Option<&str> {
        match self {
            MetaCall::Execute(Ok(args)) if args.script.is_none() => Some(&args.tool_key),
            _ => None,
        }
    }

    /// An execute's retry after input requests (2026-07-28 clients).
    pub fn retrying(mut self, retry: Retry) -> Self {
        if let MetaCall::Execute(Ok(args)) = &mut self {
            args.retry = retry;
        }
        self
    }
}

/// What a face knows of one call once its caller is known.
#[derive(Debug)]
pub struct CallRequest {
    /// The call, parsed.
    pub call: MetaCall,
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

/// One execute's context, built once its caller is known and handed down
/// whole: to its input rounds, to a script, and to each of the script's calls.
pub(super) struct Context<'a> {
    pub(super) caller: &'a Caller,
    /// The call's id: its audit rows' and, in `_meta`, the downstream's.
    pub(super) request_id: &'a RequestId,
    /// The caller's `_meta` that travels on to the downstream (the gateway adds its request id).
    pub(super) meta: JsonObject,
    /// Where the downstream's progress and questions go.
    pub(super) origin: CallOrigin,
    /// The session (learning links an execute to the discovery before it).
    pub(super) session: &'a str,
    /// What the face charged the request to; each call of a script is charged there too.
    pub(super) budget: Option<&'a Budget>,
}

/// A call as its record names it, whatever its answer: which meta-tool,
/// whose, about which key, since when.
pub(super) struct Record<'a> {
    pub(super) meta_tool: MetaTool,
    pub(super) request_id: &'a RequestId,
    pub(super) caller: &'a Caller,
    /// The key the caller sent, if any (a script's may be anything).
    pub(super) tool_key: Option<String>,
    pub(super) started: Instant,
}

impl Gateway {
    /// `meta_tool` for `caller` (or the reason it has none), answered and
    /// audited. `request` builds the rest once the caller is known; when
    /// `cancelled` fires first, the call is dropped (and with it its
    /// downstream call) and audited as failed.
    pub async fn call(
        &self,
        meta_tool: MetaTool,
        request_id: &RequestId,
        caller: Result<Caller, auth::Error>,
        cancelled: &CancellationToken,
        request: impl FnOnce(&Caller) -> CallRequest,
    ) -> Result<CallToolResponse, Refused> {
        let started = Instant::now();
        let caller = match caller {
            Ok(c) => c,
            Err(e) => {
                let name = meta_tool.as_str();
                info!(request_id = %request_id, meta_tool = name, outcome = "denied", "refused caller");
                telemetry::call(name, None, Outcome::Denied.as_str(), started.elapsed());
                // A refusal is an error either way: its row is not waited for.
                let row = Row::new(request_id, name)
                    .outcome(Outcome::Denied)
                    .latency(started.elapsed());
                let _ = self.audit(row.build(), false).await;
                return Err(e.into());
            }
        };
        let CallRequest {
            call,
            meta,
            session,
            origin,
            budget,
        } = request(&caller);
        let tool_key = match &call {
            // A script's row has no key: its calls have rows of their own.
            MetaCall::Execute(Ok(args)) => Some(args.tool_key.clone()).filter(|k| !k.is_empty()),
            _ => None,
        };
        let record = Record {
            meta_tool,
            request_id,
            caller: &caller,
            tool_key,
            started,
        };
        let answer = match call {
            MetaCall::Discovery(args) => self.answer_discovery(&caller, args, &session, request_id).await,
            MetaCall::Execute(Err(e)) => Answer::usage(EXECUTE, &e),
            MetaCall::Execute(Ok(args)) => {
                let cx = Context {
                    caller: &caller,
                    request_id,
                    meta,
                    origin,
                    session: &session,
                    budget: budget.as_ref(),
                };
                tokio::select! {
                    a = self.answer_execute(&cx, args) => a,
                    // Dropping the call cancels it downstream.
                    _ = cancelled.cancelled() => {
                        info!(request_id = %request_id, "call cancelled by the client");
                        let _ = self.audit(self.row_of(&record).build(), false).await;
                        return Err(Refused::Cancelled);
                    }
                }
            }
        };
        Ok(self.record(record, answer).await.result)
    }

    /// The row `record` begins: the caller, the key as its server knows
    /// it, the latency so far.
    pub(super) fn row_of(&self, record: &Record<'_>) -> Row {
        Row::new(record.request_id, record.meta_tool.as_str())
            .caller(record.caller)
            .key(self.audited_key(record.caller, record.tool_key.as_deref()).as_deref())
            .latency(record.started.elapsed())
    }

    /// The call path's last step: an answered call's span fields, metric,
    /// access log line and audit row; the answer itself, or in its place
    /// why it was withheld. A script's calls end here too (`script.rs`).
    pub(super) async fn record(&self, record: Record<'_>, mut answer: Answer) -> Answer {
        let Record {
            meta_tool,
            request_id,
            caller,
            ref tool_key,
            started,
        } = record;
        let meta_tool = meta_tool.as_str();
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
        telemetry::call(meta_tool, server, answer.outcome.as_str(), latency);
        // The access log has its own target, so an operator can keep it apart
        // or off (`RUST_LOG=info,mcp_gateway::calls=off`): every call is in the
        // audit log too. It holds every field of the call's span, so it is
        // written without the span's prefix, which would repeat them.
        info!(
            target: "mcp_gateway::calls",
            parent: None,
            request_id = %request_id,
            project = caller.project.id,
            subject = caller.subject.as_deref().unwrap_or(""),
            issuer = caller.issuer.as_deref().unwrap_or(""),
            meta_tool,
            tool_key = shown_key.as_deref().unwrap_or(""),
            outcome = answer.outcome.as_str(),
            results = answer.result_count,
            latency_us = latency.as_micros() as u64,
            "call"
        );
        let key = tool_key.clone().unwrap_or_else(|| meta_tool.to_string());
        // A call refused for want of its `started` row ran nothing: its row is written behind.
        let answered = answer.audit != AuditState::StartRefused;
        let row = self
            .row_of(&record)
            .outcome(answer.outcome)
            .latency(latency)
            .answered(answer.result_count, std::mem::take(&mut answer.trail))
            .savings(answer.saved_tokens, answer.kept_bytes);
        // No answer leaves before its row is durable (strict audit).
        let mut answer = match self.audit(row.build(), answered).await {
            Ok(()) => answer,
            Err(why) => {
                warn!(request_id = %request_id, meta_tool, error = %why, "answer withheld: its audit row was not written");
                Self::withhold(&key, why)
            }
        };
        answer.result = complete(answer.result);
        answer
    }
}

fn complete(mut r: CallToolResponse) -> CallToolResponse {
    // 2026-07-28 peers need resultType; rmcp strips it again for older ones.
    if let CallToolResponse::Complete(ref mut result) = r {
        result.result_type.get_or_insert(ResultType::COMPLETE);
    }
    r
}
