//! Tool embeddings on disk, keyed by model and text, so a restart or a
//! reload embeds only what changed. A SQLite file of its own: it is a cache,
//! safe to delete, and never mixed with the store's projects and tokens.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, params};

use super::{Error, Key};

/// How often opening the cache is tried when SQLite says "busy" (20 ms apart).
const OPEN_TRIES: u32 = 100;

/// The cache file.
pub(super) struct Cache {
    conn: Mutex<Connection>,
    path: String,
}

impl Cache {
    /// Opens (or creates) the cache at `path`.
    pub(super) fn open(path: &Path) -> Result<Self, Error> {
        let shown = path.display().to_string();
        let fail = |e: &dyn std::fmt::Display| Error::Cache {
            path: shown.clone(),
            reason: e.to_string(),
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| fail(&e))?;
        }
        let conn = Connection::open(path).map_err(|e| fail(&e))?;
        // First: switching to WAL takes a lock, and two replicas sharing a
        // folder open the cache at the same moment (the second one failed
        // at start with "database is locked").
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(|e| fail(&e))?;
        // SQLite answers "busy" at once, without waiting, where waiting could
        // deadlock (openers upgrading their locks together): try again.
        let mut tries = 0;
        while let Err(e) = conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             CREATE TABLE IF NOT EXISTS embeddings (
                 key    BLOB PRIMARY KEY,  -- SHA-256 of model fingerprint and text
                 vector BLOB NOT NULL      -- little-endian f32s
             ) WITHOUT ROWID;",
        ) {
            let busy = matches!(
                e.sqlite_error_code(),
                Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
            );
            if !busy || tries == OPEN_TRIES {
                return Err(fail(&e));
            }
            tries += 1;
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Ok(Self {
            conn: Mutex::new(conn),
            path: shown,
        })
    }

    fn fail(&self, e: rusqlite::Error) -> Error {
        Error::Cache {
            path: self.path.clone(),
            reason: e.to_string(),
        }
    }

    /// The cached vectors of `keys`, `None` where missing (or of another length than `dim`).
    pub(super) fn get(&self, keys: &[Key], dim: usize) -> Result<Vec<Option<Vec<f32>>>, Error> {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let mut stmt = conn
            .prepare_cached("SELECT vector FROM embeddings WHERE key = ?1")
            .map_err(|e| self.fail(e))?;
        keys.iter()
            .map(|key| {
                let bytes: Option<Vec<u8>> = match stmt.query_row([&key[..]], |r| r.get(0)) {
                    Ok(b) => Some(b),
                    Err(rusqlite::Error::QueryReturnedNoRows) => None,
                    Err(e) => return Err(self.fail(e)),
                };
                Ok(bytes.filter(|b| b.len() == dim * 4).map(|b| decode(&b)))
            })
            .collect()
    }

    /// Stores `vectors` under `keys`, in one transaction.
    pub(super) fn put(&self, keys: &[Key], vectors: &[Vec<f32>]) -> Result<(), Error> {
        let mut conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let tx = conn.transaction().map_err(|e| self.fail(e))?;
        {
            let mut stmt = tx
                .prepare_cached("INSERT OR REPLACE INTO embeddings (key, vector) VALUES (?1, ?2)")
                .map_err(|e| self.fail(e))?;
            for (key, vector) in keys.iter().zip(vectors) {
                stmt.execute(params![&key[..], encode(vector)])
                    .map_err(|e| self.fail(e))?;
            }
        }
        tx.commit().map_err(|e| self.fail(e))
    }
}

fn encode(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn decode(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Replicas sharing a folder open one cache file at the same moment.
    #[test]
    fn several_openers_at_once_all_succeed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("emb.db");
        let start = std::sync::Barrier::new(8);
        std::thread::scope(|s| {
            let openers: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        start.wait();
                        Cache::open(&path).map(|_| ())
                    })
                })
                .collect();
            for opener in openers {
                opener.join().unwrap().unwrap();
            }
        });
    }

    #[test]
    fn vectors_round_trip_and_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/emb.db");
        let keys = [[1u8; 32], [2u8; 32]];
        {
            let cache = Cache::open(&path).unwrap();
            assert_eq!(cache.get(&keys, 2).unwrap(), vec![None, None]);
            cache.put(&keys[..1], &[vec![0.5, -1.25]]).unwrap();
        }
        let cache = Cache::open(&path).unwrap();
        assert_eq!(cache.get(&keys, 2).unwrap(), vec![Some(vec![0.5, -1.25]), None]);
        // A vector of another model's size is a miss, not a wrong answer.
        assert_eq!(cache.get(&keys, 3).unwrap(), vec![None, None]);
    }
}
