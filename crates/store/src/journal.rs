//! The audit journal: how strict audit on SQLite makes a call's row durable
//! before the call goes on or its answer leaves, for one `write` and no
//! thread hop. Rows are appended, a line each, to a segment file this
//! process holds locked; the audit writer folds them into the store behind
//! the answers (its group commit, as for best-effort rows) and a segment is
//! deleted once every row in it has committed. A segment whose process is
//! gone (its lock is free) is replayed at the next start (rows are written
//! once per request id, so a replay changes nothing twice), then deleted.
//!
//! Durable as the SQLite store itself is (WAL, `synchronous = NORMAL`): a row
//! in the page cache outlives a crash or kill of the gateway, not a power cut.

use std::fs::{self, File};
use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::Error;

/// A segment past this size is retired at the next append, once the one
/// retired before it has been deleted.
const SEGMENT_BYTES: u64 = 4 << 20;

/// Told apart within one process: two stores may journal into one folder.
static NEXT_SEGMENT: AtomicU64 = AtomicU64::new(1);

#[derive(Debug)]
pub(super) struct Journal {
    segments: Mutex<Segments>,
}

#[derive(Debug)]
struct Segments {
    dir: PathBuf,
    current: Segment,
    /// Lines appended so far, and lines the writer has committed.
    sent: u64,
    committed: u64,
    /// A full segment, deleted once `committed` reaches the count.
    retiring: Option<(Segment, u64)>,
}

#[derive(Debug)]
struct Segment {
    path: PathBuf,
    file: File,
    bytes: u64,
}

impl Segment {
    /// A new segment of this process's, locked for as long as it is open.
    fn create(dir: &Path) -> std::io::Result<Segment> {
        loop {
            let n = NEXT_SEGMENT.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!("audit-{}-{n}.jsonl", std::process::id()));
            match File::options().append(true).create_new(true).open(&path) {
                Ok(file) => {
                    file.try_lock().map_err(std::io::Error::other)?;
                    return Ok(Segment { path, file, bytes: 0 });
                }
                // A dead process's of the same id, left because it is still held.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Appends `line` whole or not at all: a torn line would also spoil the
    /// line after it.
    fn append(&mut self, line: &[u8]) -> std::io::Result<()> {
        if let Err(e) = self.file.write_all(line) {
            let _ = self.file.set_len(self.bytes);
            return Err(e);
        }
        self.bytes += line.len() as u64;
        Ok(())
    }
}

/// The journal folder of a SQLite store at `db`.
pub(super) fn folder_of(db: &Path) -> PathBuf {
    let mut name = db.file_name().unwrap_or_default().to_os_string();
    name.push(".audit-journal");
    db.with_file_name(name)
}

impl Journal {
    /// Hands the lines of each segment no live process holds to `replay`,
    /// deletes the segment once it has taken them, and starts a segment of
    /// this process's. Gives the lines replayed.
    pub(super) fn open(
        dir: &Path,
        mut replay: impl FnMut(Vec<String>) -> Result<(), Error>,
    ) -> Result<(Journal, usize), Error> {
        let failed = |e: std::io::Error| Error::Journal {
            dir: dir.display().to_string(),
            reason: e.to_string(),
        };
        fs::create_dir_all(dir).map_err(failed)?;
        let mut replayed = 0;
        for path in segment_paths(dir).map_err(failed)? {
            let file = File::open(&path).map_err(failed)?;
            match file.try_lock() {
                Ok(()) => {}
                // Its process is alive: its rows are its own to write.
                Err(fs::TryLockError::WouldBlock) => continue,
                Err(fs::TryLockError::Error(e)) => return Err(failed(e)),
            }
            let lines = BufReader::new(&file)
                .lines()
                .collect::<Result<Vec<_>, _>>()
                .map_err(failed)?;
            replayed += lines.len();
            replay(lines)?;
            fs::remove_file(&path).map_err(failed)?;
        }
        let segments = Segments {
            dir: dir.to_path_buf(),
            current: Segment::create(dir).map_err(failed)?,
            sent: 0,
            committed: 0,
            retiring: None,
        };
        Ok((
            Journal {
                segments: Mutex::new(segments),
            },
            replayed,
        ))
    }

    /// Appends `line` (one row, without its newline), then runs `queue`
    /// under the same lock, so that the writer gets rows in journal order
    /// and its count of committed rows says which segments are done.
    pub(super) fn append<T>(&self, line: &[u8], queue: impl FnOnce() -> T) -> std::io::Result<T> {
        let mut whole = Vec::with_capacity(line.len() + 1);
        whole.extend_from_slice(line);
        whole.push(b'\n');
        let mut s = self.segments.lock().expect("journal lock");
        if s.current.bytes >= SEGMENT_BYTES && s.retiring.is_none() {
            // A segment that cannot be made leaves the current one growing.
            match Segment::create(&s.dir) {
                Ok(next) => {
                    let full = std::mem::replace(&mut s.current, next);
                    s.retiring = Some((full, s.sent));
                }
                Err(e) => tracing::warn!(error = %e, "audit journal: no new segment; the current one grows"),
            }
        }
        s.current.append(&whole)?;
        s.sent += 1;
        Ok(queue())
    }

    /// The writer committed `rows` more journaled rows: a retired segment
    /// whose rows are all in the store goes.
    pub(super) fn committed(&self, rows: u64) {
        let mut s = self.segments.lock().expect("journal lock");
        s.committed += rows;
        if s.retiring.as_ref().is_some_and(|(_, until)| s.committed >= *until)
            && let Some((full, _)) = s.retiring.take()
        {
            remove(&full.path);
        }
    }

    /// Rows appended and not yet committed.
    pub(super) fn backlog(&self) -> u64 {
        let s = self.segments.lock().expect("journal lock");
        s.sent - s.committed
    }

    /// The writer stopped: with every row committed, nothing is left to
    /// replay; otherwise the segments stay for the next start.
    pub(super) fn finished(&self) {
        let s = self.segments.lock().expect("journal lock");
        if s.committed == s.sent {
            remove(&s.current.path);
            if let Some((full, _)) = &s.retiring {
                remove(&full.path);
            }
        }
    }
}

/// Every line of every segment in `dir`, held by a live gateway or not: an
/// operator's view of rows that may not be in the store yet. A segment
/// deleted meanwhile is skipped, and so, by its reader, is a line still
/// being written.
pub(super) fn lines(dir: &Path) -> std::io::Result<Vec<String>> {
    let paths = match segment_paths(dir) {
        Ok(paths) => paths,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut lines = Vec::new();
    for path in paths {
        match File::open(&path) {
            Ok(file) => lines.extend(BufReader::new(file).lines().collect::<Result<Vec<_>, _>>()?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(lines)
}

/// The segment files in `dir`.
fn segment_paths(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut paths = Vec::new();
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "jsonl") {
            paths.push(path);
        }
    }
    Ok(paths)
}

fn remove(path: &Path) {
    if let Err(e) = fs::remove_file(path) {
        // Replayed at the next start, it changes nothing: rows are written once per request id.
        tracing::warn!(error = %e, "audit journal: a committed segment could not be deleted");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segments(dir: &Path) -> Vec<PathBuf> {
        let mut found: Vec<_> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        found.sort();
        found
    }

    fn nothing_to_replay(lines: Vec<String>) -> Result<(), Error> {
        panic!("nothing to replay, got {lines:?}")
    }

    #[test]
    fn the_folder_sits_beside_the_database() {
        assert_eq!(
            folder_of(Path::new("/var/lib/gw/mcp-gateway.db")),
            Path::new("/var/lib/gw/mcp-gateway.db.audit-journal")
        );
    }

    #[test]
    fn a_line_is_in_the_segment_before_it_is_queued() {
        let dir = tempfile::tempdir().unwrap();
        let (journal, replayed) = Journal::open(dir.path(), nothing_to_replay).unwrap();
        assert_eq!(replayed, 0);
        let [segment] = &segments(dir.path())[..] else {
            panic!("one segment")
        };
        let seen = journal
            .append(b"{\"a\":1}", || fs::read_to_string(segment).unwrap())
            .unwrap();
        assert_eq!(seen, "{\"a\":1}\n");
    }

    #[test]
    fn a_line_the_disk_refuses_is_not_queued_and_leaves_no_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let (journal, _) = Journal::open(dir.path(), nothing_to_replay).unwrap();
        // A disk that is full: /dev/full refuses every write.
        journal.segments.lock().unwrap().current.file = File::options().append(true).open("/dev/full").unwrap();
        let mut queued = false;
        let refused = journal.append(b"{}", || queued = true).unwrap_err();
        assert_eq!(refused.raw_os_error(), Some(28), "ENOSPC: {refused}");
        assert!(!queued);
        assert_eq!(journal.segments.lock().unwrap().sent, 0);
    }

    #[test]
    fn a_dead_processs_segment_is_replayed_and_deleted_and_a_live_ones_is_left() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("audit-1-1.jsonl"), "one\ntwo\n").unwrap();
        fs::write(dir.path().join("notes.txt"), "not a segment").unwrap();
        let live = Segment::create(dir.path()).unwrap();
        fs::write(&live.path, "live\n").unwrap();
        let mut replayed = Vec::new();
        let (_journal, count) = Journal::open(dir.path(), |lines| {
            replayed.extend(lines);
            Ok(())
        })
        .unwrap();
        assert_eq!((count, replayed), (2, vec!["one".to_string(), "two".to_string()]));
        assert!(!dir.path().join("audit-1-1.jsonl").exists(), "a replayed segment goes");
        assert!(live.path.exists(), "a held segment is its process's");
        assert!(dir.path().join("notes.txt").exists());
    }

    #[test]
    fn a_segment_whose_replay_fails_stays_for_the_next_start() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("audit-1-1.jsonl"), "one\n").unwrap();
        let down = Journal::open(dir.path(), |_| Err(Error::Column("the store is down".into())));
        assert!(down.is_err());
        assert!(dir.path().join("audit-1-1.jsonl").exists());
    }

    #[test]
    fn a_full_segment_goes_once_its_rows_are_committed() {
        let dir = tempfile::tempdir().unwrap();
        let (journal, _) = Journal::open(dir.path(), nothing_to_replay).unwrap();
        journal.append(b"a", || ()).unwrap();
        journal.segments.lock().unwrap().current.bytes = SEGMENT_BYTES;
        journal.append(b"b", || ()).unwrap();
        assert_eq!(segments(dir.path()).len(), 2, "b starts a new segment");
        journal.committed(0);
        assert_eq!(segments(dir.path()).len(), 2, "a is not committed yet");
        assert_eq!(journal.backlog(), 2);
        journal.committed(1);
        assert_eq!(segments(dir.path()).len(), 1, "a's segment goes once a is committed");
        journal.finished();
        assert_eq!(
            segments(dir.path()).len(),
            1,
            "b is not committed: its segment stays for the next start"
        );
        journal.committed(1);
        journal.finished();
        assert!(
            segments(dir.path()).is_empty(),
            "every row committed: nothing to replay"
        );
    }
}
