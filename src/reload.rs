//! Hot reload: when the config file changes (inotify, see the `watch` crate)
//! or the process gets SIGHUP, the new file is validated and its difference
//! applied (see [`Gateway::reload`]). A file that does not validate is
//! refused with its error, and the configuration in force stays.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use config::Config;
use gateway::Gateway;

/// Quiet time after a change before the file is read: editors write in steps.
const DEBOUNCE: Duration = Duration::from_millis(200);

/// What identifies one version of the file without reading it.
type Stamp = Option<(SystemTime, u64)>;

fn stamp(path: &Path) -> Stamp {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// Watches `path` until `ct` is cancelled; `current` is the configuration in force.
pub async fn watch(path: PathBuf, gateway: Gateway, mut current: Config, ct: CancellationToken) {
    let mut hangup = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
        Ok(s) => Some(s),
        Err(e) => {
            warn!(error = %e, "cannot listen for SIGHUP; the config file is still watched");
            None
        }
    };
    // The folder, not the file: an editor that saves by renaming a new file
    // over the old one would leave a watch on the file watching nothing.
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // Only the file itself: the store often sits beside it.
    let name = path.file_name().map(std::ffi::OsStr::to_os_string);
    let wanted = move |p: &Path| p.file_name() == name.as_deref();
    let mut changes = match watch::watch(&[folder], false, DEBOUNCE, wanted) {
        Ok(c) => {
            info!(path = %path.display(), "watching the config file for changes");
            Some(c)
        }
        Err(e) => {
            warn!(path = %path.display(), error = %e, "cannot watch the config file; SIGHUP still reloads it");
            None
        }
    };
    let mut seen = stamp(&path);
    loop {
        let trigger = tokio::select! {
            _ = ct.cancelled() => return,
            Some(()) = async { hangup.as_mut()?.recv().await } => "SIGHUP",
            Some(_) = async { changes.as_mut()?.next().await } => {
                let now = stamp(&path);
                if now == seen {
                    continue;
                }
                // Saved in place, a file is empty between its truncation and
                // its new text; a writer held up that long (a loaded machine)
                // must not have its servers dropped meanwhile. Its write is
                // the next change.
                if now.is_some_and(|(_, len)| len == 0) {
                    info!(path = %path.display(), "the config file is empty (being written?); waiting for its next change");
                    continue;
                }
                seen = now;
                "file change"
            }
        };
        let next = match Config::load(Some(&path)) {
            Ok(next) => next,
            Err(e) => {
                warn!(trigger, error = %e, "new configuration refused; the previous one stays in force");
                telemetry::config_reload("refused");
                continue;
            }
        };
        match gateway.reload(&current, &next) {
            Ok(done) => {
                let servers = &done.servers;
                info!(
                    trigger,
                    added = ?servers.added,
                    removed = ?servers.removed,
                    restarted = ?servers.restarted,
                    unchanged = servers.unchanged,
                    "configuration reloaded"
                );
                if !done.needs_restart.is_empty() {
                    warn!(settings = ?done.needs_restart, "these settings changed but apply only after a restart");
                }
                telemetry::config_reload("applied");
                current = next;
            }
            Err(e) => {
                warn!(trigger, error = %e, "new configuration could not be applied; the previous one stays in force");
                telemetry::config_reload("refused");
            }
        }
    }
}
