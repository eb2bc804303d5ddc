//! The transport to a child process speaking MCP on stdin/stdout: its
//! lines as `LineTransport` reads and writes them, and the MCP stdio
//! shutdown when the server stops; and [`Lent`], which gets a transport
//! back from a handshake that gave up on it.

use std::io;
use std::time::Duration;

use process_wrap::tokio::ChildWrapper;
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::oneshot;

use super::line_transport::LineTransport;

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

/// A transport lent to one handshake, and handed back if the handshake
/// drops it. rmcp's Discover mode ends on a legacy server's answer to the
/// `server/discover` probe and drops the transport; handed back, the child
/// that answered gets `initialize` down the same pipe instead of being
/// started a second time (a 4 s start cost 8 s, and a client's first call
/// its 5 s timeout).
pub(super) struct Lent<T> {
    /// Held until dropped.
    inner: Option<T>,
    back: Option<oneshot::Sender<T>>,
}

impl<T> Lent<T> {
    /// `inner`, lent; the receiver gets it back when the borrower drops it
    /// (and nothing if the borrower kept it: it then lives in the connection).
    pub(super) fn new(inner: T) -> (Self, oneshot::Receiver<T>) {
        let (back, returned) = oneshot::channel();
        let lent = Self {
            inner: Some(inner),
            back: Some(back),
        };
        (lent, returned)
    }

    fn inner(&mut self) -> &mut T {
        self.inner.as_mut().expect("a lent transport is held until dropped")
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Lent<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner().send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.inner().receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        // Closed on purpose: the borrower is done with it, and so is everyone.
        self.back = None;
        self.inner().close()
    }
}

impl<T> Drop for Lent<T> {
    fn drop(&mut self) {
        if let (Some(inner), Some(back)) = (self.inner.take(), self.back.take()) {
            // Nobody waiting: the transport is dropped here, as it would be.
            let _ = back.send(inner);
        }
    }
}
