//! The gateway's HTTP client to remote servers: rmcp's streamable HTTP client
//! over reqwest, with each `tools/list` answer read whole.
//!
//! rmcp (3.9) learns a 2026-07-28 tool's `x-mcp-header` parameters from a
//! `tools/list` answer as the message passes its worker's main loop. An
//! answer that came as SSE, whose stream the worker saw end before it read
//! the message, goes to the caller by another path that skips this; every
//! call of such a tool is then refused (-32020, a missing `Mcp-Param-*`
//! header) until the next listing. An answer given as JSON always takes the
//! first path, so [`WholeListing`] reads a `tools/list` answer's stream to
//! its response and hands rmcp that message as JSON.

use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::{self, BoxStream, StreamExt};
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::Sse;

/// Redirects one request may follow (as rmcp's own default client).
const MAX_REDIRECTS: usize = 10;

/// A reqwest client set up as rmcp's default one: no idle connection kept
/// (reusing one whose last body was not read to its end stalls on delayed
/// ACKs), and only same-origin 307 and 308 redirects followed (any other
/// would turn the POST into a bodyless GET, or replay the session and the
/// configured headers to another host).
pub fn reqwest_client() -> reqwest::Client {
    let redirect = reqwest::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(
            attempt.status(),
            reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
        );
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !keeps_body || !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    });
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .redirect(redirect)
        .build()
        // What `reqwest::Client::new` does too: only a TLS backend that cannot start fails here.
        .expect("the HTTP client's TLS backend starts")
}

/// rmcp's HTTP client `C`, with each `tools/list` answer read whole (above).
#[derive(Clone)]
pub(crate) struct WholeListing<C>(pub C);

type Answer<E> = Result<StreamableHttpPostResponse, StreamableHttpError<E>>;
type Events<E> = Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<E>>;

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for WholeListing<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Answer<C::Error> {
        let listing = is_listing(&message);
        let answer = self
            .0
            .post_message(uri, message, session_id, auth_header, custom_headers);
        Ok(read_listing(listing, answer.await?).await)
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Answer<C::Error> {
        let listing = is_listing(&message);
        let answer = self.0.post_message_with_max_sse_event_size(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        );
        Ok(read_listing(listing, answer.await?).await)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<C::Error>> {
        self.0
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Events<C::Error> {
        self.0
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Events<C::Error> {
        self.0
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}

fn is_listing(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, JsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::ListToolsRequest(_)))
}

async fn read_listing(listing: bool, answer: StreamableHttpPostResponse) -> StreamableHttpPostResponse {
    match answer {
        StreamableHttpPostResponse::Sse(events, session) if listing => whole(events, session).await,
        other => other,
    }
}

/// An answer's SSE stream as JSON when it carries the response with nothing
/// before it but events without a message (a priming event, say). Anything
/// else (a notification first, a stream error) and the stream goes on as
/// it came, every event in order, for rmcp to read (and resume) as before.
async fn whole(
    mut events: BoxStream<'static, Result<Sse, SseError>>,
    session: Option<String>,
) -> StreamableHttpPostResponse {
    let mut read = Vec::new();
    while let Some(event) = events.next().await {
        match event.as_ref().map(carried) {
            Ok(Carried::Nothing) => read.push(event),
            Ok(Carried::Answer(message)) => return StreamableHttpPostResponse::Json(*message, session),
            Ok(Carried::Other) | Err(_) => {
                read.push(event);
                break;
            }
        }
    }
    StreamableHttpPostResponse::Sse(stream::iter(read).chain(events).boxed(), session)
}

enum Carried {
    /// An event rmcp reads no message from: no data, or data that is not a message.
    Nothing,
    /// The response (or error) that ends the request.
    Answer(Box<ServerJsonRpcMessage>),
    /// A notification, a request or a control event.
    Other,
}

/// What rmcp makes of one event (its rules: only unnamed and `message`
/// events carry messages, and data that is not one is skipped).
fn carried(event: &Sse) -> Carried {
    if !matches!(event.event.as_deref(), None | Some("" | "message")) {
        return Carried::Other;
    }
    let Some(message) = event
        .data
        .as_deref()
        .and_then(|data| serde_json::from_str::<ServerJsonRpcMessage>(data).ok())
    else {
        return Carried::Nothing;
    };
    match message {
        JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => Carried::Answer(Box::new(message)),
        JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => Carried::Other,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn event(name: Option<&str>, data: Option<serde_json::Value>) -> Result<Sse, SseError> {
        Ok(Sse {
            event: name.map(str::to_owned),
            data: data.map(|d| d.to_string()),
            id: Some("1".into()),
            retry: None,
        })
    }

    fn listed() -> serde_json::Value {
        json!({"jsonrpc": "2.0", "id": 3, "result": {"tools": [{"name": "echo", "inputSchema": {
            "type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}}]}})
    }

    async fn read(events: Vec<Result<Sse, SseError>>) -> StreamableHttpPostResponse {
        let session = Some("s".to_owned());
        read_listing(
            true,
            StreamableHttpPostResponse::Sse(stream::iter(events).boxed(), session),
        )
        .await
    }

    /// What rmcp would read from a stream: each event's data, in order.
    async fn left(answer: StreamableHttpPostResponse) -> Vec<Option<String>> {
        let StreamableHttpPostResponse::Sse(events, _) = answer else {
            panic!("not a stream: {answer:?}");
        };
        events.map(|e| e.unwrap().data).collect().await
    }

    #[test]
    fn only_tools_list_requests_are_read_whole() {
        let message = |method: &str| -> ClientJsonRpcMessage {
            serde_json::from_value(json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {}})).unwrap()
        };
        assert!(is_listing(&message("tools/list")));
        assert!(!is_listing(&message("prompts/list")));
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo"}});
        assert!(!is_listing(&serde_json::from_value(call).unwrap()));
    }

    #[tokio::test]
    async fn a_listing_answered_after_a_priming_event_becomes_json() {
        let answer = read(vec![
            event(None, None),
            event(Some("message"), Some(json!(""))),
            event(None, Some(listed())),
        ])
        .await;
        let StreamableHttpPostResponse::Json(message, session) = answer else {
            panic!("not JSON: {answer:?}");
        };
        assert_eq!(session.as_deref(), Some("s"), "the session goes with it");
        assert_eq!(
            serde_json::to_value(&message).unwrap()["result"]["tools"][0]["name"],
            "echo"
        );
        let refused = json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": "no"}});
        assert!(matches!(
            read(vec![event(None, Some(refused))]).await,
            StreamableHttpPostResponse::Json(..)
        ));
    }

    #[tokio::test]
    async fn a_notification_first_leaves_the_stream_whole_and_in_order() {
        let log =
            json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}});
        let answer = read(vec![
            event(None, None),
            event(None, Some(log.clone())),
            event(None, Some(listed())),
        ])
        .await;
        assert_eq!(
            left(answer).await,
            [None, Some(log.to_string()), Some(listed().to_string())]
        );
        // A control event is rmcp's to handle, so it stays too.
        let answer = read(vec![
            event(Some("endpoint"), Some(json!("/x"))),
            event(None, Some(listed())),
        ])
        .await;
        assert_eq!(left(answer).await.len(), 2);
    }

    #[tokio::test]
    async fn other_answers_and_a_stream_without_a_response_pass_as_they_came() {
        let events = vec![event(None, Some(listed()))];
        let call = StreamableHttpPostResponse::Sse(stream::iter(events).boxed(), None);
        let passed = read_listing(false, call).await;
        assert_eq!(left(passed).await, [Some(listed().to_string())]);
        assert_eq!(left(read(vec![event(None, None)]).await).await, [None]);
    }
}
