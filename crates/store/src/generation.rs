//! The access generation: one counter that triggers move forward on every
//! change to projects, token revocations, grants and credentials
//! (`migrations/0007_access_generation.sql`). Whoever caches what the store
//! answered about access reads this number once per request and drops the
//! cache when it moved, so a change made by any process sharing the store
//! applies from the next request.
//!
//! On SQLite the number is read again only when something committed since
//! it was last read, as the WAL-index header tells ([`Commits`]): a read
//! transaction (two file locks and a statement) was about a twentieth of a
//! call's CPU at one session.

use std::fs::File;
use std::os::unix::fs::FileExt as _;
use std::path::Path;
use std::sync::Mutex;

use super::{Error, Store};

impl Store {
    /// The current access generation.
    pub fn access_generation(&self) -> Result<i64, Error> {
        let Some(commits) = &self.commits else {
            return self.read_access_generation();
        };
        // Marked before the read: a commit between the two moves the mark
        // away from what is kept, and the next request reads again.
        let mark = commits.mark();
        if let Some(mark) = mark
            && let Some((seen, n)) = *commits.read.lock().expect("generation lock")
            && seen == mark
        {
            return Ok(n);
        }
        let n = self.read_access_generation()?;
        if let Some(mark) = mark {
            *commits.read.lock().expect("generation lock") = Some((mark, n));
        }
        Ok(n)
    }

    fn read_access_generation(&self) -> Result<i64, Error> {
        let n = self.with(|c| c.row("SELECT n FROM access_generation WHERE id = 1", &[], |r| r.get(0)))?;
        // The row is created by the migration; a store without it has been
        // edited by hand, and nothing cached from it can be trusted.
        n.ok_or_else(|| Error::Open {
            path: self.shown(),
            reason: "the access_generation row is missing".into(),
        })
    }
}

/// Whether anything committed to a SQLite store in WAL mode since a
/// moment, without a transaction. Every commit, by any connection of any
/// process, rewrites the WAL-index header at the start of the `-shm` file
/// (<https://www.sqlite.org/walformat.html>, "The WAL-Index Header"): among
/// its 48 bytes a counter of transactions, the last frame and checksums.
/// The file lives while any connection is open, and the store keeps its
/// own open for its lifetime.
#[derive(Debug)]
pub(super) struct Commits {
    shm: File,
    /// The header when the generation was last read, and what it was.
    read: Mutex<Option<(Mark, i64)>>,
}

/// One state of the WAL-index header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mark([u8; HEADER_BYTES]);

const HEADER_BYTES: usize = 48;

impl Commits {
    /// For the store at `db`; none when it has no WAL index (not in WAL mode).
    pub(super) fn of(db: &Path) -> Option<Commits> {
        let mut shm = db.as_os_str().to_owned();
        shm.push("-shm");
        let shm = File::open(shm).ok()?;
        Some(Commits {
            shm,
            read: Mutex::new(None),
        })
    }

    /// The header now; none while a commit is writing it (SQLite writes
    /// it twice, the second copy first, and readers compare the two).
    fn mark(&self) -> Option<Mark> {
        let mut both = [0u8; 2 * HEADER_BYTES];
        self.shm.read_exact_at(&mut both, 0).ok()?;
        let (first, second) = both.split_at(HEADER_BYTES);
        (first == second).then(|| Mark(first.try_into().expect("48 bytes")))
    }
}

#[cfg(test)]
mod tests {
    use crate::Store;
    use crate::access::Search;
    use credentials::{CredentialKind, CredentialRows};

    #[test]
    fn every_access_change_moves_the_generation_and_recording_use_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gw.db");
        let s = Store::open(&path).unwrap();
        let mut last = s.access_generation().unwrap();
        let mut moved = |what: &str| {
            let now = s.access_generation().unwrap();
            assert!(now > last, "{what} did not move the generation");
            last = now;
        };
        s.create_project("p", Some(Search::Bm25)).unwrap();
        moved("creating a project");
        let (token, _) = s.issue_token("p", "ci").unwrap();
        s.set_search("p", Some(Search::Hybrid)).unwrap();
        moved("changing the search mode");
        s.set_permission("p", "fs", None, true).unwrap();
        moved("a grant");
        s.set_permission("p", "fs", Some("rm"), false).unwrap();
        moved("a tool override");
        s.deny_server("p", "fs").unwrap();
        moved("a deny");
        s.put_credential(1, "fs", CredentialKind::Env, "KEY", "k1", b"sealed", true)
            .unwrap();
        moved("a credential");
        s.remove_credential(1, "fs", CredentialKind::Env, Some("KEY")).unwrap();
        moved("removing a credential");

        // Another process recording the token's use changes nothing.
        let other = rusqlite::Connection::open(&path).unwrap();
        other
            .execute("UPDATE tokens SET last_used_at = 'now' WHERE id = ?1", [token.id])
            .unwrap();
        assert_eq!(s.access_generation().unwrap(), last);
        // Its revocation does, seen through this process's connection.
        other
            .execute("UPDATE tokens SET revoked_at = 'now' WHERE id = ?1", [token.id])
            .unwrap();
        assert!(s.access_generation().unwrap() > last);
    }

    #[test]
    fn the_wal_index_mark_holds_until_a_commit_by_anyone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gw.db");
        let s = Store::open(&path).unwrap();
        let commits = super::Commits::of(&path).expect("a store in WAL mode has a WAL index");
        let before = commits.mark().expect("no commit is under way");
        s.access_generation().unwrap();
        assert_eq!(commits.mark(), Some(before), "a read commits nothing");
        let other = rusqlite::Connection::open(&path).unwrap();
        other
            .execute_batch("CREATE TABLE scratch (x); INSERT INTO scratch VALUES (1)")
            .unwrap();
        assert_ne!(commits.mark(), Some(before), "another connection's commit moves it");
    }

    #[test]
    fn a_change_by_another_process_applies_at_the_next_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gw.db");
        // Two stores on one file, as the gateway and the CLI are.
        let (gateway, cli) = (Store::open(&path).unwrap(), Store::open(&path).unwrap());
        gateway.create_project("p", Some(Search::Bm25)).unwrap();
        let (token, secret) = gateway.issue_token("p", "ci").unwrap();
        let seen = gateway.access_generation().unwrap();
        assert_eq!(gateway.access_generation().unwrap(), seen, "nothing changed");
        assert!(cli.revoke_token(token.id).unwrap());
        assert!(
            gateway.access_generation().unwrap() > seen,
            "a revocation is seen at once"
        );
        assert!(gateway.authenticate(&secret).unwrap().is_none());
        let seen = gateway.access_generation().unwrap();
        cli.set_permission("p", "fs", None, true).unwrap();
        assert!(gateway.access_generation().unwrap() > seen, "so is a grant");
    }

    /// Two replicas on one PostgreSQL database: a revocation or a grant on
    /// one moves the generation the other reads at its next request.
    #[test]
    #[ignore = "full tier: needs PostgreSQL (scripts/setup)"]
    fn a_change_on_one_replica_is_seen_by_the_other() {
        let (_dir, at) = crate::test_database();
        let (a, b) = (Store::open_at(&at).unwrap(), Store::open_at(&at).unwrap());
        a.create_project("p", Some(Search::Bm25)).unwrap();
        let (token, secret) = a.issue_token("p", "ci").unwrap();
        assert!(b.authenticate(&secret).unwrap().is_some());
        let seen = b.access_generation().unwrap();
        assert!(a.revoke_token(token.id).unwrap());
        assert!(b.access_generation().unwrap() > seen);
        assert!(b.authenticate(&secret).unwrap().is_none());
        let seen = b.access_generation().unwrap();
        a.set_permission("p", "fs", None, true).unwrap();
        assert!(b.access_generation().unwrap() > seen);
    }
}
