//! A child's stderr: each line goes to the gateway's log, tagged with the
//! server, and the last few are kept for the operator console.
//!
//! A line is cut at [`LINE_BYTES`] and the rest of it is read and dropped,
//! so a child that writes without newlines cannot grow the gateway's memory
//! or its log lines. Credentials are redacted as in results (a child may log
//! what its tools returned) before a line is logged or kept.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tracing::{debug, info};

use leaks::redact_text;

/// Lines kept per server.
const KEPT_LINES: usize = 50;
/// Characters kept of one line (a server that writes a megabyte per line
/// must not make the console, or the gateway's memory, pay for it).
const KEPT_CHARS: usize = 500;
/// Longest line logged, in bytes: room for a stack trace's longest lines
/// and a JSON log record, a bound on memory however long the line.
const LINE_BYTES: usize = 8 * 1024;

/// The newest stderr lines of one server, across its restarts.
#[derive(Debug, Default)]
pub(super) struct Tail(Mutex<VecDeque<String>>);

impl Tail {
    fn push(&self, line: &str) {
        let mut kept: String = line.chars().take(KEPT_CHARS).collect();
        if kept.len() < line.len() {
            kept.push('…');
        }
        let mut lines = self.0.lock().expect("stderr tail lock");
        if lines.len() == KEPT_LINES {
            lines.pop_front();
        }
        lines.push_back(kept);
    }

    /// The kept lines, oldest first.
    pub(super) fn lines(&self) -> Vec<String> {
        self.0.lock().expect("stderr tail lock").iter().cloned().collect()
    }
}

/// Reads a child's stderr until it closes.
pub(super) async fn follow(server: String, stderr: impl AsyncRead + Unpin, tail: Arc<Tail>) {
    let mut lines = Lines::new(stderr);
    while let Ok(Some(line)) = lines.next().await {
        let line = redact_text(&line).map_or(line, |(redacted, _)| redacted);
        info!(target: "mcp_gateway::downstream::stderr", server = %server, "{line}");
        tail.push(&line);
    }
    debug!(server = %server, "stderr closed");
}

/// Lines of at most [`LINE_BYTES`], read through a buffer of its own size.
struct Lines<R> {
    reader: BufReader<R>,
    line: Vec<u8>,
}

impl<R: AsyncRead + Unpin> Lines<R> {
    fn new(reader: R) -> Self {
        Self {
            reader: BufReader::with_capacity(LINE_BYTES, reader),
            line: Vec::with_capacity(LINE_BYTES),
        }
    }

    /// The next line without its end, cut and marked when it was longer;
    /// None at the end of the stream.
    async fn next(&mut self) -> std::io::Result<Option<String>> {
        self.line.clear();
        // Bytes of this line read past the limit and dropped.
        let mut dropped = 0u64;
        loop {
            let buf = self.reader.fill_buf().await?;
            if buf.is_empty() {
                if self.line.is_empty() && dropped == 0 {
                    return Ok(None);
                }
                break;
            }
            let newline = buf.iter().position(|&b| b == b'\n');
            let chunk = &buf[..newline.unwrap_or(buf.len())];
            let take = chunk.len().min(LINE_BYTES - self.line.len());
            self.line.extend_from_slice(&chunk[..take]);
            dropped += (chunk.len() - take) as u64;
            let used = newline.map_or(buf.len(), |at| at + 1);
            self.reader.consume(used);
            if newline.is_some() {
                break;
            }
        }
        Ok(Some(finish(&mut self.line, dropped)))
    }
}

/// A line's text. A cut line ends before its last, cut word (half a
/// credential matches no format, so redaction would miss it), then says
/// how much was dropped.
fn finish(line: &mut Vec<u8>, mut dropped: u64) -> String {
    if dropped == 0 {
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        return String::from_utf8_lossy(line).into_owned();
    }
    let keep = match line.iter().rposition(u8::is_ascii_whitespace) {
        Some(space) => space,
        // One word: keep it whole but for a character cut in half.
        None => match std::str::from_utf8(line) {
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            _ => line.len(),
        },
    };
    dropped += (line.len() - keep) as u64;
    line.truncate(keep);
    format!("{}… [cut: {dropped} more bytes]", String::from_utf8_lossy(line))
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    async fn all_lines(reader: impl AsyncRead + Unpin) -> Vec<String> {
        let mut lines = Lines::new(reader);
        let mut all = Vec::new();
        while let Some(line) = lines.next().await.unwrap() {
            all.push(line);
        }
        assert!(lines.line.capacity() <= LINE_BYTES, "the line buffer never grew");
        all
    }

    #[test]
    fn the_tail_is_bounded_in_lines_and_line_length() {
        let tail = Tail::default();
        for i in 0..KEPT_LINES + 10 {
            tail.push(&format!("line {i}"));
        }
        tail.push(&"x".repeat(10_000));
        let lines = tail.lines();
        assert_eq!(lines.len(), KEPT_LINES);
        assert_eq!(lines[0], "line 11");
        assert_eq!(lines.last().unwrap().chars().count(), KEPT_CHARS + 1);
    }

    #[tokio::test]
    async fn a_line_without_end_is_cut_and_marked_and_never_held() {
        let flood = tokio::io::repeat(b'x').take(50_000_000);
        let lines = all_lines(flood).await;
        assert_eq!(lines.len(), 1);
        let more = 50_000_000 - LINE_BYTES;
        assert_eq!(
            lines[0],
            format!("{}… [cut: {more} more bytes]", "x".repeat(LINE_BYTES))
        );
    }

    #[tokio::test]
    async fn after_a_cut_line_the_next_lines_are_whole() {
        let long = format!("start {}\r\n", "y".repeat(3 * LINE_BYTES));
        let reader = long.as_bytes().chain(&b"second\r\nthird, no newline"[..]);
        let lines = all_lines(reader).await;
        // All but "start" and the newline, the cut word and the \r included.
        let more = long.len() - "start".len() - 1;
        assert_eq!(
            lines,
            [
                format!("start… [cut: {more} more bytes]"),
                "second".into(),
                "third, no newline".into()
            ]
        );
    }

    #[tokio::test]
    async fn a_cut_ends_on_a_whole_character() {
        let text = format!("{}é{}", "a".repeat(LINE_BYTES - 1), "b".repeat(10));
        let lines = all_lines(text.as_bytes()).await;
        assert_eq!(lines, [format!("{}… [cut: 12 more bytes]", "a".repeat(LINE_BYTES - 1))]);
    }

    #[tokio::test]
    async fn credentials_are_redacted_before_a_line_is_logged_or_kept() {
        let token = format!("mgw_7_{}", "0123456789abcdef".repeat(4));
        let text = format!("calling with {token}\nAWS key AKIAIOSFODNN7ABCDEFG in use\nplain\n");
        let tail = Arc::new(Tail::default());
        follow("s".into(), text.as_bytes(), tail.clone()).await;
        assert_eq!(
            tail.lines(),
            [
                "calling with [REDACTED:gateway-token]",
                "AWS key [REDACTED:aws-access-key] in use",
                "plain"
            ]
        );
    }
}
