//! What a server writes, as JSON-RPC messages: each line read as rmcp
//! reads it, with one shortcut. rmcp reads a
//! server's answer as an untagged union of every result type, buffering the
//! answer and trying fifteen types (each failure an error made and dropped)
//! before `CallToolResult`, the answer of nearly every call the gateway
//! makes. An answer whose result holds only `CallToolResult`'s fields is
//! read as one directly. No type before it in rmcp's union takes such an
//! object, or rmcp could not read a tool's answer itself; the tests check
//! that both ways read the same message.

use rmcp::model::{CallToolResult, JsonRpcVersion2_0, RequestId, ServerJsonRpcMessage};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

/// One line the server wrote.
#[derive(Debug)]
pub(super) enum Incoming {
    Message(Box<ServerJsonRpcMessage>),
    /// Nothing to do: a blank line, not JSON, or a notification of no
    /// shape rmcp reads (a notification is never answered).
    Skip,
    /// JSON that is not a message of MCP: the server is told so.
    Invalid,
}

/// Reads one line (as [`crate::line_codec::Line::Whole`] hands it over).
pub(super) fn read(line: &[u8]) -> Incoming {
    if line.is_empty() {
        return Incoming::Skip;
    }
    if let Some(answer) = tool_answer(line) {
        return Incoming::Message(Box::new(answer));
    }
    match serde_json::from_slice::<ServerJsonRpcMessage>(line) {
        Ok(message) => Incoming::Message(Box::new(message)),
        Err(e) if e.is_syntax() || e.is_eof() => {
            tracing::debug!(error = %e, "ignored a line that is not JSON");
            Incoming::Skip
        }
        Err(e) if is_notification(line) => {
            tracing::debug!(error = %e, "ignored a notification of no MCP shape");
            Incoming::Skip
        }
        Err(e) => {
            tracing::debug!(error = %e, "a message of no MCP shape");
            Incoming::Invalid
        }
    }
}

/// A JSON-RPC notification: a `method` and no `id`.
fn is_notification(line: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Shape {
        method: Option<IgnoredAny>,
        id: Option<IgnoredAny>,
    }
    serde_json::from_slice::<Shape>(line).is_ok_and(|s| s.method.is_some() && s.id.is_none())
}

/// The shortcut: an answer whose result has no field but `CallToolResult`'s.
fn tool_answer(line: &[u8]) -> Option<ServerJsonRpcMessage> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Response<'a> {
        #[allow(dead_code)] // checked by its type
        jsonrpc: JsonRpcVersion2_0,
        id: RequestId,
        #[serde(borrow)]
        result: &'a RawValue,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    #[allow(dead_code)] // only which fields are there counts
    struct Fields {
        result_type: Option<IgnoredAny>,
        content: Option<IgnoredAny>,
        structured_content: Option<IgnoredAny>,
        is_error: Option<IgnoredAny>,
        #[serde(rename = "_meta")]
        meta: Option<IgnoredAny>,
    }
    let answer: Response = serde_json::from_slice(line).ok()?;
    serde_json::from_str::<Fields>(answer.result.get()).ok()?;
    let result: CallToolResult = serde_json::from_str(answer.result.get()).ok()?;
    Some(ServerJsonRpcMessage::response(result.into(), answer.id))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What was read, as JSON for a message, else the kind.
    fn shown(incoming: Incoming) -> serde_json::Value {
        match incoming {
            Incoming::Message(m) => serde_json::to_value(m).unwrap(),
            other => format!("{other:?}").into(),
        }
    }

    /// What rmcp's own transport makes of a line.
    fn rmcp_reads(line: &str) -> ServerJsonRpcMessage {
        serde_json::from_str(line).unwrap()
    }

    #[test]
    fn the_shortcut_reads_every_tool_answer_as_rmcp_does() {
        for line in [
            r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"5"}],"isError":false}}"#,
            r#"{"result":{"content":[],"structuredContent":{"sum":5}},"jsonrpc":"2.0","id":"a-1"}"#,
            r#"{"jsonrpc":"2.0","id":4,"result":{"structuredContent":null}}"#,
            r#"{"jsonrpc":"2.0","id":5,"result":{"isError":true,"_meta":{"k":1}}}"#,
            r#"{"jsonrpc":"2.0","id":6,"result":{"resultType":"complete","content":[{"type":"text","text":"x"}]}}"#,
        ] {
            let fast = tool_answer(line.as_bytes()).unwrap_or_else(|| panic!("not taken: {line}"));
            assert_eq!(
                serde_json::to_value(fast).unwrap(),
                serde_json::to_value(rmcp_reads(line)).unwrap(),
                "{line}"
            );
        }
    }

    #[test]
    fn other_answers_are_left_to_rmcp() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"nextCursor":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#,
        ] {
            assert!(tool_answer(line.as_bytes()).is_none(), "{line}");
            assert!(matches!(read(line.as_bytes()), Incoming::Message(_)), "{line}");
        }
    }

    #[test]
    fn lines_are_read_as_rmcp_reads_them() {
        let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#;
        // Another protocol's notification: rmcp reads it as a custom one.
        let hello = r#"{"jsonrpc":"2.0","method":"lsp/hello"}"#;
        let read = [
            answer,
            "",
            "not json",
            r#"{"id":1}"#,
            r#"{"jsonrpc":"2.0","method":5}"#,
            hello,
        ]
        .map(|line| shown(read(line.as_bytes())));
        let kind = |k: &str| serde_json::Value::from(k);
        assert_eq!(
            read,
            [
                serde_json::to_value(rmcp_reads(answer)).unwrap(),
                kind("Skip"),
                kind("Skip"),
                kind("Invalid"),
                kind("Skip"),
                serde_json::to_value(rmcp_reads(hello)).unwrap(),
            ]
        );
    }
}
