//! The transport to a child process speaking MCP on stdin/stdout: its
//! lines as `LineTransport` reads and writes them, and the MCP stdio
//! shutdown when the server stops.

use std::io;
use std::time::Duration;

use process_wrap::tokio::ChildWrapper;
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::process::{ChildStdin, ChildStdout};

use super::lines::LineTransport;

/// How long a child gets to exit after its stdin closes, and again after SIGTERM.
const EXIT_WAIT: Duration = Duration::from_secs(3);

/// A running child and the MCP transport over its stdio.
pub(super) struct ChildTransport {
    child: Option<Box<dyn ChildWrapper>>,
    lines: LineTransport<ChildStdout, ChildStdin>,
}

impl ChildTransport {
    /// Takes a spawned child's stdin and stdout; answers longer than `limit`
    /// bytes become errors.
    pub(super) fn new(name: String, mut child: Box<dyn ChildWrapper>, limit: usize) -> io::Result<Self> {
        let stdin = child.inner_mut().stdin().take();
        let stdout = child.inner_mut().stdout().take();
        let (Some(stdin), Some(stdout)) = (stdin, stdout) else {
            return Err(io::Error::other("the child's stdin and stdout must be piped"));
        };
        Ok(Self {
            child: Some(child),
            lines: LineTransport::new(name, stdout, stdin, limit),
        })
    }

    /// The child's process id (its process group's, too).
    pub(super) fn id(&self) -> Option<u32> {
        self.child.as_ref()?.id()
    }
}

impl Transport<RoleClient> for ChildTransport {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.lines.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        self.lines.receive().await
    }

    /// The MCP stdio shutdown: close its stdin, wait, SIGTERM, wait, kill.
    async fn close(&mut self) -> Result<(), Self::Error> {
        self.lines.close_input().await;
        let Some(child) = self.child.as_mut() else {
            return Ok(());
        };
        if tokio::time::timeout(EXIT_WAIT, child.wait()).await.is_err() {
            tracing::warn!(
                server = %self.lines.name(),
                wait_ms = EXIT_WAIT.as_millis() as u64,
                "the server did not exit when its stdin closed; sending SIGTERM"
            );
            let _ = child.signal(nix::sys::signal::Signal::SIGTERM as i32);
            if tokio::time::timeout(EXIT_WAIT, child.wait()).await.is_err() {
                Box::into_pin(child.kill()).await?;
            }
        }
        self.child = None;
        Ok(())
    }
}

impl Drop for ChildTransport {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.start_kill();
        }
    }
}
