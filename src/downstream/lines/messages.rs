//! What a server writes, as JSON-RPC messages: lines of at most the server's
//! limit, each read as rmcp reads it, with one shortcut. rmcp reads a
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
use tokio_util::bytes::{Buf, BytesMut};
use tokio_util::codec::Decoder;

/// One line the server wrote.
#[derive(Debug)]
pub(super) enum Incoming {
    Message(Box<ServerJsonRpcMessage>),
    /// Nothing to do: a blank line, not JSON, or a notification of no
    /// shape rmcp reads (a notification is never answered).
    Skip,
    /// JSON that is not a message of MCP: the server is told so.
    Invalid,
    /// Longer than the limit, dropped unread (the line guard answers it).
    TooLong,
}

/// Splits what the server writes into lines of at most `limit` bytes, in
/// bounded memory: a longer line is dropped as it arrives.
pub(super) struct Lines {
    limit: usize,
    /// Bytes of the buffer already searched for a newline.
    searched: usize,
    /// Dropping the rest of a line found too long.
    discarding: bool,
}

impl Lines {
    pub(super) fn new(limit: usize) -> Self {
        Self {
            limit,
            searched: 0,
            discarding: false,
        }
    }
}

impl Decoder for Lines {
    type Item = Incoming;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Incoming>, Self::Error> {
        loop {
            let newline = buf[self.searched..]
                .iter()
                .position(|&b| b == b'\n')
                .map(|i| i + self.searched);
            match newline {
                Some(end) if self.discarding => {
                    buf.advance(end + 1);
                    (self.discarding, self.searched) = (false, 0);
                }
                None if self.discarding => {
                    buf.clear();
                    return Ok(None);
                }
                Some(end) => {
                    let line = buf.split_to(end + 1);
                    self.searched = 0;
                    return Ok(Some(if end > self.limit {
                        Incoming::TooLong
                    } else {
                        read(&line)
                    }));
                }
                None if buf.len() > self.limit => {
                    buf.clear();
                    (self.discarding, self.searched) = (true, 0);
                    return Ok(Some(Incoming::TooLong));
                }
                None => {
                    self.searched = buf.len();
                    return Ok(None);
                }
            }
        }
    }

    /// A last line without its newline is incomplete: dropped, as rmcp does.
    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Incoming>, Self::Error> {
        let line = self.decode(buf)?;
        if line.is_none() {
            buf.clear();
        }
        Ok(line)
    }
}

/// Reads one line (its newline included).
fn read(line: &[u8]) -> Incoming {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
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
    struct Answer<'a> {
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
    let answer: Answer = serde_json::from_slice(line).ok()?;
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

    fn lines(limit: usize, input: &str) -> Vec<serde_json::Value> {
        let mut decoder = Lines::new(limit);
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        // A byte at a time, as the worst of reads would hand them over.
        for b in input.bytes() {
            buf.extend_from_slice(&[b]);
            while let Some(line) = decoder.decode(&mut buf).unwrap() {
                out.push(shown(line));
            }
        }
        out.extend(decoder.decode_eof(&mut buf).unwrap().map(shown));
        out
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
    fn lines_are_split_bounded_and_read() {
        let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#;
        // Another protocol's notification: rmcp reads it as a custom one.
        let hello = r#"{"jsonrpc":"2.0","method":"lsp/hello"}"#;
        let long = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"t\":\"{}\"}}}}",
            "x".repeat(200)
        );
        let input = format!(
            "{answer}\r\n\n\u{feff}{answer}\nnot json\n{{\"id\":1}}\n{{\"jsonrpc\":\"2.0\",\"method\":5}}\n{hello}\n{long}\n{answer}\n{answer}"
        );
        let read = lines(100, &input);
        let message = serde_json::to_value(rmcp_reads(answer)).unwrap();
        let kind = |k: &str| serde_json::Value::from(k);
        assert_eq!(
            read,
            [
                message.clone(),
                kind("Skip"),
                message.clone(),
                kind("Skip"),
                kind("Invalid"),
                kind("Skip"),
                serde_json::to_value(rmcp_reads(hello)).unwrap(),
                kind("TooLong"),
                message,
            ],
            "the unterminated last line is dropped"
        );
    }
}
