//! Schema migrations, tracked by `PRAGMA user_version` (as cargo does for its
//! own SQLite files): each runs once, in order, inside one exclusive transaction.
//! Never edit or remove a shipped entry; append the next one.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use super::{Error, explain};

/// Every migration, in order. The store's schema version is the number applied.
const MIGRATIONS: &[&str] = &[include_str!("../../migrations/0001_init.sql")];

/// Brings the database up to date; refuses one written by a newer binary.
pub fn run(conn: &mut Connection, path: &Path) -> Result<(), Error> {
    let shown = path.display().to_string();
    let open_err = |e: rusqlite::Error| Error::Open {
        path: shown.clone(),
        reason: explain(&e),
    };
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Exclusive)
        .map_err(open_err)?;
    let version: i64 = tx
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(open_err)?;
    let known = MIGRATIONS.len() as i64;
    if version > known {
        return Err(Error::TooNew {
            path: shown.clone(),
            found: version,
            known,
        });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        tx.execute_batch(sql).map_err(open_err)?;
        tx.pragma_update(None, "user_version", i as i64 + 1).map_err(open_err)?;
        tracing::info!(path = %shown, version = i + 1, "store migrated");
    }
    tx.commit().map_err(open_err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrate_from_empty_and_twice() {
        let mut conn = Connection::open_in_memory().unwrap();
        run(&mut conn, Path::new(":memory:")).unwrap();
        run(&mut conn, Path::new(":memory:")).unwrap();
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert_eq!(version, MIGRATIONS.len() as i64);
        let tables: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(tables, 4);
    }

    #[test]
    fn a_newer_database_is_refused() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
        let err = run(&mut conn, Path::new("future.db")).unwrap_err();
        assert!(matches!(err, Error::TooNew { found: 99, .. }), "{err}");
        assert!(err.to_string().contains("upgrade mcp-gateway"), "{err}");
    }
}
