//! MCP over a stream of lines, one JSON-RPC message each: the transport
//! to a stdio child's pipes and to a built-in server's in-memory pipe.
//!
//! rmcp's own transport over a byte stream drops a line past its limit (16
//! MiB unless set), so the call it answers waits out its timeout, and reads
//! every answer as an untagged union of every result type. This transport
//! reads lines up to the server's limit ([`crate::line_codec`]), a tool's
//! answer without rmcp's detour ([`messages`]), and turns a longer answer
//! into a JSON-RPC error for the same request at once, without ever holding
//! the answer in memory.

mod messages;

use std::io;
use std::sync::Arc;

use futures::{SinkExt, StreamExt};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ErrorData, RequestId, ServerJsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::JsonRpcMessageCodec;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Mutex;
use tokio_util::codec::{FramedRead, FramedWrite};

use crate::line_codec::{Line, MessageLines, Oversized};
use messages::Incoming;

/// Key of the synthetic error's `data` that holds the size of the refused answer.
pub(super) const OVERSIZED_BYTES: &str = "mcp-gateway/oversizedBytes";

/// What the gateway writes to the server: one JSON-RPC message a line.
type Writer<W> = FramedWrite<W, JsonRpcMessageCodec<ClientJsonRpcMessage>>;

/// MCP to a server that reads lines from `W` and writes lines to `R`.
pub(super) struct LineTransport<R, W> {
    /// The server's name, for the log.
    name: String,
    read: FramedRead<R, MessageLines>,
    /// Shared with the sends in flight; `None` once closed.
    write: Arc<Mutex<Option<Writer<W>>>>,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// Reads the server's answers from `read`, refusing those longer than
    /// `limit` bytes, and writes to it on `write`.
    pub(super) fn new(name: String, read: R, write: W, limit: usize) -> Self {
        Self {
            name,
            read: FramedRead::new(read, MessageLines::new(limit)),
            write: Arc::new(Mutex::new(Some(FramedWrite::new(
                write,
                JsonRpcMessageCodec::default(),
            )))),
        }
    }

    /// The server's name.
    pub(super) fn name(&self) -> &str {
        &self.name
    }

    /// Ends what the server reads: it sees the end of its input.
    pub(super) async fn close_input(&mut self) {
        drop(self.write.lock().await.take());
    }
}

impl<R, W> Transport<RoleClient> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = self.write.clone();
        async move {
            match write.lock().await.as_mut() {
                Some(write) => write.send(item).await.map_err(io::Error::from),
                None => Err(io::Error::new(io::ErrorKind::NotConnected, "the transport is closed")),
            }
        }
    }

    /// Cancel-safe, as rmcp polls it beside other work: a line half read
    /// stays in the reader's buffer for the next call.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let line = match self.read.next().await? {
                Ok(Line::Whole(line)) => line,
                Ok(Line::TooLong(line)) => {
                    tracing::warn!(server = %self.name, bytes = line.bytes, "a message longer than the server's limit was dropped");
                    match refused_answer(line) {
                        Some(refusal) => return Some(refusal),
                        None => continue,
                    }
                }
                Err(e) => {
                    tracing::warn!(server = %self.name, error = %e, "cannot read the server's output");
                    return None;
                }
            };
            match messages::read(&line) {
                Incoming::Message(message) => return Some(*message),
                Incoming::Skip => {}
                Incoming::Invalid => {
                    // As rmcp's transport answers well-formed JSON of no MCP
                    // shape; sent apart from this future, which rmcp may drop
                    // between lines, so it is never cut off halfway.
                    let refusal = TxJsonRpcMessage::<RoleClient>::error(
                        ErrorData::invalid_request("Invalid request", None),
                        None,
                    );
                    tokio::spawn(self.send(refusal));
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.close_input().await;
        Ok(())
    }
}

/// The error that stands for an answer past the limit, so the call it
/// answers ends now, with a reason, instead of at its timeout. A request or
/// notification from the server past the limit is dropped: nobody waits on it.
fn refused_answer(line: Oversized) -> Option<ServerJsonRpcMessage> {
    if line.is_request {
        return None;
    }
    let id: RequestId = serde_json::from_slice(line.id.as_deref()?).ok()?;
    let bytes = line.bytes;
    let error = ErrorData::internal_error(
        format!("the answer is {bytes} bytes, more than the gateway accepts from this server"),
        Some(serde_json::json!({ OVERSIZED_BYTES: bytes })),
    );
    Some(ServerJsonRpcMessage::error(error, Some(id)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::JsonRpcMessage;

    /// The ids of what `receive` hands rmcp, and the size an error names.
    async fn received(input: String, limit: usize) -> Vec<(String, Option<u64>)> {
        let mut transport = LineTransport::new("t".into(), std::io::Cursor::new(input), tokio::io::sink(), limit);
        let mut out = Vec::new();
        while let Some(message) = transport.receive().await {
            out.push(match message {
                JsonRpcMessage::Response(r) => (format!("answer {}", r.id), None),
                JsonRpcMessage::Error(e) => (
                    format!("error {}", e.id.unwrap()),
                    e.error.data.and_then(|d| d[OVERSIZED_BYTES].as_u64()),
                ),
                other => (format!("{other:?}"), None),
            });
        }
        out
    }

    /// An answer past the limit (its `id` last, as TypeScript servers write
    /// it) fails its call at once; a request from the server past the limit
    /// is dropped, with nobody to tell; the lines after both are read.
    #[tokio::test]
    async fn an_answer_past_the_limit_fails_its_call_and_a_long_request_is_dropped() {
        let big = format!(
            r#"{{"result":{{"text":"{}"}},"jsonrpc":"2.0","id":5}}"#,
            "x".repeat(300_000)
        );
        let ask = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":"{}"}}"#,
            "y".repeat(5000)
        );
        let answer = |id: u32| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#);
        let input = format!("{}\n{big}\n{ask}\n{}\n", answer(4), answer(6));
        assert_eq!(
            received(input, 1000).await,
            [
                ("answer 4".to_string(), None),
                ("error 5".to_string(), Some(big.len() as u64)),
                ("answer 6".to_string(), None),
            ]
        );
    }

    /// A built-in's pipe: what the gateway sends arrives as a line, a tool's
    /// answer comes back as rmcp would read it, and one over the limit as an
    /// error for its request, at once.
    #[tokio::test]
    async fn a_pipe_carries_requests_answers_and_refusals() {
        use rmcp::model::{ClientRequest, JsonRpcMessage, PingRequest, RequestId, ServerResult};
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
        let (ours, theirs) = tokio::io::duplex(4096);
        let (read, write) = tokio::io::split(ours);
        let mut transport = LineTransport::new("demo".into(), read, write, 1000);
        let (server_reads, mut server_writes) = tokio::io::split(theirs);
        let ping =
            ClientJsonRpcMessage::request(ClientRequest::PingRequest(PingRequest::default()), RequestId::Number(1));
        transport.send(ping).await.unwrap();
        let mut line = String::new();
        BufReader::new(server_reads).read_line(&mut line).await.unwrap();
        assert!(line.contains(r#""method":"ping""#) && line.ends_with('\n'), "{line}");

        let answer = r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"5"}]}}"#;
        let big = format!(
            r#"{{"jsonrpc":"2.0","id":3,"result":{{"content":[{{"type":"text","text":"{}"}}]}}}}"#,
            "x".repeat(2000)
        );
        let lines = format!("{answer}\n{big}\n");
        tokio::spawn(async move { server_writes.write_all(lines.as_bytes()).await });
        match transport.receive().await {
            Some(JsonRpcMessage::Response(r)) => {
                assert_eq!(r.id, RequestId::Number(2));
                assert!(matches!(r.result, ServerResult::CallToolResult(_)), "{:?}", r.result);
            }
            other => panic!("not the answer: {other:?}"),
        }
        match transport.receive().await {
            Some(JsonRpcMessage::Error(e)) => {
                assert_eq!(e.id, Some(RequestId::Number(3)));
                let data = e.error.data.unwrap();
                assert_eq!(data[OVERSIZED_BYTES], big.len());
            }
            other => panic!("not the refusal: {other:?}"),
        }
    }
}
