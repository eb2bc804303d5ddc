//! The envelope layer: a POST's body read whole (up to 4 MiB) and checked as
//! JSON-RPC before rmcp sees it, what the later layers need of it noted
//! ([`Message`]), and two of rmcp's answers made what clients expect.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::Message;
use crate::errors::{INVALID_REQUEST, PARSE_ERROR, unanswerable, unreadable};
use vocab::wire::MAX_MESSAGE_BYTES;

/// Reads and checks a POST's body; see the module's doc.
pub(super) async fn read(request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let posted = parts.method == http::Method::POST;
    let bytes = if posted {
        match axum::body::to_bytes(body, MAX_MESSAGE_BYTES).await {
            Ok(b) => b,
            Err(_) => return (http::StatusCode::PAYLOAD_TOO_LARGE, "request body larger than 4 MiB").into_response(),
        }
    } else {
        axum::body::Bytes::new()
    };
    let message = if posted {
        match parse_jsonrpc(&bytes) {
            Ok(m) => Message {
                is_request: m.is_request(),
                is_initialize: m.is_initialize(),
                token: m.token().map(str::to_string),
            },
            Err((code, message)) => {
                return (http::StatusCode::BAD_REQUEST, axum::Json(unanswerable(code, &message))).into_response();
            }
        }
    } else {
        Message::default()
    };
    parts.extensions.insert(message);
    let deleting = parts.method == http::Method::DELETE;
    let json = parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("application/json"));
    let response = next
        .run(Request::from_parts(parts, axum::body::Body::from(bytes.clone())))
        .await;
    // rmcp answers a JSON body it cannot read as an MCP message with a bare 415.
    if json && response.status() == http::StatusCode::UNSUPPORTED_MEDIA_TYPE {
        let (code, message) = unreadable(&bytes);
        return (http::StatusCode::BAD_REQUEST, axum::Json(unanswerable(code, &message))).into_response();
    }
    // rmcp ends a session with 202; the official Python SDK takes only 200,
    // 204 or 405 and warns "Session termination failed: 202" on every close.
    if deleting && response.status() == http::StatusCode::ACCEPTED {
        return http::StatusCode::OK.into_response();
    }
    response
}

/// What the guard reads of a JSON-RPC message. The rest is skipped without
/// being built: rmcp parses the message for real, once.
#[derive(Debug, Default, serde::Deserialize)]
pub struct Envelope<'a> {
    #[serde(default, borrow)]
    jsonrpc: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    id: Present,
    #[serde(default, borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    result: Present,
    #[serde(default)]
    error: Present,
    #[serde(default)]
    params: Option<EnvelopeParams>,
}

#[derive(Debug, Default, serde::Deserialize)]
struct EnvelopeParams {
    #[serde(default, rename = "_meta")]
    meta: Option<EnvelopeMeta>,
}

#[derive(Debug, Default, serde::Deserialize)]
struct EnvelopeMeta {
    /// A request's own credential; only a string is one.
    #[serde(default)]
    token: Option<Value>,
}

/// Whether a member is there at all (`null` counts), its value skipped.
#[derive(Debug, Default)]
struct Present(bool);

impl<'de> serde::Deserialize<'de> for Present {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d)?;
        Ok(Present(true))
    }
}

impl Envelope<'_> {
    /// A request (an id and a method), not a notification or a response.
    pub fn is_request(&self) -> bool {
        self.id.0 && self.method.is_some()
    }

    /// An `initialize` request, which opens a session.
    fn is_initialize(&self) -> bool {
        self.is_request() && self.method.as_deref() == Some("initialize")
    }

    /// The message's own credential, `_meta.token`.
    fn token(&self) -> Option<&str> {
        self.params.as_ref()?.meta.as_ref()?.token.as_ref()?.as_str()
    }
}

/// A request body's envelope, or what is wrong with it as a JSON-RPC error
/// code and message.
pub fn parse_jsonrpc(body: &[u8]) -> Result<Envelope<'_>, (i32, String)> {
    let not_json = |e: serde_json::Error| (PARSE_ERROR, format!("parse error: the message is not JSON ({e})"));
    let invalid = "invalid request: expected a JSON-RPC 2.0 message with \"jsonrpc\": \"2.0\" and a \"method\"";
    if body.trim_ascii_start().starts_with(b"[") {
        // JSON-RPC batching was removed from MCP in 2025-06-18, and rmcp
        // answers none of the revisions that had it with a batch.
        serde_json::from_slice::<serde::de::IgnoredAny>(body).map_err(not_json)?;
        let message = "invalid request: JSON-RPC batches are not supported by this protocol revision; send each message on its own";
        return Err((INVALID_REQUEST, message.to_string()));
    }
    let envelope: Envelope = serde_json::from_slice(body).map_err(|e| match e.classify() {
        // Well-formed JSON of the wrong shape (a number, a non-string method).
        serde_json::error::Category::Data => (INVALID_REQUEST, invalid.to_string()),
        _ => not_json(e),
    })?;
    let valid = envelope.jsonrpc.as_deref() == Some("2.0")
        && (envelope.method.is_some() || envelope.result.0 || envelope.error.0);
    if !valid {
        return Err((INVALID_REQUEST, invalid.to_string()));
    }
    Ok(envelope)
}

/// What is wrong with a request body, as a JSON-RPC error code and message.
pub(crate) fn jsonrpc_shape_error(body: &[u8]) -> Option<(i32, String)> {
    parse_jsonrpc(body).err()
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use axum::routing::any;

    use super::super::test_support::{answer, post};
    use super::*;

    /// The layer in front of a handler that answers `status`, and says
    /// what the layer noted of the message.
    fn behind(status: StatusCode) -> axum::Router {
        let handler = move |request: Request<Body>| async move {
            let m = request.extensions().get::<Message>().cloned().unwrap_or_default();
            (
                status,
                format!(
                    "request={} initialize={} token={:?}",
                    m.is_request, m.is_initialize, m.token
                ),
            )
        };
        axum::Router::new()
            .route("/mcp", any(handler))
            .layer(axum::middleware::from_fn(read))
    }

    #[tokio::test]
    async fn the_layer_refuses_what_is_not_jsonrpc_and_notes_what_is() {
        let (r, body) = answer(behind(StatusCode::OK), post("{not json")).await;
        assert_eq!(r.status(), StatusCode::BAD_REQUEST);
        assert!(body.contains("-32700") && body.contains(r#""id":null"#), "{body}");
        let (r, body) = answer(behind(StatusCode::OK), post("[]")).await;
        assert_eq!(r.status(), StatusCode::BAD_REQUEST);
        assert!(body.contains("-32600"), "{body}");
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"_meta":{"token":"mgw_1_x"}}}"#;
        let (r, body) = answer(behind(StatusCode::OK), post(init)).await;
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(body, r#"request=true initialize=true token=Some("mgw_1_x")"#);
        let get = Request::get("/mcp").body(Body::empty()).unwrap();
        let (_, body) = answer(behind(StatusCode::OK), get).await;
        assert_eq!(
            body, "request=false initialize=false token=None",
            "a GET has no message"
        );
        let huge = post(&format!(
            r#"{{"jsonrpc":"2.0","method":"x","params":{{"p":"{}"}}}}"#,
            "a".repeat(MAX_MESSAGE_BYTES)
        ));
        assert_eq!(
            answer(behind(StatusCode::OK), huge).await.0.status(),
            StatusCode::PAYLOAD_TOO_LARGE
        );
    }

    #[tokio::test]
    async fn rmcps_bare_answers_become_what_clients_expect() {
        let unreadable_id = r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}"#;
        let (r, body) = answer(behind(StatusCode::UNSUPPORTED_MEDIA_TYPE), post(unreadable_id)).await;
        assert_eq!(r.status(), StatusCode::BAD_REQUEST);
        assert!(body.contains("-32600") && !body.contains("1234567890"), "{body}");
        let delete = || Request::delete("/mcp").body(Body::empty()).unwrap();
        assert_eq!(
            answer(behind(StatusCode::ACCEPTED), delete()).await.0.status(),
            StatusCode::OK
        );
        assert_eq!(
            answer(behind(StatusCode::NOT_FOUND), delete()).await.0.status(),
            StatusCode::NOT_FOUND
        );
    }

    #[test]
    fn malformed_bodies_get_jsonrpc_codes() {
        assert_eq!(jsonrpc_shape_error(b"{not json").unwrap().0, -32700);
        assert_eq!(jsonrpc_shape_error(b"{\"foo\": 1}").unwrap().0, -32600);
        assert_eq!(jsonrpc_shape_error(b"[]").unwrap().0, -32600);
        let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#;
        let (code, message) = jsonrpc_shape_error(batch).unwrap();
        assert_eq!(code, -32600);
        assert!(message.contains("batches are not supported"), "{message}");
        assert_eq!(jsonrpc_shape_error(b"42").unwrap().0, -32600);
        assert!(jsonrpc_shape_error(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).is_none());
        assert!(jsonrpc_shape_error(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).is_none());
        assert_eq!(
            jsonrpc_shape_error(br#"{"jsonrpc":"2.0","id":1,"method":5}"#)
                .unwrap()
                .0,
            -32600
        );
        assert_eq!(
            jsonrpc_shape_error(br#"{"jsonrpc":"2.0","id":1,"method":"x""#)
                .unwrap()
                .0,
            -32700
        );
    }

    #[test]
    fn unreadable_mcp_gets_a_jsonrpc_code_without_its_content() {
        use crate::errors::unreadable;
        let (code, message) = unreadable(br#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}"#);
        assert_eq!(code, -32600);
        assert!(!message.contains("1234567890"), "{message}");
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(unreadable(deep.as_bytes()).0, -32700);
        assert_eq!(unreadable(b"{\"a\":\"\xff\"}").0, -32700);
    }

    #[test]
    fn the_envelope_tells_requests_and_their_tokens() {
        let call =
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1}}}"#;
        let call = parse_jsonrpc(call).unwrap();
        assert!(call.is_request() && call.token().is_none() && !call.is_initialize());
        let own = br#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"_meta":{"token":"mgw_1_x"}}}"#;
        let own = parse_jsonrpc(own).unwrap();
        assert!(own.is_request(), "a null id is still a request");
        assert_eq!(own.token(), Some("mgw_1_x"));
        let odd = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"token":{"a":1}}}}"#;
        assert_eq!(parse_jsonrpc(odd).unwrap().token(), None, "only a string is a token");
        let note = parse_jsonrpc(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert!(!note.is_request() && note.token().is_none());
        let init = parse_jsonrpc(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#).unwrap();
        assert!(init.is_initialize());
        let escaped = parse_jsonrpc(br#"{"jsonrpc":"2\u002e0","id":1,"method":"ping"}"#).unwrap();
        assert!(escaped.is_request());
    }
}
