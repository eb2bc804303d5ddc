//! `tool_execute`: one call through the caller's view, its checks, its
//! server's connection and the screening of what comes back.

use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, JsonObject};
use serde_json::Value;
use tracing::Instrument;

use super::audit::Row;
use super::call::Context;
use super::{Answer, ExecuteArgs, ExecuteError, Gateway, rounds, tasks};
use vocab::keys::ToolKey;
use vocab::outcome::Outcome;
use vocab::wire::{self, EXECUTE, split_key};

impl Gateway {
    /// `tool_execute`: validates and forwards one call; the downstream result
    /// comes back unchanged. The context's `meta` is forwarded as the
    /// call's `_meta`, with its request id; its `origin` says where the
    /// downstream's progress goes and whom its mid-call requests may be put to.
    async fn execute(&self, cx: &Context<'_>, args: ExecuteArgs) -> Result<CallToolResponse, ExecuteError> {
        let (caller, request_id, origin) = (cx.caller, cx.request_id, cx.origin.clone());
        let mut view = self.catalog.view_of(caller);
        if view.get(&args.tool_key).is_none()
            && let Some((server, _)) = split_key(&args.tool_key)
        {
            // Its server may still be in its first connection: wait for it, then look again.
            if !self.wait_for_starting(&caller.grants, Some(server)).await.is_empty() {
                return Err(ExecuteError::Starting {
                    key: args.tool_key.clone(),
                    server: server.to_string(),
                });
            }
            self.own_listing(caller, server).await?;
            view = self.catalog.view_of(caller);
        }
        // A tool for its App alone may confirm a user's click: hosts keep it
        // from the model, so only the App's path (its listed name) runs it.
        let entry = view
            .get(&args.tool_key)
            .filter(|e| args.by_name || !e.app_only())
            .ok_or_else(|| match view.held(&args.tool_key) {
                Some(held) => ExecuteError::Held {
                    key: args.tool_key.clone(),
                    approve: held.approve.clone(),
                    why: held.why.clone(),
                },
                None => match name_not_key(&view, &args.tool_key) {
                    Some(key) => ExecuteError::NameNotKey {
                        name: args.tool_key.clone(),
                        key,
                    },
                    None => ExecuteError::NotFound(args.tool_key.clone()),
                },
            })?;
        let arguments = match args.arguments {
            None | Some(Value::Null) => Value::Object(JsonObject::new()),
            Some(v) => v,
        };
        entry
            .check_arguments(&arguments)
            .map_err(|violations| ExecuteError::Invalid {
                key: entry.key.clone(),
                violations,
            })?;
        let Value::Object(mut arguments) = arguments else {
            return Err(ExecuteError::Invalid {
                key: entry.key.clone(),
                violations: vec!["arguments must be an object".into()],
            });
        };
        let server = self
            .registry
            .get(&entry.server)
            .ok_or_else(|| ExecuteError::NotFound(args.tool_key.clone()))?;
        self.security
            .screen_arguments(&caller.project.name, &server.config, &entry.real_key, &mut arguments)?;
        let mut meta = cx.meta.clone();
        // The caller's `_meta` reaches the server as the arguments do.
        self.security
            .screen_meta(&caller.project.name, &server.config, &entry.real_key, &mut meta)?;
        meta.insert(wire::REQUEST_ID_META.into(), request_id.as_str().into());
        let target = self.target(caller, &server, &mut meta).await?;
        // Counted last of the checks: a call refused for another reason spends nothing.
        self.count_call(caller, entry)?;
        // The client side of the exported trace, which the server's joins.
        // Not exported, it is not made (a span costs a call about a
        // fiftieth of its instructions): a line logged within it still
        // carries the call's span, request id and all.
        let span = if telemetry::traces::enabled() {
            tracing::info_span!(
                "downstream",
                otel.name = %format_args!("tools/call {}", entry.key),
                otel.kind = "client",
                server = %server.name(),
                tool_key = %entry.key,
                outcome = tracing::field::Empty,
            )
        } else {
            tracing::Span::none()
        };
        telemetry::traces::propagate(&span, &mut meta);
        // The server knows the tool by its own name, whatever an override called it.
        let mut params = CallToolRequestParams::new(entry.real_name().to_string()).with_arguments(arguments);
        let (responses, state) = (args.retry.input_responses, args.retry.request_state);
        params.input_responses = responses.clone();
        params.request_state = state.clone();
        params.meta = (!meta.is_empty()).then(|| meta.into());
        let too_large = |bytes| {
            let limit = server.config.max_result_bytes;
            tracing::warn!(tool_key = %entry.key, bytes, limit, "result refused: too large");
            ExecuteError::TooLarge {
                key: entry.key.clone(),
                bytes,
                limit,
            }
        };
        let caller_polls = origin.tasks;
        // The trace a crash cannot erase: written, in strict mode durably,
        // before the server is called (its outcome row replaces it).
        let row = Row::new(request_id, EXECUTE)
            .caller(caller)
            .key(Some(&entry.real_key))
            .outcome(Outcome::Started);
        self.audit(row.build(), true).await.map_err(ExecuteError::NotAudited)?;
        let called = if origin.input_requests.is_some() {
            // A 2025 downstream's mid-call requests come back as input requests (rounds.rs).
            let key = self
                .vault
                .key_or_create()
                .map_err(|e| ExecuteError::Task(e.to_string()))?;
            let (project, subject) = (caller.project.id, caller.subject.as_deref());
            let call =
                match self
                    .rounds
                    .resume(&key, project, subject, &entry.key, state.as_deref(), responses.as_ref())?
                {
                    Some(parked) => parked,
                    None => rounds::Call::start(target.clone(), params, origin, span.clone()),
                };
            self.rounds
                .next(call, &key, project, subject, &entry.key)
                .instrument(span.clone())
                .await
        } else {
            target.call_tool(params, origin).instrument(span.clone()).await
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
        let mut result = called.map_err(|e| match e {
            downstream::Error::TooLarge { bytes, .. } => too_large(bytes),
            downstream::Error::SignInRequired { .. } => {
                ExecuteError::Credential(super::target::credential_required(&target.config, &caller.project.name))
            }
            e => e.into(),
        })?;
        if let CallToolResponse::Task(created) = result {
            if caller_polls {
                return self.adopt_task(caller, &entry.key, created);
            }
            result = tasks::wait(&target, &created).await?;
        }
        if let CallToolResponse::Complete(r) = &mut result {
            let bytes = json_size(r);
            if bytes > server.config.max_result_bytes {
                return Err(too_large(bytes));
            }
            self.security
                .screen_result(&caller.project.name, &server.config, &entry.real_key, r)?;
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

/// The key of the one tool the caller may run (and discover) whose name is
/// `sent`, when `sent` is a name rather than a key (`get-sum` for
/// `everything:get-sum`, as some clients send it).
fn name_not_key(view: &crate::catalog::View, sent: &str) -> Option<ToolKey> {
    if split_key(sent).is_some() {
        return None;
    }
    let key = view.key_of_name(sent, false)?;
    let entry = view.get(key).filter(|e| !e.app_only())?;
    Some(entry.key.clone())
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
    use rmcp::model::{CallToolResult, ContentBlock};

    use super::*;

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
