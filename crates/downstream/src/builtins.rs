//! The built-in servers as the downstream layer knows them: something that
//! serves one on its end of an in-memory pipe. Which servers there are, and
//! whose crate each comes from, is the entry point's to say
//! (`launch::BuiltinServers`); this layer names none of them.

use rmcp::{ServerHandler, ServiceExt};
use tokio::io::DuplexStream;
use tracing::warn;

use config::Builtin;

/// Serves the built-in servers a configuration names.
pub trait Builtins: Send + Sync + std::fmt::Debug {
    /// Serves `builtin` on `io` until the gateway's end of the pipe closes.
    fn serve(&self, builtin: &Builtin, io: DuplexStream);
}

/// Runs `server` on its end of the pipe until the gateway's end closes: how
/// a [`Builtins`] serves each of its servers.
pub fn serve_on<S: ServerHandler>(server: S, io: DuplexStream) {
    tokio::spawn(async move {
        match server.serve(io).await {
            Ok(running) => {
                let _ = running.waiting().await;
            }
            Err(e) => warn!(error = %e, "built-in server did not start"),
        }
    });
}
