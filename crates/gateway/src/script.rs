//! Code mode's use case: a `tool_execute` with `script` runs it in the
//! sandbox (`crates/sandbox`) on a thread of its own, and each of its
//! `tools.call`s is a `tool_execute` of the same caller through
//! [`Gateway::answer_execute`]: the same view, rules, held tools, schema
//! check, secret screening, credentials and progress. Each inner call has
//! its own audit row and metrics under the request id `PARENT.N`, so the
//! audit log shows the script as one request (its own row counts its calls)
//! with its inner calls after it. Dropping the script's future (the client
//! cancelled) stops the script and cancels its calls in flight.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
use serde_json::{Value, json};
use tracing::Instrument;

use super::admission::Busy;
use super::audit::{AuditState, Row};
use super::call::{Context, Record};
use super::savings;
use super::{Answer, DiscoverArgs, ExecuteArgs, Gateway, OneOrMany};
use crate::auth::Caller;
use crate::ratelimit::Budget;
use config::code_mode::CodeLimits;
use downstream::CallOrigin;
use sandbox::{self, Call, Gone, Host, Refusal};
use vocab::keys::RequestId;
use vocab::outcome::Outcome;
use vocab::wire::{DISCOVERY, EXECUTE, MetaTool};

/// Results of a `tools.search` without `n`.
const SEARCH_RESULTS: usize = 5;

/// How far past `cpu_ms` or `timeout_ms` a script may run before the
/// gateway answers for it from outside the engine: QuickJS checks its
/// limits between instructions, and a built-in that loops in C (the
/// sandbox bounds the ones known to) does not return to check them.
const OUTSIDE_GRACE: Duration = Duration::from_secs(1);

/// How often the script thread's CPU clock is read from outside.
const WATCH_EVERY: Duration = Duration::from_millis(250);

impl Gateway {
    /// Whether scripts run, with their limits and the projects that differ,
    /// for `/readyz` and `mcp-gateway servers`.
    pub fn code_mode_status(&self) -> Value {
        let settings = self.security.code_mode_settings();
        let l = settings.limits;
        let names = |want: bool| -> Vec<&String> {
            settings
                .projects
                .iter()
                .filter(|(_, (on, _))| *on == want)
                .map(|(name, _)| name)
                .collect()
        };
        json!({
            "enabled": settings.enabled,
            "limits": {
                "memory_mb": l.memory_bytes >> 20, "cpu_ms": l.cpu.as_millis() as u64,
                "timeout_ms": l.timeout.as_millis() as u64, "stack_kb": l.stack_bytes >> 10,
                "max_calls": l.max_calls, "parallel": l.parallel, "max_output_bytes": l.max_output_bytes,
            },
            "caps": {
                "max_scripts": settings.caps.scripts,
                "max_scripts_per_caller": settings.caps.per_caller,
                "max_memory_mb": settings.caps.memory_bytes >> 20,
            },
            "running": self.scripts.running(),
            "projects_on": names(true),
            "projects_off": names(false),
        })
    }

    /// `tool_execute { script }`: the script's return value, logs and call
    /// count, or why it has none, as the model reads it.
    /// Boxed as `dyn Send`: a script's calls come back through
    /// `answer_execute`, and the compiler cannot infer `Send` around that cycle.
    pub(super) fn answer_script<'a>(
        &'a self,
        cx: &'a Context<'a>,
        script: String,
    ) -> Pin<Box<dyn Future<Output = Answer> + Send + 'a>> {
        Box::pin(self.run_script(cx, script))
    }

    async fn run_script(&self, cx: &Context<'_>, script: String) -> Answer {
        let (caller, session) = (cx.caller, cx.session);
        let failed = |message: String| Answer::usage(EXECUTE, &message);
        let Some(limits) = self.security.code_mode(&caller.project.name) else {
            return failed(format!(
                "scripts are off for project '{}' ([security.code_mode] enabled = false); call one tool per tool_execute with toolKey",
                caller.project.name
            ));
        };
        let parent = cx.request_id.clone();
        let caps = self.security.script_caps();
        let ticket = match self
            .scripts
            .admit(&caps, caller_key(caller, session), limits.memory_bytes)
        {
            Ok(ticket) => ticket,
            Err(busy) => {
                tracing::warn!(request_id = %parent, project = caller.project.id, cap = ?busy, "script refused: busy");
                return busy_answer(busy);
            }
        };
        let started = Instant::now();
        let (calls, mut requested) = tokio::sync::mpsc::unbounded_channel();
        let (answers, answered) = std::sync::mpsc::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let _stop = StopOnDrop(Arc::clone(&cancel));
        let (done, mut finished) = tokio::sync::oneshot::channel();
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let sandbox_limits = sandbox_limits(&limits);
        let request_id = parent.clone();
        let spawned = std::thread::Builder::new()
            .name("script".into())
            .stack_size(sandbox::thread_stack_bytes(&sandbox_limits))
            .spawn(move || {
                // Held until the thread ends, whenever the answer left.
                let _ticket = ticket;
                let _ = tid_tx.send(nix::unistd::gettid());
                let mut host = Channel { calls, answered };
                let outcome = sandbox::run(&script, &sandbox_limits, &mut host, &cancel);
                if let Err(outcome) = done.send(outcome) {
                    let cpu_us = outcome.cpu.as_micros() as u64;
                    tracing::info!(
                        request_id = %request_id,
                        calls = outcome.calls,
                        cpu_us,
                        "script stopped: its request was cancelled or answered for"
                    );
                }
            });
        if let Err(e) = spawned {
            tracing::error!(request_id = %parent, error = %e, "no thread for a script");
            return failed("the gateway could not start the script; try again".into());
        }
        let calls_cx = Context {
            caller,
            request_id: cx.request_id,
            meta: cx.meta.clone(),
            origin: CallOrigin {
                progress: cx.origin.progress.clone(),
                // A script's calls ask nobody mid-call, and wait for tasks themselves.
                ask: None,
                input_requests: None,
                tasks: false,
                log: None,
            },
            session,
            // Each call is charged to the script's budget as it starts, below.
            budget: None,
        };
        // Bytes of the tool results the script's calls read (`reply`).
        let received = AtomicU64::new(0);
        type Inner<'a> = Pin<Box<dyn Future<Output = sandbox::Answer> + Send + 'a>>;
        let mut in_flight: FuturesUnordered<Inner<'_>> = FuturesUnordered::new();
        let mut watch = tokio::time::interval(WATCH_EVERY);
        let wall = tokio::time::sleep(limits.timeout + OUTSIDE_GRACE);
        tokio::pin!(wall);
        let mut tid = None;
        let mut started_calls = 0u32;
        let outcome = loop {
            tokio::select! {
                Some((id, call)) = requested.recv() => {
                    started_calls += 1;
                    if let Some(refusal) = cx.budget.and_then(over_budget) {
                        let _ = answers.send((id, Err(refusal)));
                        continue;
                    }
                    let request_id = RequestId::given(&format!("{parent}.{id}"));
                    let call = self.inner(&calls_cx, request_id, call, &received);
                    in_flight.push(Box::pin(async move { (id, call.await) }));
                }
                Some(answer) = in_flight.next(), if !in_flight.is_empty() => {
                    let _ = answers.send(answer);
                }
                outcome = &mut finished => match outcome {
                    Ok(outcome) => break outcome,
                    Err(_) => return failed("the script's thread ended without an answer".into()),
                },
                _ = watch.tick() => {
                    tid = tid.or_else(|| tid_rx.try_recv().ok());
                    let cpu = tid.and_then(thread_cpu);
                    if cpu.is_some_and(|cpu| cpu > limits.cpu + OUTSIDE_GRACE) {
                        break answered_for(sandbox::Error::Cpu { limit: limits.cpu }, started_calls, cpu);
                    }
                }
                _ = &mut wall => {
                    let cpu = tid.and_then(thread_cpu);
                    break answered_for(sandbox::Error::Timeout { limit: limits.timeout }, started_calls, cpu);
                }
            }
        };
        // Calls the script did not wait for are cancelled here (their rows say failed).
        drop(in_flight);
        tracing::info!(
            request_id = %parent,
            project = caller.project.id,
            calls = outcome.calls,
            cpu_us = outcome.cpu.as_micros() as u64,
            latency_us = started.elapsed().as_micros() as u64,
            error = outcome.result.as_ref().err().map(sandbox::Error::code),
            "script"
        );
        telemetry::script(
            outcome.result.as_ref().err().map_or("ok", sandbox::Error::code),
            outcome.cpu,
        );
        let (mut answer, answered) = answer(outcome);
        let kept = savings::kept(received.load(Ordering::Relaxed), answered);
        telemetry::bytes_kept(&caller.project.name, kept);
        answer.kept_bytes = Some(kept);
        answer
    }

    /// One `tools.call` or `tools.search` of a script, as its own
    /// `tool_execute` or `tool_discovery` with its own audit row.
    async fn inner(
        &self,
        cx: &Context<'_>,
        request_id: RequestId,
        call: Call,
        received: &AtomicU64,
    ) -> Result<Value, Refusal> {
        let caller = cx.caller;
        let started = Instant::now();
        let (meta_tool, key) = match &call {
            Call::Tool { key, .. } => (MetaTool::Execute, Some(key.clone())),
            Call::Search { .. } => (MetaTool::Discovery, None),
        };
        let span = tracing::info_span!(
            "script_call",
            request_id = %request_id,
            meta_tool = meta_tool.as_str(),
            tool_key = %key.as_deref().map(leaks::quote).unwrap_or_default(),
            project = tracing::field::Empty,
            outcome = tracing::field::Empty,
        );
        // A call cancelled with its script still gets its one row.
        let mut unfinished = Unfinished {
            gateway: self.clone(),
            row: Some(
                Row::new(&request_id, meta_tool.as_str())
                    .caller(caller)
                    .key(self.audited_key(caller, key.as_deref()).as_deref())
                    .build(),
            ),
        };
        // A search's reply is its results; a call's is read from its answer.
        let (answer, searched) = match call {
            Call::Tool { key, arguments } => {
                let call_cx = Context {
                    request_id: &request_id,
                    meta: cx.meta.clone(),
                    origin: cx.origin.clone(),
                    ..*cx
                };
                let args = ExecuteArgs {
                    tool_key: key,
                    arguments: Some(arguments),
                    ..Default::default()
                };
                let answer = self.answer_execute(&call_cx, args).instrument(span.clone()).await;
                (answer, None)
            }
            Call::Search { query, limit } => {
                let args = DiscoverArgs {
                    query: OneOrMany::One(query),
                    context: None,
                    max_results: Some(limit.map_or(SEARCH_RESULTS as i64, i64::from)),
                    servers: None,
                };
                match self.discover(caller, &args).instrument(span.clone()).await {
                    Ok(d) => {
                        let found: Vec<Value> = d
                            .results
                            .iter()
                            .map(|f| {
                                json!({
                                    "toolKey": f.tool_key,
                                    "description": f.description.as_deref().and_then(|d| d.lines().next()),
                                    "signature": f.signature,
                                })
                            })
                            .collect();
                        let answer = Answer {
                            result_count: Some(found.len() as u64),
                            ..Answer::new(CallToolResult::success(Vec::new()), Outcome::Ok)
                        };
                        (answer, Some(Value::Array(found)))
                    }
                    Err(message) => (failed_answer(message), None),
                }
            }
        };
        unfinished.row = None;
        // The metric, access log line and audit row of any call (`call.rs`).
        let record = Record {
            meta_tool,
            request_id: &request_id,
            caller,
            tool_key: key,
            started,
        };
        let answer = self.record(record, answer).instrument(span).await;
        match (searched, answer.audit) {
            (Some(found), AuditState::Due) => Ok(found),
            _ => reply(&answer).map(|(value, bytes)| {
                received.fetch_add(bytes, Ordering::Relaxed);
                value
            }),
        }
    }
}

/// Who a script counts against for `max_scripts_per_caller`: its token,
/// its OAuth subject, or else (anonymous access) its session.
fn caller_key(caller: &Caller, session: &str) -> String {
    caller
        .identity()
        .unwrap_or_else(|| format!("session:{}:{session}", caller.project.id))
}

/// A script past a cap: refused before it starts, with its own code.
fn busy_answer(busy: Busy) -> Answer {
    let message = busy.to_string();
    let mut result = CallToolResult::error(vec![ContentBlock::text(format!("{}: {message}", Busy::CODE))]);
    result.structured_content = Some(json!({ "error": { "code": Busy::CODE, "message": message } }));
    Answer::refused(result, Outcome::Failed, Busy::CODE)
}

/// The outcome of a script the gateway answers for from outside the
/// engine: its thread is told to stop, and keeps its place under the caps
/// until it has.
fn answered_for(why: sandbox::Error, calls: u32, cpu: Option<Duration>) -> sandbox::Outcome {
    tracing::warn!(error = why.code(), "script answered for from outside its engine");
    sandbox::Outcome {
        result: Err(why),
        logs: Vec::new(),
        calls,
        cpu: cpu.unwrap_or_default(),
    }
}

/// CPU time of thread `tid` of this process (Linux's schedstat, in ns), or
/// `None` where the kernel does not say.
fn thread_cpu(tid: nix::unistd::Pid) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).ok()?;
    let ns: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// A script's call over its caller's request rate: refused as an HTTP
/// request would be, with no row (nothing ran), for the script to see.
fn over_budget(budget: &Budget) -> Option<Refusal> {
    let seconds = budget.take().err()?;
    Some(Refusal {
        code: "RATE_LIMITED".into(),
        message: format!(
            "too many calls; retry in {seconds} s ([http] requests_per_minute counts each call a script makes)"
        ),
    })
}

/// The limits of the sandbox from the project's settings.
fn sandbox_limits(l: &CodeLimits) -> sandbox::Limits {
    sandbox::Limits {
        memory_bytes: l.memory_bytes,
        cpu: l.cpu,
        wall: l.timeout,
        stack_bytes: l.stack_bytes,
        max_calls: l.max_calls,
        parallel: l.parallel,
        max_output_bytes: l.max_output_bytes,
    }
}

/// What `tools.call` resolves to: the tool's result (`isError` included),
/// with its text blocks joined as `text`, and the bytes of the result as
/// the server sent it; or, when the gateway refused or failed the call (or
/// withheld its answer), a rejection with the code and message
/// `tool_execute` gives.
fn reply(answer: &Answer) -> Result<(Value, u64), Refusal> {
    let CallToolResponse::Complete(result) = &answer.result else {
        return Err(Refusal {
            code: "TOOL_INPUT_UNANSWERED".into(),
            message: "the tool asked for input mid-call, which a script cannot give; call it with tool_execute".into(),
        });
    };
    let text: Vec<&str> = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect();
    if matches!(answer.outcome, Outcome::Ok | Outcome::ToolError) && answer.audit == AuditState::Due {
        let mut value = serde_json::to_value(result).unwrap_or_default();
        let bytes = value.to_string().len() as u64;
        value["text"] = text.join("\n").into();
        return Ok((value, bytes));
    }
    Err(Refusal {
        code: answer.code.unwrap_or("TOOL_EXECUTION_ERROR").into(),
        message: text.join("\n"),
    })
}

fn failed_answer(message: String) -> Answer {
    Answer::usage(DISCOVERY, &message)
}

/// The script's answer: `{result, logs, calls}` or `{error, logs, calls}`,
/// as structured content and as its text twin, and the bytes of that text.
fn answer(outcome: sandbox::Outcome) -> (Answer, u64) {
    let calls = outcome.calls;
    let (mut body, result_outcome, code) = match outcome.result {
        Ok(value) => (json!({ "result": value }), Outcome::Ok, None),
        Err(e) => {
            let outcome = match e {
                sandbox::Error::Timeout { .. } => Outcome::Timeout,
                _ => Outcome::Failed,
            };
            (
                json!({ "error": { "code": e.code(), "message": e.to_string() } }),
                outcome,
                Some(e.code()),
            )
        }
    };
    if !outcome.logs.is_empty() {
        body["logs"] = json!(outcome.logs);
    }
    body["calls"] = calls.into();
    let text = body.to_string();
    let bytes = text.len() as u64;
    let text = ContentBlock::text(text);
    let mut result = match result_outcome {
        Outcome::Ok => CallToolResult::success(vec![text]),
        _ => CallToolResult::error(vec![text]),
    };
    result.structured_content = Some(body);
    let answer = Answer {
        code,
        result_count: Some(u64::from(calls)),
        ..Answer::new(result, result_outcome)
    };
    (answer, bytes)
}

/// The sandbox's end of the channels to the request's task.
struct Channel {
    calls: tokio::sync::mpsc::UnboundedSender<(u64, Call)>,
    answered: std::sync::mpsc::Receiver<sandbox::Answer>,
}

impl Host for Channel {
    fn start(&mut self, id: u64, call: Call) {
        // A send fails only once the request is gone, and `next` then says so.
        let _ = self.calls.send((id, call));
    }

    fn next(&mut self, timeout: Duration) -> Result<Option<sandbox::Answer>, Gone> {
        use std::sync::mpsc::RecvTimeoutError;
        match self.answered.recv_timeout(timeout) {
            Ok(answer) => Ok(Some(answer)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(Gone),
        }
    }
}

/// Stops the script when its request's future is dropped.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// The `failed` row of an inner call dropped before it ended.
struct Unfinished {
    gateway: Gateway,
    row: Option<store::AuditRow>,
}

impl Drop for Unfinished {
    fn drop(&mut self) {
        if let Some(row) = self.row.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let gateway = self.gateway.clone();
            runtime.spawn(async move {
                let _ = gateway.audit(row, false).await;
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_carry_result_or_error_logs_and_calls() {
        let (ok, bytes) = answer(sandbox::Outcome {
            result: Ok(json!({ "n": 1 })),
            logs: vec!["hi".into()],
            calls: 3,
            cpu: Duration::ZERO,
        });
        let CallToolResponse::Complete(r) = &ok.result else {
            panic!()
        };
        assert_eq!(
            r.structured_content,
            Some(json!({ "result": { "n": 1 }, "logs": ["hi"], "calls": 3 }))
        );
        assert_eq!((ok.outcome, ok.result_count), (Outcome::Ok, Some(3)));
        assert_eq!(bytes, r#"{"calls":3,"logs":["hi"],"result":{"n":1}}"#.len() as u64);
        let (failed, _) = answer(sandbox::Outcome {
            result: Err(sandbox::Error::NeverResolves),
            logs: Vec::new(),
            calls: 0,
            cpu: Duration::ZERO,
        });
        let CallToolResponse::Complete(r) = &failed.result else {
            panic!()
        };
        assert_eq!(r.is_error, Some(true));
        assert_eq!(
            r.structured_content.as_ref().unwrap()["error"]["code"],
            "SCRIPT_NEVER_RESOLVES"
        );
    }
}
