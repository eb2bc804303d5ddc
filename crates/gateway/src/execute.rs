//! `tool_execute`, one call by key, in the steps of the call path:
//! **resolve** the key to the caller's tool, **check** its arguments and
//! `_meta`, **route** it to a connection (`route.rs`), **call** its server,
//! **screen** what comes back. The answer and its **record** (learning,
//! metric, audit row) are `call.rs`'s.

use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, JsonObject};
use serde_json::Value;
use tracing::Instrument;

use super::audit::Row;
use super::call::Context;
use super::{Answer, ExecuteArgs, ExecuteError, Gateway, Retry, rounds_parked, tasks};
use crate::auth::Caller;
use crate::catalog::{Entry, View};
use config::ServerConfig;
use downstream::Downstream;
use vocab::keys::ToolKey;
use vocab::outcome::Outcome;
use vocab::wire::{self, EXECUTE, split_key};

/// A call that passed its checks, as it goes out.
struct Checked {
    /// The server the tool is on (its shared connection; routing picks the one used).
    server: Arc<Downstream>,
    /// The arguments, valid for the tool's schema and screened.
    arguments: JsonObject,
    /// The caller's `_meta`, screened, with the call's request id.
    meta: JsonObject,
    /// A 2026-07-28 caller's answers to the server's input requests.
    retry: Retry,
}

impl Gateway {
    /// `tool_execute`: validates and forwards one call; the downstream result
    /// comes back unchanged but for screening. The context's `meta` is
    /// forwarded as the call's `_meta`, with its request id; its `origin`
    /// says where the downstream's progress goes and whom its mid-call
    /// requests may be put to.
    async fn execute(&self, cx: &Context<'_>, args: ExecuteArgs) -> Result<CallToolResponse, ExecuteError> {
        let view = self.view_for_key(cx.caller, &args.tool_key).await?;
        let entry = resolve(&view, &args.tool_key, args.by_name)?;
        let mut checked = self.check(cx, entry, args)?;
        let server = checked.server.clone();
        let target = self.route(cx.caller, &server, &mut checked.meta).await?;
        let result = self.call_server(cx, entry, &target, checked).await?;
        self.screen(cx.caller, entry, &server.config, result)
    }

    /// The caller's view, once the server `key` names had its chance to list:
    /// one in its first connection is waited for, a project's own listing started.
    async fn view_for_key(&self, caller: &Caller, key: &str) -> Result<View, ExecuteError> {
        let view = self.catalog.view_of(caller);
        let Some((server, _)) = split_key(key).filter(|_| view.get(key).is_none()) else {
            return Ok(view);
        };
        if !self.wait_for_starting(&caller.grants, Some(server)).await.is_empty() {
            return Err(ExecuteError::Starting {
                key: key.to_string(),
                server: server.to_string(),
            });
        }
        self.own_listing(caller, server).await?;
        Ok(self.catalog.view_of(caller))
    }

    /// The arguments against the tool's schema, and they and the caller's
    /// `_meta` screened for what may not reach the server; the meta gains the
    /// call's request id.
    fn check(&self, cx: &Context<'_>, entry: &Entry, args: ExecuteArgs) -> Result<Checked, ExecuteError> {
        let invalid = |violations| ExecuteError::Invalid {
            key: entry.key.clone(),
            violations,
        };
        let arguments = match args.arguments {
            None | Some(Value::Null) => Value::Object(JsonObject::new()),
            Some(v) => v,
        };
        entry.check_arguments(&arguments).map_err(invalid)?;
        let Value::Object(mut arguments) = arguments else {
            return Err(invalid(vec!["arguments must be an object".into()]));
        };
        let server = self
            .registry
            .get(&entry.server)
            .ok_or_else(|| ExecuteError::NotFound(entry.key.to_string()))?;
        let project = &cx.caller.project.name;
        self.security
            .screen_arguments(project, &server.config, &entry.real_key, &mut arguments)?;
        // The caller's `_meta` reaches the server as the arguments do.
        let mut meta = cx.meta.clone();
        self.security
            .screen_meta(project, &server.config, &entry.real_key, &mut meta)?;
        meta.insert(wire::REQUEST_ID_META.into(), cx.request_id.as_str().into());
        Ok(Checked {
            server,
            arguments,
            meta,
            retry: args.retry,
        })
    }

    /// The call itself, on `target`: charged to the caller's limits, its
    /// `started` row written, sent (a 2026-07-28 caller's through parked
    /// rounds), and a task waited for unless the caller polls it.
    async fn call_server(
        &self,
        cx: &Context<'_>,
        entry: &Entry,
        target: &Arc<Downstream>,
        checked: Checked,
    ) -> Result<CallToolResponse, ExecuteError> {
        // Counted last of the checks: a call refused for another reason spends nothing.
        self.count_call(cx.caller, entry)?;
        let Checked {
            arguments,
            mut meta,
            retry,
            ..
        } = checked;
        let span = downstream_span(entry, target);
        telemetry::traces::propagate(&span, &mut meta);
        // The server knows the tool by its own name, whatever an override called it.
        let mut params = CallToolRequestParams::new(entry.real_name().to_string()).with_arguments(arguments);
        params.input_responses = retry.input_responses;
        params.request_state = retry.request_state;
        params.meta = (!meta.is_empty()).then(|| meta.into());
        // The trace a crash cannot erase: written, in strict mode durably,
        // before the server is called (its outcome row replaces it).
        let row = Row::new(cx.request_id, EXECUTE)
            .caller(cx.caller)
            .key(Some(&entry.real_key))
            .outcome(Outcome::Started);
        self.audit(row.build(), true).await.map_err(ExecuteError::NotAudited)?;
        let called = if cx.origin.input_requests.is_some() {
            self.call_in_rounds(cx, entry, target, params, &span).await?
        } else {
            target
                .call_tool(params, cx.origin.clone())
                .instrument(span.clone())
                .await
        };
        span.record(
            "outcome",
            match &called {
                // A task or an input request: the call goes on.
                Ok(result) => outcome_of(result).map_or("pending", Outcome::as_str),
                Err(downstream::Error::Timeout { .. }) => Outcome::Timeout.as_str(),
                Err(_) => Outcome::Failed.as_str(),
            },
        );
        let result = called.map_err(|e| match e {
            downstream::Error::TooLarge { bytes, .. } => too_large(entry, &target.config, bytes),
            downstream::Error::SignInRequired { .. } => ExecuteError::Credential(super::route::credential_required(
                &target.config,
                &cx.caller.project.name,
            )),
            e => e.into(),
        })?;
        match result {
            CallToolResponse::Task(created) if cx.origin.tasks => self.adopt_task(cx.caller, &entry.key, created),
            CallToolResponse::Task(created) => Ok(tasks::wait(target, &created).await?),
            result => Ok(result),
        }
    }

    /// A call whose 2025 server may ask mid-call while its caller, a
    /// 2026-07-28 client, reads input requests: a retry picks up the parked
    /// call its `requestState` names; otherwise the call starts. Either runs
    /// to its end or to the server's next question (`rounds_parked.rs`).
    async fn call_in_rounds(
        &self,
        cx: &Context<'_>,
        entry: &Entry,
        target: &Arc<Downstream>,
        params: CallToolRequestParams,
        span: &tracing::Span,
    ) -> Result<Result<CallToolResponse, downstream::Error>, ExecuteError> {
        let key = self
            .vault
            .key_or_create()
            .map_err(|e| ExecuteError::Task(e.to_string()))?;
        let owner = rounds_parked::Owner {
            key: &key,
            project_id: cx.caller.project.id,
            subject: cx.caller.subject.as_deref(),
            tool_key: &entry.key,
        };
        let call = match self.parked.resume(&owner, &params)? {
            Some(parked) => parked,
            None => rounds_parked::Call::start(target.clone(), params, cx.origin.clone(), span.clone()),
        };
        Ok(self.parked.next(call, &owner).instrument(span.clone()).await)
    }

    /// What the server answered, refused past the server's size limit and
    /// screened for what may not reach the caller; the gateway's own `_meta`
    /// keys dropped.
    fn screen(
        &self,
        caller: &Caller,
        entry: &Entry,
        server: &ServerConfig,
        mut result: CallToolResponse,
    ) -> Result<CallToolResponse, ExecuteError> {
        if let CallToolResponse::Complete(r) = &mut result {
            let bytes = json_size(r);
            if bytes > server.max_result_bytes {
                return Err(too_large(entry, server, bytes));
            }
            self.security
                .screen_result(&caller.project.name, server, &entry.real_key, r)?;
            drop_gateway_meta(r);
        }
        Ok(result)
    }

    /// `tool_execute` from its arguments to the answer the caller sees, one
    /// round (see [`Gateway::answer_execute`] for the rounds).
    pub(super) async fn answer_execute_once(&self, cx: &Context<'_>, mut args: ExecuteArgs) -> Answer {
        if let Some(script) = args.script.take() {
            return self.answer_script(cx, script).await;
        }
        let tool_key = args.tool_key.clone();
        let mut answer = match self.execute(cx, args).await {
            Ok(result) => {
                let outcome = outcome_of(&result).unwrap_or(Outcome::Ok);
                Answer::new(result, outcome)
            }
            Err(e) => {
                // Keys are looked up exactly, so every error past the lookup
                // is about the tool the caller's key names; an unknown key,
                // or a server still starting, named no tool the caller sees.
                let resolved = match &e {
                    ExecuteError::NotFound(_) | ExecuteError::Starting { .. } => None,
                    _ => Some(tool_key.as_str()),
                };
                Answer::failed(e, resolved)
            }
        };
        // Only a finished, successful call teaches: not one still asking for input.
        let succeeded = answer.outcome == Outcome::Ok && matches!(answer.result, CallToolResponse::Complete(_));
        if answer.outcome != Outcome::Denied {
            answer.trail = self
                .learning
                .executed(cx.session, cx.caller.learning_scope(), &tool_key, succeeded)
                .await;
        }
        answer
    }
}

/// Drops the gateway's own keys from a downstream's result `_meta`: only the
/// gateway writes its namespace (an App's call-back name among them).
fn drop_gateway_meta(result: &mut CallToolResult) {
    if let Some(meta) = result.meta.as_mut() {
        meta.retain(|k, _| !k.starts_with(wire::GATEWAY_META_PREFIX));
    }
}

/// Bytes of `value` as JSON, counted without building the text.
fn json_size(value: &impl serde::Serialize) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// The tool `key` names in the caller's `view`, or why the caller may not
/// run it. A tool for its App alone may confirm a user's click: hosts keep
/// it from the model, so only the App's path (its listed name, `by_name`)
/// runs it.
fn resolve<'v>(view: &'v View, key: &str, by_name: bool) -> Result<&'v Entry, ExecuteError> {
    view.get(key)
        .filter(|e| by_name || !e.app_only())
        .ok_or_else(|| match view.held(key) {
            Some(held) => ExecuteError::Held {
                key: key.to_string(),
                approve: held.approve.clone(),
                why: held.why.clone(),
            },
            None => match name_not_key(view, key) {
                Some(found) => ExecuteError::NameNotKey {
                    name: key.to_string(),
                    key: found,
                },
                None => ExecuteError::NotFound(key.to_string()),
            },
        })
}

/// The key of the one tool the caller may run (and discover) whose name is
/// `sent`, when `sent` is a name rather than a key (`get-sum` for
/// `everything:get-sum`, as some clients send it).
fn name_not_key(view: &View, sent: &str) -> Option<ToolKey> {
    if split_key(sent).is_some() {
        return None;
    }
    let key = view.key_of_name(sent, false)?;
    let entry = view.get(key).filter(|e| !e.app_only())?;
    Some(entry.key.clone())
}

/// The call's refusal for a result of `bytes`, past `server`'s limit.
fn too_large(entry: &Entry, server: &ServerConfig, bytes: u64) -> ExecuteError {
    let limit = server.max_result_bytes;
    tracing::warn!(tool_key = %entry.key, bytes, limit, "result refused: too large");
    ExecuteError::TooLarge {
        key: entry.key.clone(),
        bytes,
        limit,
    }
}

/// The client side of the exported trace, which the server's joins. Not
/// exported, it is not made (a span costs a call about a fiftieth of its
/// instructions): a line logged within it still carries the call's span,
/// request id and all.
fn downstream_span(entry: &Entry, server: &Downstream) -> tracing::Span {
    if !telemetry::traces::enabled() {
        return tracing::Span::none();
    }
    tracing::info_span!(
        "downstream",
        otel.name = %format_args!("tools/call {}", entry.key),
        otel.kind = "client",
        server = %server.name(),
        tool_key = %entry.key,
        outcome = tracing::field::Empty,
    )
}

/// How an answer ends a call, the one rule: a complete result is `ok`, or
/// a `tool_error` when it says `isError`; a task or an input request has
/// not ended it (`None`).
pub fn outcome_of(result: &CallToolResponse) -> Option<Outcome> {
    match result {
        CallToolResponse::Complete(r) if r.is_error == Some(true) => Some(Outcome::ToolError),
        CallToolResponse::Complete(_) => Some(Outcome::Ok),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolResult, ContentBlock, Tool};
    use serde_json::json;

    use super::*;
    use crate::catalog::Snapshot;
    use store::access::Grants;

    /// A view, for a caller granted `granted`, of `math`'s `add` and of
    /// `confirm`, a tool for its App alone.
    fn view(granted: &str) -> View {
        let add = Tool::new("add", "adds", JsonObject::new());
        let mut confirm = Tool::new("confirm", "confirms a click", JsonObject::new());
        confirm.meta = Some(serde_json::from_value(json!({ "ui": { "visibility": ["app"] } })).unwrap());
        let tools = [add, confirm];
        let snapshot = Snapshot::build([("math", None, &tools[..])], &rules::Rules::default()).unwrap();
        View::new(Arc::new(snapshot), Arc::new(Grants::all_of([granted])))
    }

    #[test]
    fn a_key_resolves_to_the_tool_its_caller_may_run() {
        let granted = view("math");
        assert_eq!(resolve(&granted, "math:add", false).unwrap().real_name(), "add");
        let other = view("other");
        assert!(matches!(
            resolve(&other, "math:add", false),
            Err(ExecuteError::NotFound(k)) if k == "math:add"
        ));
    }

    #[test]
    fn a_tool_for_its_app_alone_runs_only_by_its_listed_name() {
        let view = view("math");
        assert!(matches!(
            resolve(&view, "math:confirm", false),
            Err(ExecuteError::NotFound(_))
        ));
        assert_eq!(resolve(&view, "math:confirm", true).unwrap().real_name(), "confirm");
    }

    #[test]
    fn a_name_sent_for_a_key_is_told_the_key() {
        let view = view("math");
        assert!(matches!(
            resolve(&view, "add", false),
            Err(ExecuteError::NameNotKey { name, key }) if name == "add" && key.as_str() == "math:add"
        ));
        assert!(
            matches!(resolve(&view, "confirm", false), Err(ExecuteError::NotFound(_))),
            "a tool for its App alone is not suggested"
        );
    }

    #[test]
    fn a_complete_answer_is_ok_or_a_tool_error_by_its_is_error() {
        let ok = CallToolResult::success(vec![ContentBlock::text("42")]);
        let failed = CallToolResult::error(vec![ContentBlock::text("no")]);
        assert_eq!(outcome_of(&CallToolResponse::Complete(ok)), Some(Outcome::Ok));
        assert_eq!(
            outcome_of(&CallToolResponse::Complete(failed)),
            Some(Outcome::ToolError)
        );
    }
}
