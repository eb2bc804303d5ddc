//! The upstream face on a stream of lines (stdin and stdout): each line the
//! client writes read up to [`MAX_MESSAGE_BYTES`], as an HTTP body is, and
//! every line that is no MCP message answered with the JSON-RPC error it
//! deserves, where rmcp's own transport would hold a line of any length
//! and drop one it cannot read without a word.

use std::io;
use std::sync::Arc;

use futures::StreamExt;
use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::Mutex;
use tokio_util::codec::FramedRead;
use tracing::warn;

use crate::errors::{INVALID_REQUEST, oversized_answer, refusal, unanswerable, unreadable};
use crate::guard::jsonrpc_shape_error;
use downstream::line_codec::{Line, MessageLines, Oversized};
use vocab::wire::MAX_MESSAGE_BYTES;

/// MCP with a client that writes lines to `R` and reads them from `W`.
pub(super) struct ClientLines<R, W> {
    read: FramedRead<R, MessageLines>,
    /// Shared with the sends in flight.
    write: Arc<Mutex<W>>,
}

impl<R, W> ClientLines<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    pub(super) fn new(read: R, write: W) -> Self {
        Self {
            read: FramedRead::new(read, MessageLines::new(MAX_MESSAGE_BYTES)),
            write: Arc::new(Mutex::new(write)),
        }
    }
}

/// What one line of the client's comes to.
#[derive(Debug)]
enum Read {
    /// A message for rmcp.
    Message(Box<ClientJsonRpcMessage>),
    /// An error to write back to the client.
    Refused(Value),
    /// Nothing: a blank line, or a notification past the limit.
    Nothing,
}

impl<R, W> Transport<RoleServer> for ClientLines<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = io::Error;

    fn send(&mut self, item: ServerJsonRpcMessage) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let (write, line) = (self.write.clone(), serde_json::to_vec(&item));
        async move { write_line(write, line?).await }
    }

    /// Cancel-safe, as rmcp polls it beside other work: a line half read
    /// stays in the reader's buffer for the next call.
    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            let read = match self.read.next().await? {
                Ok(Line::Whole(line)) => read(&line),
                Ok(Line::TooLong(line)) => too_long(line),
                Err(e) => {
                    warn!(error = %e, "cannot read the client's input");
                    return None;
                }
            };
            match read {
                Read::Message(message) => return Some(*message),
                Read::Refused(error) => {
                    // Written apart from this future, which rmcp may drop
                    // between lines: never a refusal cut off halfway.
                    let line = serde_json::to_vec(&error).expect("an error serializes");
                    tokio::spawn(write_line(self.write.clone(), line));
                }
                Read::Nothing => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.write.lock().await.shutdown().await
    }
}

/// Writes `line` and its newline, then flushes: the client reads each message as it comes.
async fn write_line<W: AsyncWrite + Unpin>(write: Arc<Mutex<W>>, mut line: Vec<u8>) -> io::Result<()> {
    line.push(b'\n');
    let mut write = write.lock().await;
    write.write_all(&line).await?;
    write.flush().await
}

/// One line within the limit: rmcp's message, or the error for what it is not.
fn read(line: &[u8]) -> Read {
    if line.trim_ascii().is_empty() {
        return Read::Nothing;
    }
    match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(message) => Read::Message(Box::new(message)),
        Err(_) => {
            let (code, message) = jsonrpc_shape_error(line).unwrap_or_else(|| unreadable(line));
            warn!(code, "refused a malformed stdio message");
            Read::Refused(unanswerable(code, &message))
        }
    }
}

/// A line past the limit: a request gets its error at once; an answer to
/// the gateway's own request (a sampling or elicitation the client was
/// asked) fails that request at once; a notification is dropped.
fn too_long(line: Oversized) -> Read {
    let bytes = line.bytes;
    warn!(bytes, "refused a stdio message past the limit");
    let message = format!(
        "invalid request: the message is {bytes} bytes; the gateway reads at most {} MiB a message",
        MAX_MESSAGE_BYTES >> 20
    );
    let id = line
        .id
        .as_deref()
        .and_then(|id| serde_json::from_slice::<Value>(id).ok());
    match (line.is_request, id) {
        (true, None) => Read::Nothing,
        (false, Some(id)) => match serde_json::from_value::<RequestId>(id) {
            Ok(id) => Read::Message(Box::new(ClientJsonRpcMessage::error(
                oversized_answer(message),
                Some(id),
            ))),
            Err(_) => Read::Refused(unanswerable(INVALID_REQUEST, &message)),
        },
        (_, id) => Read::Refused(refusal(id.unwrap_or_default(), INVALID_REQUEST, &message)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tokio::io::{AsyncBufReadExt, BufReader};

    /// `input` as the client's lines: what rmcp is handed, and what the client reads back.
    async fn served(input: String) -> (Vec<Value>, Vec<Value>) {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let mut transport = ClientLines::new(std::io::Cursor::new(input), ours);
        let mut handed = Vec::new();
        while let Some(message) = transport.receive().await {
            handed.push(serde_json::to_value(message).unwrap());
        }
        drop(transport);
        let mut answered = Vec::new();
        let mut lines = BufReader::new(theirs).lines();
        while let Some(line) = lines.next_line().await.unwrap() {
            answered.push(serde_json::from_str(&line).unwrap());
        }
        (handed, answered)
    }

    #[tokio::test]
    async fn requests_pass_and_what_is_no_message_gets_its_error() {
        let ping = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
        let input = format!(
            "{{garbage\n\n[1,2]\n{{\"jsonrpc\":\"2.0\",\"id\":99999999999999999999999999,\"method\":\"ping\"}}\n{ping}\r\n"
        );
        let (handed, answered) = served(input).await;
        assert_eq!(handed, [serde_json::from_str::<Value>(ping).unwrap()]);
        let codes: Vec<_> = answered
            .iter()
            .map(|a| (a["id"].clone(), a["error"]["code"].clone()))
            .collect();
        assert_eq!(
            codes,
            [
                (Value::Null, json!(-32700)),
                (Value::Null, json!(-32600)),
                (Value::Null, json!(-32600))
            ]
        );
    }

    /// A request past the limit gets an error for its id (written last, as
    /// some clients do), its memory never held; the next line is read.
    #[tokio::test]
    async fn a_request_past_the_limit_is_refused_by_its_id() {
        let big = "x".repeat(MAX_MESSAGE_BYTES);
        let request = format!(
            r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"tool_execute","arguments":{{"s":"{big}"}}}},"id":"r-1"}}"#
        );
        let notification = format!(r#"{{"jsonrpc":"2.0","method":"notifications/x","params":{{"s":"{big}"}}}}"#);
        let answer = format!(r#"{{"jsonrpc":"2.0","id":3,"result":{{"s":"{big}"}}}}"#);
        let ping = r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#;
        let (handed, answered) = served(format!("{request}\n{notification}\n{answer}\n{ping}\n")).await;
        assert_eq!(answered.len(), 1, "{answered:?}");
        assert_eq!(answered[0]["id"], "r-1");
        assert_eq!(answered[0]["error"]["code"], -32600);
        let says = answered[0]["error"]["message"].as_str().unwrap();
        assert!(says.contains(&format!("{} bytes", request.len())), "{says}");
        // The client's answer past the limit fails the gateway's request 3 at once.
        assert_eq!(handed.len(), 2, "{handed:?}");
        assert_eq!(
            (handed[0]["id"].clone(), handed[0]["error"]["code"].clone()),
            (json!(3), json!(-32600))
        );
        assert_eq!(handed[1]["id"], 8);
    }
}
