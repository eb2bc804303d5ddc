//! Keeps the index following the archive folders while the gateway serves:
//! an incremental run at start (so a missing or stale index is built), then
//! one after each burst of changes (inotify, debounced). Stops when the
//! server that started it is dropped.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio_util::sync::{CancellationToken, DropGuard};

use super::ArchivesConfig;

/// Quiet time before re-indexing: a browser or sync tool writes in bursts.
const DEBOUNCE: Duration = Duration::from_millis(500);

/// The running follower; dropping it stops it.
#[derive(Debug)]
pub(super) struct Follower {
    reindexing: Arc<AtomicBool>,
    _stop: DropGuard,
}

impl Follower {
    /// Starts following `config`'s folders (on the current tokio runtime).
    pub(super) fn start(config: Arc<ArchivesConfig>) -> Self {
        let reindexing = Arc::new(AtomicBool::new(true));
        let stop = CancellationToken::new();
        tokio::spawn(follow(config, reindexing.clone(), stop.clone()));
        Self {
            reindexing,
            _stop: stop.drop_guard(),
        }
    }

    /// Whether changes are being indexed right now.
    pub(super) fn reindexing(&self) -> bool {
        self.reindexing.load(Ordering::SeqCst)
    }
}

async fn follow(config: Arc<ArchivesConfig>, reindexing: Arc<AtomicBool>, stop: CancellationToken) {
    let folders: Vec<&Path> = config.folders.iter().map(|f| f.path.as_path()).collect();
    // Watching starts before the first run, so a change during it is not lost.
    // The stores may live inside a watched folder: their own writes (many
    // a second while indexing) are dropped on the watcher's thread.
    let stores = config.clone();
    let wanted = move |p: &Path| !is_store(&stores, p);
    let mut changes = match watch::watch(&folders, true, DEBOUNCE, wanted) {
        Ok(c) => Some(c),
        Err(e) => {
            tracing::warn!(error = %e, "cannot watch the archive folders; run mcp-gateway archive index after changes");
            None
        }
    };
    loop {
        reindexing.store(true, Ordering::SeqCst);
        reindex(&config).await;
        reindexing.store(false, Ordering::SeqCst);
        loop {
            let changed = tokio::select! {
                _ = stop.cancelled() => return,
                c = async { changes.as_mut()?.next().await } => c,
            };
            match changed {
                Some(paths) if paths.iter().all(|p| is_no_change(p)) => continue,
                Some(_) => break,
                None => {
                    stop.cancelled().await;
                    return;
                }
            }
        }
    }
}

/// Whether a change at `path` leaves the archive as it was: a file the
/// indexer does not read (a download's `.part`, an editor's swap file). The
/// stores' own writes never arrive ([`is_store`]). A path that is gone may
/// have been anything, so it counts.
fn is_no_change(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| {
        m.is_file() && super::parse::Kind::of(&path.file_name().unwrap_or_default().to_string_lossy()).is_none()
    })
}

/// Whether `path` is the archive's own database or full-text index.
fn is_store(config: &ArchivesConfig, path: &Path) -> bool {
    let db_name = config.db_path.file_name().unwrap_or_default().to_string_lossy();
    path.starts_with(&config.index_dir)
        || (path.parent() == config.db_path.parent()
            && path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(db_name.as_ref())))
}

async fn reindex(config: &Arc<ArchivesConfig>) {
    let config = config.clone();
    match tokio::task::spawn_blocking(move || super::index(&config, &mut |_| {})).await {
        Ok(Ok(r)) => tracing::info!(
            added = r.added,
            updated = r.updated,
            removed = r.removed,
            unchanged = r.unchanged,
            "archive index follows its folders"
        ),
        Ok(Err(e)) => tracing::warn!(error = %e, "archive re-indexing failed; the previous index stays"),
        Err(e) => tracing::warn!(error = %e, "archive re-indexing stopped"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stores_own_writes_are_no_change() {
        let config = ArchivesConfig::from_raw(
            config::RawArchives {
                folders: vec!["notes".into()],
                db_path: Some("notes/search.db".into()),
                ..Default::default()
            },
            Path::new("/a"),
        )
        .unwrap();
        assert!(is_store(&config, Path::new("/a/notes/search.db-wal")));
        assert!(is_store(&config, Path::new("/a/notes/search.tantivy/meta.json")));
        assert!(!is_store(&config, Path::new("/a/notes/idea.md")));
    }

    #[test]
    fn files_the_indexer_does_not_read_are_no_change() {
        let dir = tempfile::tempdir().unwrap();
        let notes = dir.path().join("notes");
        std::fs::create_dir_all(notes.join("new.d")).unwrap();
        std::fs::write(notes.join("page.html.part"), "<p>half").unwrap();
        std::fs::write(notes.join("idea.md"), "# idea").unwrap();
        assert!(is_no_change(&notes.join("page.html.part")));
        assert!(!is_no_change(&notes.join("idea.md")));
        assert!(!is_no_change(&notes.join("new.d")), "a folder may hold documents");
        assert!(
            !is_no_change(&notes.join("gone.part")),
            "a removed path may have been one"
        );
    }
}
