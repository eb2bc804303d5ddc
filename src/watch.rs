//! Debounced file-system change notices (inotify, through `notify`) as an
//! async stream of changed paths, for hot reload and anything else that must
//! follow files on disk.

use std::path::{Path, PathBuf};
use std::time::Duration;

use notify_debouncer_mini::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_mini::{DebounceEventResult, Debouncer, new_debouncer};
use tokio::sync::mpsc;

/// Changes under the watched paths; dropping it stops watching.
pub struct Changes {
    rx: mpsc::UnboundedReceiver<Vec<PathBuf>>,
    _debouncer: Debouncer<RecommendedWatcher>,
}

impl std::fmt::Debug for Changes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Changes")
    }
}

/// Why watching could not start (no inotify, too many watches, a missing folder).
pub type Error = notify_debouncer_mini::notify::Error;

impl Changes {
    /// The paths that changed in the next quiet period of `debounce`; `None`
    /// once the watcher has stopped.
    pub async fn next(&mut self) -> Option<Vec<PathBuf>> {
        self.rx.recv().await
    }
}

/// Watches `paths` (folders: `recursive` or just their entries); changes
/// arrive once things have been quiet for `debounce`.
pub fn watch(paths: &[&Path], recursive: bool, debounce: Duration) -> Result<Changes, Error> {
    let (tx, rx) = mpsc::unbounded_channel();
    let mut debouncer = new_debouncer(debounce, move |events: DebounceEventResult| match events {
        Ok(events) => {
            let _ = tx.send(events.into_iter().map(|e| e.path).collect());
        }
        Err(e) => tracing::warn!(error = %e, "file watch error"),
    })?;
    let mode = if recursive {
        RecursiveMode::Recursive
    } else {
        RecursiveMode::NonRecursive
    };
    for path in paths {
        debouncer.watcher().watch(path, mode)?;
    }
    Ok(Changes {
        rx,
        _debouncer: debouncer,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_write_and_a_rename_over_are_both_seen() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.toml");
        std::fs::write(&file, "one").unwrap();
        let mut changes = watch(&[dir.path()], false, Duration::from_millis(50)).unwrap();
        std::fs::write(&file, "two").unwrap();
        seen_within(&mut changes, &file).await;
        // An editor's atomic save: write a temp file, rename it over.
        let temp = dir.path().join(".a.toml.swp");
        std::fs::write(&temp, "three").unwrap();
        std::fs::rename(&temp, &file).unwrap();
        seen_within(&mut changes, &file).await;
    }

    /// Waits for a batch naming `file`; on a loaded machine the steps of one
    /// save may land in separate batches (the temp file's alone first).
    async fn seen_within(changes: &mut Changes, file: &Path) {
        let mut seen = Vec::new();
        let found = tokio::time::timeout(Duration::from_secs(10), async {
            while let Some(batch) = changes.next().await {
                seen.extend(batch);
                if seen.iter().any(|p| p.file_name() == file.file_name()) {
                    return;
                }
            }
        })
        .await;
        assert!(found.is_ok(), "{file:?} not among {seen:?}");
    }
}
