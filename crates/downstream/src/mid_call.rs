//! Requests a 2025 downstream sends the gateway in the middle of a call
//! (`elicitation/create`, `sampling/createMessage`, `roots/list`), relayed to
//! the upstream client that made the call, and the answer back: put to a
//! 2025 client over its session, or handed to the gateway as an input
//! request for a 2026-07-28 client, which cannot be asked mid-call
//! (`gateway/rounds_parked.rs` turns it into an `InputRequiredResult`).
//!
//! The 2025 protocol does not say which call such a request belongs to (on
//! stdio there is one stream for all, and rmcp's HTTP client merges the
//! streams), so it is tied to the one call in flight on the connection that
//! made it, or to the one 2025 session all the calls in flight belong to;
//! with none, or calls of several callers, it is refused rather than put to
//! the wrong person. A call's relayed requests end with the call. Its log
//! messages (`notifications/message`) go to that caller by the same rule, at
//! the level the caller asked for, and otherwise to nobody.

// Sampling and roots are deprecated by 2026-07-28 (SEP-2577), but 2025 servers still
// send them: relaying them is the point of this module.
#![allow(deprecated)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{
    ClientCapabilities, ClientResult, CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequest, ElicitRequestParams, ElicitResult, ErrorData, InputRequest, ListRootsRequest, ListRootsResult,
    LoggingLevel, LoggingMessageNotificationParam, ServerRequest,
};
use rmcp::service::Peer;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// How long a person may take to answer one question.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(600);

/// How long after a call's answer its log messages still go to its caller.
const LOG_GRACE: Duration = Duration::from_millis(100);

/// Whom a call's mid-call requests go to.
#[derive(Debug, Clone)]
pub enum Asker {
    /// A 2025 client, asked over its session (`session` names it).
    Session {
        /// The client.
        peer: Peer<RoleServer>,
        /// Its session, as the gateway keys sessions.
        session: String,
    },
    /// A 2026-07-28 client with these capabilities: each request goes out as
    /// an input request of the call's answer, and comes back with its retry.
    Rounds(mpsc::Sender<Asked>, ClientCapabilities),
}

/// A request handed out as an input request, and where its answer goes
/// (the client's result, or why there is none).
#[derive(Debug)]
pub struct Asked {
    /// The request, as an input request.
    pub request: InputRequest,
    /// The client's answer.
    pub answer: oneshot::Sender<Result<Value, String>>,
}

/// Where a call's log messages go: its caller, from `level` up.
#[derive(Debug, Clone)]
pub struct LogTo {
    /// The caller (its session, or its 2026-07-28 request's stream).
    pub peer: Peer<RoleServer>,
    /// The least severe level it asked for; `None`: it asked for none.
    pub level: Option<LoggingLevel>,
    /// Who the caller is (its session, or its token and subject): a message
    /// that may belong to any of several calls goes on only when all are one caller's.
    pub caller: String,
}

impl LogTo {
    fn wants(&self, level: LoggingLevel) -> bool {
        // Declared from the least severe up.
        self.level.is_some_and(|least| level as u8 >= least as u8)
    }
}

/// The calls in flight on one connection whose callers may be asked.
#[derive(Debug, Default)]
pub struct Asks {
    calls: Mutex<HashMap<u64, (Asker, CancellationToken)>>,
    /// Where each of those calls' log messages go, if anywhere.
    logs: Mutex<HashMap<u64, LogTo>>,
    /// The last call to end, and when: its log messages may be handled just
    /// after its answer (rmcp handles notifications on tasks of their own).
    ended: Mutex<Option<(std::time::Instant, LogTo)>>,
    next: AtomicU64,
    /// Calls in flight whose callers cannot be asked (a script's calls, the command line).
    mute: AtomicU64,
}

/// One call in flight; dropping it ends the requests relayed for it.
#[derive(Debug)]
pub struct InFlight {
    asks: Arc<Asks>,
    id: Option<u64>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        match self.id {
            Some(id) => {
                if let Some(log) = self.asks.logs.lock().expect("logs lock").remove(&id) {
                    *self.asks.ended.lock().expect("ended lock") = Some((std::time::Instant::now(), log));
                }
                if let Some((_, ended)) = self.asks.calls.lock().expect("asks lock").remove(&id) {
                    ended.cancel();
                }
            }
            None => {
                self.asks.mute.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }
}

impl Asks {
    /// Registers a call whose caller may be asked through `asker` (and
    /// reads its log messages through `log`), or, with `None`, one whose
    /// caller cannot be.
    pub fn enter(self: &Arc<Self>, asker: Option<Asker>, log: Option<LogTo>) -> InFlight {
        let id = asker.map(|asker| {
            let id = self.next.fetch_add(1, Ordering::SeqCst);
            if let Some(log) = log {
                self.logs.lock().expect("logs lock").insert(id, log);
            }
            let calls = &mut self.calls.lock().expect("asks lock");
            calls.insert(id, (asker, CancellationToken::new()));
            id
        });
        if id.is_none() {
            self.mute.fetch_add(1, Ordering::SeqCst);
        }
        InFlight { asks: self.clone(), id }
    }

    /// The caller of the calls in flight, and when they end: the one call's,
    /// or, for several calls of one 2025 session, that session's until the
    /// last of them ends (its user is the one to ask either way).
    fn asker(&self, what: &str) -> Result<(Asker, CancellationToken), ErrorData> {
        let calls = self.calls.lock().expect("asks lock");
        let mute = self.mute.load(Ordering::SeqCst);
        if mute == 0
            && calls.len() > 1
            && let Some((asker, ended)) = one_session(calls.values())
        {
            return Ok((asker, ended));
        }
        match (calls.len(), mute) {
            (1, 0) => Ok(calls.values().next().cloned().expect("one call")),
            (0, 0) => Err(refused(format!(
                "{what} outside any call: the gateway relays it only during a tool call"
            ))),
            (0, _) => Err(refused(format!(
                "{what}: nobody can be asked mid-call here (the call came from a script or the command line); call the tool with tool_execute from a client that can answer"
            ))),
            _ => Err(refused(format!(
                "{what}: calls of several callers are in flight on this connection, and the gateway cannot tell whose user to ask"
            ))),
        }
    }

    /// A log message of the server's, relayed to the caller of the calls in
    /// flight (or of the call that just ended) if it asked for that level;
    /// credentials in it redacted. A message outside a call, or while calls
    /// of several callers may have sent it, is dropped: it may be about any
    /// of them.
    pub async fn log(&self, mut params: LoggingMessageNotificationParam) {
        let Some(to) = self.log_route().filter(|to| to.wants(params.level)) else {
            tracing::debug!(
                "a downstream log message below its caller's level, or with no one caller to go to; dropped"
            );
            return;
        };
        leaks::redact(&mut params.data);
        let _ = to.peer.notify_logging_message(params).await;
    }

    /// The one caller a log message may be from, when every call in flight,
    /// and the one that ended within [`LOG_GRACE`], are that caller's: a
    /// call in flight's route first (a 2026-07-28 request's stream ends
    /// with its answer).
    fn log_route(&self) -> Option<LogTo> {
        let calls = self.calls.lock().expect("asks lock");
        if self.mute.load(Ordering::SeqCst) > 0 {
            return None;
        }
        let logs = self.logs.lock().expect("logs lock");
        let current: Vec<Option<&LogTo>> = calls.keys().map(|id| logs.get(id)).collect();
        let ended = self.ended.lock().expect("ended lock");
        let recent = ended
            .as_ref()
            .filter(|(at, _)| at.elapsed() < LOG_GRACE)
            .map(|(_, log)| log);
        attributed(&current, recent, |log| &log.caller).cloned()
    }

    /// `elicitation/create`, put to the caller.
    pub async fn elicit(&self, params: ElicitRequestParams) -> Result<ElicitResult, ErrorData> {
        match self
            .put(
                "elicitation/create",
                ServerRequest::ElicitRequest(ElicitRequest::new(params)),
            )
            .await?
        {
            ClientResult::ElicitResult(r) => Ok(r),
            _ => Err(refused(
                "elicitation/create: the client answered with something else".into(),
            )),
        }
    }

    /// `sampling/createMessage`, put to the caller.
    pub async fn create_message(&self, params: CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorData> {
        let request = ServerRequest::CreateMessageRequest(CreateMessageRequest::new(params));
        match self.put("sampling/createMessage", request).await? {
            ClientResult::CreateMessageResult(r) => Ok(*r),
            _ => Err(refused(
                "sampling/createMessage: the client answered with something else".into(),
            )),
        }
    }

    /// `roots/list`, put to the caller; outside any call, no roots (the
    /// gateway has none of its own, and does not declare the capability, so
    /// that servers keep the directories they were configured with).
    pub async fn list_roots(&self) -> Result<ListRootsResult, ErrorData> {
        if self.calls.lock().expect("asks lock").is_empty() && self.mute.load(Ordering::SeqCst) == 0 {
            return Ok(ListRootsResult::default());
        }
        match self
            .put(
                "roots/list",
                ServerRequest::ListRootsRequest(ListRootsRequest::default()),
            )
            .await?
        {
            ClientResult::ListRootsResult(r) => Ok(r),
            _ => Err(refused("roots/list: the client answered with something else".into())),
        }
    }

    /// `request`, put to the caller of the one call in flight.
    async fn put(&self, what: &str, request: ServerRequest) -> Result<ClientResult, ErrorData> {
        let (asker, ended) = self.asker(what)?;
        let answer = match asker {
            Asker::Session { peer, .. } => send(&peer, request, &ended).await,
            Asker::Rounds(rounds, capabilities) => match declared(&capabilities, &request) {
                true => hand_out(&rounds, request, &ended).await,
                false => Err(Unanswered::Undeclared),
            },
        };
        answer.map_err(|e| match e {
            Unanswered::Undeclared => ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!("{what}: the client did not declare that capability"),
                None,
            ),
            Unanswered::Refused(e) => e,
            other => refused(format!("{what}: {other}")),
        })
    }
}

/// Why a request put to a client got no answer.
#[derive(Debug, thiserror::Error)]
pub enum Unanswered {
    /// The client did not declare the capability it needs.
    #[error("the client did not declare that capability")]
    Undeclared,
    /// The client answered with an error.
    #[error("the client refused: {}", .0.message)]
    Refused(ErrorData),
    /// The connection failed.
    #[error("the client could not answer: {0}")]
    Failed(String),
    /// No answer in time.
    #[error("no answer within {} s", ANSWER_TIMEOUT.as_secs())]
    TimedOut,
    /// The call the request belongs to ended first.
    #[error("the call it belongs to ended")]
    Ended,
}

/// When every call in flight belongs to one 2025 session: its asker, and a
/// token that ends when the last of those calls does.
fn one_session<'a>(calls: impl Iterator<Item = &'a (Asker, CancellationToken)>) -> Option<(Asker, CancellationToken)> {
    let calls: Vec<_> = calls.collect();
    let Asker::Session { session, .. } = &calls.first()?.0 else {
        return None;
    };
    let same = |asker: &Asker| matches!(asker, Asker::Session { session: s, .. } if s == session);
    if !calls.iter().all(|(asker, _)| same(asker)) {
        return None;
    }
    let ended = CancellationToken::new();
    let tokens: Vec<CancellationToken> = calls.iter().map(|(_, t)| t.clone()).collect();
    let all_ended = ended.clone();
    tokio::spawn(async move {
        futures::future::join_all(tokens.iter().map(CancellationToken::cancelled)).await;
        all_ended.cancel();
    });
    Some((calls[0].0.clone(), ended))
}

/// The route of the one caller a message may be from: every call in flight
/// (`current`; `None`, a call whose caller reads no log messages) and the
/// call that just ended (`recent`) are that caller's (`caller` says whose).
/// A call in flight's route first (a 2026-07-28 request's stream ends with
/// its answer); none when there is no call, or calls of several callers.
fn attributed<'a, T>(current: &[Option<&'a T>], recent: Option<&'a T>, caller: impl Fn(&T) -> &str) -> Option<&'a T> {
    let current: Vec<&T> = current.iter().copied().collect::<Option<_>>()?;
    let route = current.first().copied().or(recent)?;
    let one = current
        .iter()
        .copied()
        .chain(recent)
        .all(|r| caller(r) == caller(route));
    one.then_some(route)
}

/// Whether a client with `capabilities` can answer `request`.
fn declared(capabilities: &ClientCapabilities, request: &ServerRequest) -> bool {
    match request {
        // An empty `elicitation` is the form alone (as before URL mode).
        ServerRequest::ElicitRequest(r) => capabilities.elicitation.as_ref().is_some_and(|e| match &r.params {
            ElicitRequestParams::UrlElicitationParams { .. } => e.url.is_some(),
            _ => e.form.is_some() || e.url.is_none(),
        }),
        ServerRequest::CreateMessageRequest(_) => capabilities.sampling.is_some(),
        ServerRequest::ListRootsRequest(_) => capabilities.roots.is_some(),
        _ => false,
    }
}

/// Hands `request` to the gateway as an input request of the call's answer,
/// and waits for the caller's retry to bring the answer back (or the call to end).
async fn hand_out(
    rounds: &mpsc::Sender<Asked>,
    request: ServerRequest,
    ended: &CancellationToken,
) -> Result<ClientResult, Unanswered> {
    let (kind, request) = match request {
        ServerRequest::ElicitRequest(r) => (Kind::Elicit, InputRequest::Elicitation(r)),
        ServerRequest::CreateMessageRequest(r) => (Kind::Sample, InputRequest::CreateMessage(r)),
        ServerRequest::ListRootsRequest(r) => (Kind::Roots, InputRequest::ListRoots(r)),
        _ => return Err(Unanswered::Undeclared),
    };
    let (answer, answered) = oneshot::channel();
    rounds
        .send(Asked { request, answer })
        .await
        .map_err(|_| Unanswered::Ended)?;
    // A dropped sender: the call ended without coming back for the answer.
    let answer = within(ended, answered)
        .await?
        .map_err(|_| Unanswered::Ended)?
        .map_err(Unanswered::Failed)?;
    kind.read(answer)
        .map_err(|e| Unanswered::Failed(format!("its answer does not fit the request: {e}")))
}

/// The kinds of request a client answers, to read its answer as the right one.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Elicit,
    Sample,
    Roots,
}

impl Kind {
    fn read(self, answer: Value) -> Result<ClientResult, serde_json::Error> {
        Ok(match self {
            Self::Elicit => ClientResult::ElicitResult(serde_json::from_value(answer)?),
            Self::Sample => ClientResult::CreateMessageResult(Box::new(serde_json::from_value(answer)?)),
            Self::Roots => ClientResult::ListRootsResult(serde_json::from_value(answer)?),
        })
    }
}

/// Puts `request` (elicitation, sampling or roots) to the client over `peer`
/// if it declared that capability; ends when `ended` does, or after 10 minutes.
pub async fn send(
    peer: &Peer<RoleServer>,
    request: ServerRequest,
    ended: &CancellationToken,
) -> Result<ClientResult, Unanswered> {
    let capabilities = peer.peer_info().map(|i| i.capabilities.clone()).unwrap_or_default();
    if !declared(&capabilities, &request) {
        return Err(Unanswered::Undeclared);
    }
    match within(ended, peer.send_request(request)).await? {
        Ok(answer) => Ok(answer),
        Err(rmcp::ServiceError::McpError(e)) => Err(Unanswered::Refused(e)),
        Err(e) => Err(Unanswered::Failed(e.to_string())),
    }
}

/// `answer`, unless `ended` comes first or a person takes longer than [`ANSWER_TIMEOUT`].
async fn within<T>(ended: &CancellationToken, answer: impl Future<Output = T>) -> Result<T, Unanswered> {
    tokio::select! {
        answer = tokio::time::timeout(ANSWER_TIMEOUT, answer) => answer.map_err(|_| Unanswered::TimedOut),
        _ = ended.cancelled() => Err(Unanswered::Ended),
    }
}

fn refused(message: String) -> ErrorData {
    ErrorData::invalid_request(message, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A call's route: (caller, call).
    #[derive(Debug, PartialEq)]
    struct Route(&'static str, u8);

    fn to(current: &[Option<&Route>], recent: Option<&Route>) -> Option<(&'static str, u8)> {
        attributed(current, recent, |r| r.0).map(|r| (r.0, r.1))
    }

    /// A question goes only to a client that declared its mode; an empty
    /// `elicitation` (as before URL mode) is the form alone.
    #[test]
    fn a_question_needs_its_mode_declared() {
        let ask = |params: serde_json::Value| {
            ServerRequest::ElicitRequest(ElicitRequest::new(serde_json::from_value(params).unwrap()))
        };
        let form = ask(
            serde_json::json!({ "mode": "form", "message": "Sure?", "requestedSchema": { "type": "object", "properties": {} } }),
        );
        let url = ask(
            serde_json::json!({ "mode": "url", "message": "Sign in", "url": "https://example.com/x", "elicitationId": "1" }),
        );
        let declaring = |elicitation: serde_json::Value| -> ClientCapabilities {
            serde_json::from_value(serde_json::json!({ "elicitation": elicitation })).unwrap()
        };
        let (empty, forms, urls) = (
            declaring(json!({})),
            declaring(json!({ "form": {} })),
            declaring(json!({ "url": {} })),
        );
        assert!(declared(&empty, &form) && !declared(&empty, &url));
        assert!(declared(&forms, &form) && !declared(&forms, &url));
        assert!(!declared(&urls, &form) && declared(&urls, &url));
        assert!(!declared(&ClientCapabilities::default(), &form));
    }

    #[test]
    fn a_log_message_goes_only_to_the_one_caller_it_can_be_from() {
        let (a1, a2, b) = (Route("alice", 1), Route("alice", 2), Route("bob", 1));
        assert_eq!(to(&[Some(&a1)], None), Some(("alice", 1)));
        assert_eq!(
            to(&[Some(&a1), Some(&a2)], None),
            Some(("alice", 1)),
            "two calls of one caller"
        );
        assert_eq!(to(&[Some(&a1), Some(&b)], None), None, "calls of two callers");
        assert_eq!(to(&[], Some(&a1)), Some(("alice", 1)), "just after its call ended");
        assert_eq!(to(&[Some(&a2)], Some(&a1)), Some(("alice", 2)), "its next call began");
        assert_eq!(to(&[Some(&b)], Some(&a1)), None, "another caller's call began");
        assert_eq!(to(&[None], None), None, "a caller that reads none");
        assert_eq!(to(&[Some(&a1), None], None), None, "beside one that reads none");
        assert_eq!(to(&[], None), None, "outside any call");
    }
}
