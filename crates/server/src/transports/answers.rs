//! A POST's answer in one write when it is ready at once.
//!
//! rmcp answers every POST of a session (protocol versions before
//! 2026-07-28; later ones get JSON when one message answers them) with an
//! SSE stream: its headers and a priming event (an event id to resume
//! from) at once, then the JSON-RPC response and the stream's end. Most
//! calls are answered within a millisecond or two, so that is two writes
//! (measured), and as many wake-ups of the client and of the connection's
//! task, for one small answer.
//! Here the headers and the priming event are held until the first event
//! that carries a message: a response ends the stream there, and all of it
//! leaves as one body with its length; a notification or a request to the
//! client (progress, a question) is sent at once and the rest streams as
//! before. After [`HOLD`] with nothing to say, the held part is sent and
//! the stream runs as rmcp wrote it.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::response::Response;
use futures::StreamExt;
use serde::Deserialize;
use serde::de::IgnoredAny;

/// How long the headers wait for a message: long enough for a quick call,
/// short enough that a client never notices a slow one start.
pub(super) const HOLD: Duration = Duration::from_millis(50);

/// What an SSE event carries, as far as holding it goes.
#[derive(Debug, PartialEq)]
enum Event {
    /// No message: a priming event, a retry hint or a keep-alive comment.
    Empty,
    /// A JSON-RPC response or error: the last event of a POST's stream.
    Answer,
    /// A notification or a request to the client: it must go now.
    Message,
}

/// The kind of one SSE event, from its `data:` lines.
fn event(text: &[u8]) -> Event {
    #[derive(Deserialize)]
    struct Shape {
        id: Option<IgnoredAny>,
        method: Option<IgnoredAny>,
    }
    let mut data = text
        .split(|&b| b == b'\n')
        .filter_map(|line| line.strip_prefix(b"data:"))
        .map(|d| d.strip_prefix(b" ").unwrap_or(d))
        .filter(|d| !d.is_empty());
    match (data.next(), data.next()) {
        (None, _) => Event::Empty,
        (Some(json), None) => match serde_json::from_slice::<Shape>(json) {
            Ok(Shape {
                id: Some(_),
                method: None,
            }) => Event::Answer,
            _ => Event::Message,
        },
        // One JSON-RPC message is one line; anything else streams as it came.
        _ => Event::Message,
    }
}

/// `response` with its SSE body coalesced as the module says; any other
/// response as it is.
pub(super) async fn coalesced(response: Response) -> Response {
    let sse = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if !sse {
        return response;
    }
    let (parts, body) = response.into_parts();
    let mut rest = body.into_data_stream();
    let mut held = Vec::new();
    let deadline = tokio::time::sleep(HOLD);
    tokio::pin!(deadline);
    let whole = loop {
        let next = tokio::select! {
            biased;
            next = rest.next() => next,
            _ = &mut deadline => break false,
        };
        match next {
            // The stream ended (or failed) with nothing but what is held.
            None | Some(Err(_)) => break true,
            Some(Ok(bytes)) => {
                held.extend_from_slice(&bytes);
                match event(&bytes) {
                    Event::Empty => continue,
                    Event::Answer => break true,
                    Event::Message => break false,
                }
            }
        }
    };
    let held = Bytes::from(held);
    let body = if whole {
        Body::from(held)
    } else {
        Body::from_stream(futures::stream::once(async move { Ok::<_, axum::Error>(held) }).chain(rest))
    };
    Response::from_parts(parts, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRIMING: &str = "data: \nid: 0/0\nretry: 3000\n\n";
    const ANSWER: &str = "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[]}}\nid: 1/0\n\n";
    const PROGRESS: &str =
        "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\nid: 1/0\n\n";
    const QUESTION: &str = "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"elicitation/create\",\"params\":{}}\n\n";

    #[test]
    fn events_are_told_apart_by_their_message() {
        assert_eq!(event(PRIMING.as_bytes()), Event::Empty);
        assert_eq!(event(b": keep-alive\n\n"), Event::Empty);
        assert_eq!(event(ANSWER.as_bytes()), Event::Answer);
        assert_eq!(
            event(b"data: {\"jsonrpc\":\"2.0\",\"id\":\"a\",\"error\":{\"code\":-32600,\"message\":\"no\"}}\n\n"),
            Event::Answer
        );
        assert_eq!(event(PROGRESS.as_bytes()), Event::Message);
        assert_eq!(event(QUESTION.as_bytes()), Event::Message);
        assert_eq!(event(b"data: not json\n\n"), Event::Message);
        assert_eq!(event(b"data: {\"id\":1}\ndata: {\"id\":2}\n\n"), Event::Message);
    }

    /// An SSE response whose events come from `events`, each after its delay.
    fn sse(events: Vec<(u64, &'static str)>) -> Response {
        let stream = futures::stream::iter(events).then(|(ms, text)| async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok::<_, std::io::Error>(Bytes::from(text))
        });
        Response::builder()
            .header("content-type", "text/event-stream")
            .body(Body::from_stream(stream))
            .unwrap()
    }

    async fn text(response: Response) -> (Option<u64>, String) {
        use axum::body::HttpBody as _;
        let length = response.body().size_hint().exact();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        (length, String::from_utf8(bytes.to_vec()).unwrap())
    }

    #[tokio::test(start_paused = true)]
    async fn a_quick_answer_is_one_body_with_its_length() {
        let response = coalesced(sse(vec![(0, PRIMING), (3, ANSWER), (0, ": after\n\n")])).await;
        let (length, body) = text(response).await;
        let whole = format!("{PRIMING}{ANSWER}");
        assert_eq!(body, whole, "the stream ends at the answer");
        assert_eq!(length, Some(whole.len() as u64));
    }

    #[tokio::test(start_paused = true)]
    async fn a_message_before_the_answer_streams_at_once() {
        let started = tokio::time::Instant::now();
        let response = coalesced(sse(vec![(0, PRIMING), (1, PROGRESS), (500, ANSWER)])).await;
        assert!(started.elapsed() < Duration::from_millis(10), "progress is not held");
        let (length, body) = text(response).await;
        assert_eq!(length, None, "streamed");
        assert_eq!(body, format!("{PRIMING}{PROGRESS}{ANSWER}"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_answer_streams_after_the_hold() {
        let started = tokio::time::Instant::now();
        let response = coalesced(sse(vec![(0, PRIMING), (5_000, ANSWER)])).await;
        assert_eq!(started.elapsed(), HOLD, "the headers wait no longer than the hold");
        let (length, body) = text(response).await;
        assert_eq!(length, None);
        assert_eq!(body, format!("{PRIMING}{ANSWER}"));
    }

    #[tokio::test]
    async fn other_answers_pass_as_they_are() {
        let response = Response::builder()
            .header("content-type", "application/json")
            .body(Body::from("{}"))
            .unwrap();
        assert_eq!(text(coalesced(response).await).await, (Some(2), "{}".into()));
    }
}
