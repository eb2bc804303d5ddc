//! Debounced file-system change notices (inotify, through `notify`) as an
//! async stream of changed paths, for hot reload and anything else that must
//! follow files on disk.
//!
//! Only changes to what files hold or which files exist count: a reader
//! opening a file or listing a folder, and a change of permissions or
//! times, are no change. (`notify` reports opens too, so a follower that
//! walks its folder after each change woke itself up for ever.) Symlinks
//! are not watched through.

use std::path::{Path, PathBuf};
use std::time::Duration;

use notify_debouncer_mini::notify::event::{AccessKind, AccessMode, ModifyKind};
use notify_debouncer_mini::notify::{
    self, Event, EventHandler, EventKind, RecommendedWatcher, RecursiveMode, Watcher, WatcherKind,
};
use notify_debouncer_mini::{DebounceEventResult, Debouncer, new_debouncer_opt};
use tokio::sync::mpsc;

/// Changes under the watched paths; dropping it stops watching.
pub struct Changes {
    rx: mpsc::UnboundedReceiver<Vec<PathBuf>>,
    _debouncer: Debouncer<ContentWatcher>,
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
    // A symlink in a watched tree (say to /usr) would otherwise add a watch
    // for every folder behind it.
    let config = notify_debouncer_mini::Config::default()
        .with_timeout(debounce)
        .with_notify_config(notify::Config::default().with_follow_symlinks(false));
    let mut debouncer = new_debouncer_opt(config, move |events: DebounceEventResult| match events {
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

/// Whether an event of `kind` may have changed what a file holds or which
/// files exist; an overflowed queue (`Other`, with a rescan flag) may have.
fn changes_content(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) | EventKind::Modify(ModifyKind::Metadata(_)) => false,
        EventKind::Any | EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_) | EventKind::Other => true,
    }
}

/// The platform's watcher, passing on only the events that
/// [`changes_content`]; the debouncer builds it, so it filters before the
/// debouncer sees anything.
struct ContentWatcher(RecommendedWatcher);

impl Watcher for ContentWatcher {
    fn new<F: EventHandler>(mut handler: F, config: notify::Config) -> notify::Result<Self> {
        let filter = move |event: notify::Result<Event>| {
            if event.as_ref().map_or(true, |e| changes_content(&e.kind)) {
                handler.handle_event(event);
            }
        };
        RecommendedWatcher::new(filter, config).map(Self)
    }

    fn watch(&mut self, path: &Path, mode: RecursiveMode) -> notify::Result<()> {
        self.0.watch(path, mode)
    }

    fn unwatch(&mut self, path: &Path) -> notify::Result<()> {
        self.0.unwatch(path)
    }

    fn kind() -> WatcherKind {
        RecommendedWatcher::kind()
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
        let mut changes = watch(&[dir.path()], false, Duration::from_millis(50)).unwrap();
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
        let mut changes = watch(&[dir.path()], true, Duration::from_millis(50)).unwrap();
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
