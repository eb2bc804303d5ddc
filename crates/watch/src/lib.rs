//! Debounced file-system change notices (inotify, through `notify`) as an
//! async stream of changed paths, for hot reload and anything else that must
//! follow files on disk.
//!
//! Only changes to what files hold or which files exist count: a reader
//! opening a file or listing a folder, and a change of permissions or
//! times, are no change. (`notify` reports opens too, so a follower that
//! walks its folder after each change woke itself up for ever.) Symlinks
//! are not watched through.
//!
//! A crate of its own, below everything that follows files: it knows only
//! `notify` and tokio.

use std::path::{Path, PathBuf};
use std::time::Duration;

use notify::event::{AccessKind, AccessMode, ModifyKind};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::mpsc;

/// Changes under the watched paths; dropping it stops watching.
pub struct Changes {
    rx: mpsc::UnboundedReceiver<Vec<PathBuf>>,
    /// Changed paths received, waiting for the quiet time.
    pending: Vec<PathBuf>,
    debounce: Duration,
    _watcher: RecommendedWatcher,
}

impl std::fmt::Debug for Changes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Changes")
    }
}

/// Why watching could not start (no inotify, too many watches, a missing folder).
pub type Error = notify::Error;

impl Changes {
    /// The paths that changed, once nothing more has changed for the
    /// debounce time; `None` once the watcher has stopped.
    /// Cancel-safe: what arrived before a caller gave up waiting is kept
    /// for the next call.
    pub async fn next(&mut self) -> Option<Vec<PathBuf>> {
        if self.pending.is_empty() {
            self.pending = self.rx.recv().await?;
        }
        while let Ok(Some(more)) = tokio::time::timeout(self.debounce, self.rx.recv()).await {
            self.pending.extend(more);
        }
        let mut paths = std::mem::take(&mut self.pending);
        paths.sort();
        paths.dedup();
        Some(paths)
    }
}

/// Watches `paths` (folders: `recursive` or just their entries) for changes
/// to the paths that are `wanted`; changes arrive once things have been
/// quiet for `debounce`. What is not wanted is dropped on the watcher's own
/// thread: a database beside a watched file writes many times a second.
pub fn watch(
    paths: &[&Path],
    recursive: bool,
    debounce: Duration,
    wanted: impl Fn(&Path) -> bool + Send + 'static,
) -> Result<Changes, Error> {
    let (tx, rx) = mpsc::unbounded_channel();
    let handler = move |event: notify::Result<Event>| match event {
        Ok(event) if changes_content(&event.kind) => {
            let paths: Vec<PathBuf> = event.paths.into_iter().filter(|p| wanted(p)).collect();
            if !paths.is_empty() {
                let _ = tx.send(paths);
            }
        }
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "file watch error"),
    };
    // A symlink in a watched tree (say to /usr) would otherwise add a watch
    // for every folder behind it.
    let mut watcher = RecommendedWatcher::new(handler, notify::Config::default().with_follow_symlinks(false))?;
    let mode = if recursive {
        RecursiveMode::Recursive
    } else {
        RecursiveMode::NonRecursive
    };
    for path in paths {
        watcher.watch(path, mode)?;
    }
    Ok(Changes {
        rx,
        pending: Vec::new(),
        debounce,
        _watcher: watcher,
    })
}

/// Whether an event of `kind` may have changed what a file holds or which
/// files exist; an overflowed queue (`Other`, with a rescan flag) may have.
fn changes_content(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) | EventKind::Modify(ModifyKind::Metadata(_)) => false,
        EventKind::Any | EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_) | EventKind::Other => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_write_and_a_rename_over_are_both_seen() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.toml");
        std::fs::write(&file, "one").unwrap();
        let mut changes = watch(&[dir.path()], false, Duration::from_millis(50), |_| true).unwrap();
        std::fs::write(&file, "two").unwrap();
        seen_within(&mut changes, &file).await;
        // An editor's atomic save: write a temp file, rename it over.
        let temp = dir.path().join(".a.toml.swp");
        std::fs::write(&temp, "three").unwrap();
        std::fs::rename(&temp, &file).unwrap();
        seen_within(&mut changes, &file).await;
    }

    #[tokio::test]
    async fn reading_listing_and_permissions_are_no_change() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.md");
        std::fs::write(&file, "one").unwrap();
        let mut changes = watch(&[dir.path()], true, Duration::from_millis(50), |_| true).unwrap();
        std::fs::read(&file).unwrap();
        std::fs::read_dir(dir.path()).unwrap().for_each(drop);
        let mode = std::fs::metadata(&file).unwrap().permissions();
        std::fs::set_permissions(&file, mode).unwrap();
        let written = dir.path().join("b.md");
        std::fs::write(&written, "two").unwrap();
        let first = tokio::time::timeout(Duration::from_secs(10), changes.next())
            .await
            .expect("the write is seen")
            .unwrap();
        assert!(first.iter().all(|p| *p == written), "{first:?}");
    }

    #[tokio::test]
    async fn what_is_not_wanted_never_arrives() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("gateway.toml");
        let name = file.file_name().unwrap().to_owned();
        let mut changes = watch(&[dir.path()], false, Duration::from_millis(50), move |p| {
            p.file_name() == Some(name.as_os_str())
        })
        .unwrap();
        // A store beside the config file, written again and again.
        let store = dir.path().join("gateway.db-wal");
        for n in 0..20 {
            std::fs::write(&store, n.to_string()).unwrap();
        }
        std::fs::write(&file, "one").unwrap();
        let first = tokio::time::timeout(Duration::from_secs(10), changes.next())
            .await
            .expect("the config's write is seen")
            .unwrap();
        assert_eq!(first, vec![file]);
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
