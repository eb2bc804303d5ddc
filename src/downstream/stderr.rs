//! A child's stderr: each line goes to the gateway's log, tagged with the
//! server, and the last few are kept for the operator console.

use std::collections::VecDeque;
use std::sync::Mutex;

use tokio::io::AsyncBufReadExt;
use tracing::{debug, info};

/// Lines kept per server.
const KEPT_LINES: usize = 50;
/// Characters kept of one line (a server that writes a megabyte per line
/// must not make the console, or the gateway's memory, pay for it).
const KEPT_CHARS: usize = 500;

/// The newest stderr lines of one server, across its restarts.
#[derive(Debug, Default)]
pub struct Tail(Mutex<VecDeque<String>>);

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
    pub fn lines(&self) -> Vec<String> {
        self.0.lock().expect("stderr tail lock").iter().cloned().collect()
    }
}

/// Reads a child's stderr until it closes.
pub(super) async fn follow(server: String, stderr: tokio::process::ChildStderr, tail: std::sync::Arc<Tail>) {
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        info!(target: "mcp_gateway::downstream::stderr", server = %server, "{line}");
        tail.push(&line);
    }
    debug!(server = %server, "stderr closed");
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
