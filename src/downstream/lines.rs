//! MCP over a stream of lines, one JSON-RPC message each: the transport
//! to a stdio child's pipes and to a built-in server's in-memory pipe.
//!
//! rmcp's own transport over a byte stream drops a line past its limit (16
//! MiB unless set), so the call it answers waits out its timeout, and reads
//! every answer as an untagged union of every result type. This transport
//! reads lines up to the server's limit ([`messages`], which also reads a
//! tool's answer without rmcp's detour), and a [`LineGuard`] on what the
//! server writes turns a longer answer into a JSON-RPC error for the same
//! request at once, without ever holding the answer in memory.

mod messages;

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use futures::{SinkExt, StreamExt};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ErrorData};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::JsonRpcMessageCodec;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Mutex;
use tokio_util::codec::{FramedRead, FramedWrite};

use messages::{Incoming, Lines};

/// Key of the synthetic error's `data` that holds the size of the refused answer.
pub(super) const OVERSIZED_BYTES: &str = "mcp-gateway/oversizedBytes";

/// What the gateway writes to the server: one JSON-RPC message a line.
type Writer<W> = FramedWrite<W, JsonRpcMessageCodec<ClientJsonRpcMessage>>;

/// MCP to a server that reads lines from `W` and writes lines to `R`.
pub(super) struct LineTransport<R, W> {
    /// The server's name, for the log.
    name: String,
    read: FramedRead<LineGuard<R>, Lines>,
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
            read: FramedRead::new(LineGuard::new(read, limit), Lines::new(limit)),
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
            match self.read.next().await? {
                Ok(Incoming::Message(message)) => return Some(*message),
                Ok(Incoming::Skip) => {}
                Ok(Incoming::TooLong) => {
                    tracing::warn!(server = %self.name, "a message longer than the server's limit was dropped");
                }
                Ok(Incoming::Invalid) => {
                    // As rmcp's transport answers well-formed JSON of no MCP shape.
                    let refusal = TxJsonRpcMessage::<RoleClient>::error(
                        ErrorData::invalid_request("Invalid request", None),
                        None,
                    );
                    if self.send(refusal).await.is_err() {
                        return None;
                    }
                }
                Err(e) => {
                    tracing::warn!(server = %self.name, error = %e, "cannot read the server's output");
                    return None;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.close_input().await;
        Ok(())
    }
}

/// Passes what a server writes through unchanged, watching each line. After a
/// line longer than `limit` that answers a request (rmcp skips such a line),
/// it adds a JSON-RPC error with the same `id`, so the call ends now, with a
/// reason, instead of at its timeout.
struct LineGuard<R> {
    inner: R,
    limit: usize,
    line: LineScan,
    /// Scanned bytes (and any error line) not yet handed out.
    out: Vec<u8>,
    at: usize,
    raw: Box<[u8]>,
}

impl<R> LineGuard<R> {
    /// Guards `inner`; lines longer than `limit` bytes are refused.
    fn new(inner: R, limit: usize) -> Self {
        Self {
            inner,
            limit,
            line: LineScan::default(),
            out: Vec::new(),
            at: 0,
            raw: vec![0; 64 * 1024].into_boxed_slice(),
        }
    }

    /// Scans `bytes` of `raw` into `out`, adding an error after each refused
    /// answer; the bytes themselves are copied in runs, not one by one.
    fn scan(&mut self, bytes: usize) {
        self.out.clear();
        self.at = 0;
        let mut copied = 0;
        for i in 0..bytes {
            if let Some(line) = self.line.push(self.raw[i])
                && line.bytes > self.limit
                && let Some(id) = line.id.filter(|_| !line.is_request)
            {
                self.out.extend_from_slice(&self.raw[copied..=i]);
                self.out.extend_from_slice(&oversized_error(&id, line.bytes));
                copied = i + 1;
            }
        }
        self.out.extend_from_slice(&self.raw[copied..bytes]);
    }
}

/// The error that stands for an answer of `bytes` bytes to request `id`.
fn oversized_error(id: &[u8], bytes: usize) -> Vec<u8> {
    let id = String::from_utf8_lossy(id);
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{{\"code\":-32603,\"message\":\"the answer is {bytes} bytes, more than the gateway accepts from this server\",\"data\":{{\"{OVERSIZED_BYTES}\":{bytes}}}}}}}\n"
    )
    .into_bytes()
}

impl<R: AsyncRead + Unpin> AsyncRead for LineGuard<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.at == this.out.len() {
            let mut raw = ReadBuf::new(&mut this.raw);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut raw))?;
            let read = raw.filled().len();
            if read == 0 {
                return Poll::Ready(Ok(()));
            }
            this.scan(read);
        }
        let n = buf.remaining().min(this.out.len() - this.at);
        buf.put_slice(&this.out[this.at..this.at + n]);
        this.at += n;
        Poll::Ready(Ok(()))
    }
}

/// What one finished line held, as far as the guard cares.
#[derive(Debug, PartialEq)]
struct Line {
    bytes: usize,
    /// The raw JSON of the top-level `id`, if short enough to keep.
    id: Option<Vec<u8>>,
    /// It has a top-level `method`: a request or notification, not an answer.
    is_request: bool,
}

/// A streaming scan of one JSON-RPC line for its top-level `id` and
/// `method`, in constant memory whatever the line's length.
#[derive(Debug, Default)]
struct LineScan {
    bytes: usize,
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// At depth 1: the next string is a key.
    expect_key: bool,
    key: Vec<u8>,
    key_too_long: bool,
    /// The last key read at depth 1, until its value starts.
    last_key: Option<Key>,
    /// Bytes of the `id` value while it is being read.
    id: Option<Vec<u8>>,
    reading_id: bool,
    found_id: Option<Vec<u8>>,
    is_request: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Key {
    Id,
    Method,
    Other,
}

/// Longest `id` kept: JSON-RPC ids are numbers or short strings.
const MAX_ID_BYTES: usize = 256;

impl LineScan {
    /// Feeds one byte; at a newline, returns the finished line and starts the next.
    fn push(&mut self, b: u8) -> Option<Line> {
        if b == b'\n' {
            let done = std::mem::take(self);
            return Some(Line {
                bytes: done.bytes,
                id: done.found_id,
                is_request: done.is_request,
            });
        }
        self.bytes += 1;
        if self.reading_id {
            self.read_id(b);
        }
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if self.expect_key {
                    self.expect_key = false;
                    self.last_key = Some(match (self.key_too_long, self.key.as_slice()) {
                        (false, b"id") => Key::Id,
                        (false, b"method") => Key::Method,
                        _ => Key::Other,
                    });
                }
            } else if self.expect_key {
                if self.key.len() < 8 {
                    self.key.push(b);
                } else {
                    self.key_too_long = true;
                }
            }
            return None;
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.expect_key {
                    self.key.clear();
                    self.key_too_long = false;
                }
            }
            b'{' | b'[' => self.depth += 1,
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            b',' if self.depth == 1 => self.expect_key = true,
            b':' if self.depth == 1 => match self.last_key.take() {
                Some(Key::Id) => {
                    self.reading_id = true;
                    self.id = Some(Vec::new());
                }
                Some(Key::Method) => self.is_request = true,
                _ => {}
            },
            _ => {}
        }
        if b == b'{' && self.depth == 1 {
            self.expect_key = true;
        }
        None
    }

    /// Collects the `id` value's bytes until a `,` or `}` ends it at depth 1.
    fn read_id(&mut self, b: u8) {
        let ends = !self.in_string && self.depth == 1 && (b == b',' || b == b'}');
        if ends {
            self.reading_id = false;
            let id = self.id.take().unwrap_or_default();
            let id = id.trim_ascii();
            if !id.is_empty() && id.len() <= MAX_ID_BYTES && id != b"null" {
                self.found_id = Some(id.to_vec());
            }
        } else if let Some(id) = self.id.as_mut()
            && id.len() <= MAX_ID_BYTES
        {
            id.push(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    fn scan(line: &str) -> Line {
        let mut s = LineScan::default();
        for &b in line.as_bytes() {
            assert!(s.push(b).is_none());
        }
        s.push(b'\n').unwrap()
    }

    #[test]
    fn finds_the_top_level_id_wherever_it_stands() {
        let l = scan(r#"{"jsonrpc":"2.0","id":7,"result":{"id":99,"content":[]}}"#);
        assert_eq!((l.id.as_deref(), l.is_request), (Some(&b"7"[..]), false));
        // TypeScript servers write the result first.
        let l = scan(r#"{"result":{"content":[{"text":"a \"id\": 3, }"}],"id":"x"},"jsonrpc":"2.0","id":"req-1"}"#);
        assert_eq!(l.id.as_deref(), Some(&br#""req-1""#[..]));
        let l = scan(r#"{ "id" : 12 , "result" : {} }"#);
        assert_eq!(l.id.as_deref(), Some(&b"12"[..]));
    }

    #[test]
    fn requests_notifications_and_garbage_are_not_answers() {
        let l = scan(r#"{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":{}}"#);
        assert!(l.is_request);
        let l = scan(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":1}}"#);
        assert_eq!((l.id, l.is_request), (None, true));
        assert_eq!(scan("not json at all, id: 5").id, None);
        assert_eq!(scan(r#"{"id":null,"error":{}}"#).id, None);
    }

    #[tokio::test]
    async fn an_answer_over_the_limit_is_followed_by_an_error_for_its_id() {
        let big = format!(
            "{{\"result\":{{\"text\":\"{}\"}},\"jsonrpc\":\"2.0\",\"id\":5}}\n",
            "x".repeat(300_000)
        );
        let input = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{{}}}}\n{big}{{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{{}}}}\n"
        );
        let mut guarded = LineGuard::new(input.as_bytes(), 1000);
        let mut out = String::new();
        guarded.read_to_string(&mut out).await.unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 4, "the three lines pass through, plus the error");
        assert_eq!(lines[1].len(), big.len() - 1, "the stream itself is unchanged");
        let error: serde_json::Value = serde_json::from_str(lines[2]).unwrap();
        assert_eq!(error["id"], 5);
        assert_eq!(error["error"]["data"][OVERSIZED_BYTES], big.len() - 1);
        assert!(lines[3].contains("\"id\":6"));
    }

    #[tokio::test]
    async fn a_long_request_from_the_server_gets_no_made_up_answer() {
        let input = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":\"{}\"}}\n",
            "y".repeat(5000)
        );
        let mut guarded = LineGuard::new(input.as_bytes(), 1000);
        let mut out = String::new();
        guarded.read_to_string(&mut out).await.unwrap();
        assert_eq!(out, input);
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
