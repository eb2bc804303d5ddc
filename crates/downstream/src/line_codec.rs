//! JSON-RPC framed as lines, one message each, as MCP's stdio transport
//! frames it (a stdio child's pipes, a built-in's in-memory pipe, and the
//! gateway's own stdin and stdout): lines of at most a limit, split off in
//! bounded memory, and of a longer line only what answering it needs.
//!
//! A peer that writes a line past the limit (a 40 MiB tool answer, a
//! client's runaway request) gets neither the gateway's memory nor silence:
//! the line is dropped as it arrives, scanned on the way for its top-level
//! `id` and `method` ([`LineScan`]), so whoever reads it can answer that
//! request, or fail the call it answers, at once.

use tokio_util::bytes::{Buf, BytesMut};
use tokio_util::codec::Decoder;

/// One line a peer wrote.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// A line within the limit, without its line end (`\n` or `\r\n`) or a
    /// leading byte order mark.
    Whole(BytesMut),
    /// A line past the limit, dropped unread but for [`Oversized`].
    TooLong(Oversized),
}

/// What a line past the limit held, as far as answering it goes.
#[derive(Debug, PartialEq)]
pub struct Oversized {
    /// Its length, without its newline.
    pub bytes: usize,
    /// The raw JSON of its top-level `id`, if short enough to keep.
    pub id: Option<Vec<u8>>,
    /// It has a top-level `method`: a request or notification, not an answer.
    pub is_request: bool,
}

/// Splits a stream into [`Line`]s of at most `limit` bytes. Memory stays
/// within the limit (plus one read) however long a line is: a longer one
/// is scanned and dropped as it arrives.
#[derive(Debug)]
pub struct MessageLines {
    limit: usize,
    /// Bytes of the buffer already searched for a newline.
    searched: usize,
    /// The scan of a line found too long, while the rest of it is dropped.
    dropping: Option<LineScan>,
}

impl MessageLines {
    /// Lines of at most `limit` bytes, their newline not counted.
    pub fn new(limit: usize) -> Self {
        Self {
            limit,
            searched: 0,
            dropping: None,
        }
    }

    /// The line ending at the newline at `end`, without its line end or a byte order mark.
    fn take(&mut self, buf: &mut BytesMut, end: usize) -> BytesMut {
        let mut line = buf.split_to(end + 1);
        self.searched = 0;
        line.truncate(end);
        if line.last() == Some(&b'\r') {
            line.truncate(end - 1);
        }
        if line.starts_with(b"\xEF\xBB\xBF") {
            line.advance(3);
        }
        line
    }
}

impl Decoder for MessageLines {
    type Item = Line;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Line>, Self::Error> {
        let newline = first_newline(&buf[self.searched..]).map(|i| i + self.searched);
        if self.dropping.is_none() {
            match newline {
                Some(end) if end <= self.limit => return Ok(Some(Line::Whole(self.take(buf, end)))),
                None if buf.len() <= self.limit => {
                    self.searched = buf.len();
                    return Ok(None);
                }
                // Past the limit: from here on the line is scanned and dropped.
                _ => self.dropping = Some(LineScan::default()),
            }
        }
        let scan = self.dropping.as_mut().expect("dropping a line");
        self.searched = 0;
        let Some(end) = newline else {
            scan.feed(buf);
            buf.clear();
            return Ok(None);
        };
        scan.feed(&buf[..end]);
        buf.advance(end + 1);
        let scan = self.dropping.take().expect("dropping a line");
        Ok(Some(Line::TooLong(scan.finish())))
    }

    /// A last line without its newline is incomplete: dropped, as rmcp does.
    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Line>, Self::Error> {
        let line = self.decode(buf)?;
        if line.is_none() {
            buf.clear();
        }
        Ok(line)
    }
}

/// Where the first newline in `bytes` is.
fn first_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// A streaming scan of one JSON-RPC line for its top-level `id` and
/// `method`, in constant memory whatever the line's length.
#[derive(Debug, Default)]
pub struct LineScan {
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
    /// Feeds bytes of the line (no newline among them).
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.push(b);
        }
    }

    /// What the line held, once all of it was fed.
    pub fn finish(self) -> Oversized {
        Oversized {
            bytes: self.bytes,
            id: self.found_id,
            is_request: self.is_request,
        }
    }

    fn push(&mut self, b: u8) {
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
            return;
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

    fn scan(line: &str) -> Oversized {
        let mut s = LineScan::default();
        s.feed(line.as_bytes());
        s.finish()
    }

    #[test]
    fn the_scan_finds_the_top_level_id_wherever_it_stands() {
        let l = scan(r#"{"jsonrpc":"2.0","id":7,"result":{"id":99,"content":[]}}"#);
        assert_eq!((l.id.as_deref(), l.is_request), (Some(&b"7"[..]), false));
        // TypeScript servers write the result first.
        let l = scan(r#"{"result":{"content":[{"text":"a \"id\": 3, }"}],"id":"x"},"jsonrpc":"2.0","id":"req-1"}"#);
        assert_eq!(l.id.as_deref(), Some(&br#""req-1""#[..]));
        let l = scan(r#"{ "id" : 12 , "result" : {} }"#);
        assert_eq!(l.id.as_deref(), Some(&b"12"[..]));
    }

    #[test]
    fn the_scan_tells_requests_and_notifications_from_answers() {
        let l = scan(r#"{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":{}}"#);
        assert!(l.is_request);
        let l = scan(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":1}}"#);
        assert_eq!((l.id, l.is_request), (None, true));
        assert_eq!(scan("not json at all, id: 5").id, None);
        assert_eq!(scan(r#"{"id":null,"error":{}}"#).id, None);
    }

    /// Every line of `input`, fed `chunk` bytes at a time, as reads may hand them over.
    fn split(limit: usize, input: &str, chunk: usize) -> Vec<Line> {
        let mut decoder = MessageLines::new(limit);
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        for piece in input.as_bytes().chunks(chunk) {
            buf.extend_from_slice(piece);
            while let Some(line) = decoder.decode(&mut buf).unwrap() {
                out.push(line);
            }
            assert!(buf.len() <= limit + chunk, "bounded: {} bytes held", buf.len());
        }
        out.extend(decoder.decode_eof(&mut buf).unwrap());
        out
    }

    fn whole(s: &str) -> Line {
        Line::Whole(BytesMut::from(s))
    }

    #[test]
    fn lines_come_whole_within_the_limit_and_scanned_past_it() {
        let long = format!(r#"{{"jsonrpc":"2.0","result":{{"t":"{}"}},"id":9}}"#, "x".repeat(200));
        let input = format!("{{\"a\":1}}\r\n\n\u{feff}{{\"b\":2}}\n{long}\n{{\"c\":3}}\n{{\"d\":");
        for chunk in [1, 7, 64, 4096] {
            assert_eq!(
                split(100, &input, chunk),
                [
                    whole(r#"{"a":1}"#),
                    whole(""),
                    whole(r#"{"b":2}"#),
                    Line::TooLong(Oversized {
                        bytes: long.len(),
                        id: Some(b"9".to_vec()),
                        is_request: false
                    }),
                    whole(r#"{"c":3}"#),
                ],
                "{chunk} bytes a read; the unterminated last line is dropped"
            );
        }
    }

    #[test]
    fn a_line_exactly_at_the_limit_is_whole() {
        let at = "y".repeat(100);
        assert_eq!(split(100, &format!("{at}\n"), 3), [whole(&at)]);
        let over = "y".repeat(101);
        let lines = split(100, &format!("{over}\n"), 3);
        assert!(matches!(&lines[..], [Line::TooLong(o)] if o.bytes == 101), "{lines:?}");
    }
}
