//! Schema migrations, one list per engine, numbered alike: the SQLite
//! ones in `migrations/`, the PostgreSQL ones in `migrations/postgres/`.
//! Each runs once, in order. SQLite tracks the number applied in `PRAGMA
//! user_version` (as cargo does for its own SQLite files) and runs them in
//! one exclusive transaction, with foreign keys off (SQLite's recipe for
//! rebuilding a table) and checked before commit. PostgreSQL tracks it in
//! `schema_migrations` and runs them in one transaction under an advisory
//! lock, so replicas starting together migrate once.
//! Never edit or remove a shipped entry; append the next one, to both lists.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use super::postgres::Postgres;
use super::sql::Sql;
use super::{Error, sqlite::explain};

/// Every SQLite migration, in order. The store's schema version is the number applied.
const MIGRATIONS: &[&str] = &[
    include_str!("../../../migrations/0001_init.sql"),
    include_str!("../../../migrations/0002_hybrid_search.sql"),
    include_str!("../../../migrations/0003_server_tools.sql"),
    include_str!("../../../migrations/0004_server_protocol.sql"),
    include_str!("../../../migrations/0005_audit_subject.sql"),
    include_str!("../../../migrations/0006_credentials.sql"),
    include_str!("../../../migrations/0007_access_generation.sql"),
    include_str!("../../../migrations/0008_search_learning.sql"),
    include_str!("../../../migrations/0009_tool_pins.sql"),
    include_str!("../../../migrations/0010_tool_exposure.sql"),
    include_str!("../../../migrations/0011_console.sql"),
    include_str!("../../../migrations/0012_rate_budgets.sql"),
    include_str!("../../../migrations/0013_audit_request_once.sql"),
    include_str!("../../../migrations/0014_query_meanings.sql"),
    include_str!("../../../migrations/0015_listed_apps.sql"),
    include_str!("../../../migrations/0016_project_search.sql"),
    include_str!("../../../migrations/0017_tool_limits.sql"),
    include_str!("../../../migrations/0018_savings.sql"),
    include_str!("../../../migrations/0019_forget_query_texts.sql"),
];

/// The same migrations for PostgreSQL.
const POSTGRES: &[&str] = &[
    include_str!("../../../migrations/postgres/0001_init.sql"),
    include_str!("../../../migrations/postgres/0002_hybrid_search.sql"),
    include_str!("../../../migrations/postgres/0003_server_tools.sql"),
    include_str!("../../../migrations/postgres/0004_server_protocol.sql"),
    include_str!("../../../migrations/postgres/0005_audit_subject.sql"),
    include_str!("../../../migrations/postgres/0006_credentials.sql"),
    include_str!("../../../migrations/postgres/0007_access_generation.sql"),
    include_str!("../../../migrations/postgres/0008_search_learning.sql"),
    include_str!("../../../migrations/postgres/0009_tool_pins.sql"),
    include_str!("../../../migrations/postgres/0010_tool_exposure.sql"),
    include_str!("../../../migrations/postgres/0011_console.sql"),
    include_str!("../../../migrations/postgres/0012_rate_budgets.sql"),
    include_str!("../../../migrations/postgres/0013_audit_request_once.sql"),
    include_str!("../../../migrations/postgres/0014_query_meanings.sql"),
    include_str!("../../../migrations/postgres/0015_listed_apps.sql"),
    include_str!("../../../migrations/postgres/0016_project_search.sql"),
    include_str!("../../../migrations/postgres/0017_tool_limits.sql"),
    include_str!("../../../migrations/postgres/0018_savings.sql"),
    include_str!("../../../migrations/postgres/0019_forget_query_texts.sql"),
];

/// The advisory lock replicas take to migrate one at a time ("mcp-gateway" in ASCII, shortened).
const MIGRATION_LOCK: i64 = 0x6d63_702d_6777;

/// Brings a PostgreSQL database up to date; refuses one written by a newer binary.
pub(super) fn postgres(pg: &Postgres) -> Result<(), Error> {
    let shown = pg.shown().to_string();
    let known = POSTGRES.len() as i64;
    pg.transaction(|tx| {
        let sql = tx.sql();
        let sql: &dyn Sql = &sql;
        sql.execute("SELECT pg_advisory_xact_lock(?1)", super::sql::args![MIGRATION_LOCK])?;
        tx.batch(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, applied_at TEXT NOT NULL)",
        )?;
        let version: i64 = sql.one("SELECT coalesce(max(version), 0) FROM schema_migrations", &[], |r| {
            r.get(0)
        })?;
        refuse_newer(&shown, version, known)?;
        for (i, migration) in POSTGRES.iter().enumerate().skip(version as usize) {
            tx.batch(migration)?;
            sql.execute(
                "INSERT INTO schema_migrations (version, applied_at) VALUES (?1, ?2)",
                super::sql::args![i as i64 + 1, super::now()],
            )?;
            tracing::debug!(store = %shown, version = i + 1, "store migration applied");
        }
        migrated(&shown, version, known);
        Ok(())
    })
}

/// One line for a store brought from schema `from` to `to` (none when it was current).
fn migrated(shown: &str, from: i64, to: i64) {
    match from {
        _ if from == to => {}
        0 => tracing::info!(store = %shown, schema = to, "store created"),
        _ => tracing::info!(store = %shown, from, to, "store migrated"),
    }
}

/// A store at schema `version` when this binary knows `known` migrations:
/// a newer gateway wrote it, and this one must not touch it.
fn refuse_newer(shown: &str, version: i64, known: i64) -> Result<(), Error> {
    if version > known {
        return Err(Error::TooNew {
            path: shown.to_string(),
            found: version,
            known,
        });
    }
    Ok(())
}

/// Brings a SQLite database up to date; refuses one written by a newer binary.
pub(super) fn sqlite(conn: &mut Connection, path: &Path) -> Result<(), Error> {
    let shown = path.display().to_string();
    // Outside the transaction: the pragma is a no-op inside one.
    conn.pragma_update(None, "foreign_keys", false)
        .map_err(open_err(&shown))?;
    let result = migrate(conn, &shown);
    conn.pragma_update(None, "foreign_keys", true)
        .map_err(open_err(&shown))?;
    result
}

/// Maps a SQLite failure on the database at `shown` to [`Error::Open`].
fn open_err(shown: &str) -> impl Fn(rusqlite::Error) -> Error + Copy + '_ {
    move |e| Error::Open {
        path: shown.to_string(),
        reason: explain(&e),
    }
}

fn migrate(conn: &mut Connection, shown: &str) -> Result<(), Error> {
    let open_err = open_err(shown);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Exclusive)
        .map_err(open_err)?;
    let version: i64 = tx
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(open_err)?;
    refuse_newer(shown, version, MIGRATIONS.len() as i64)?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        tx.execute_batch(sql).map_err(open_err)?;
        tx.pragma_update(None, "user_version", i as i64 + 1).map_err(open_err)?;
        tracing::debug!(store = %shown, version = i + 1, "store migration applied");
    }
    migrated(shown, version, MIGRATIONS.len() as i64);
    let dangling: i64 = tx
        .query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| r.get(0))
        .map_err(open_err)?;
    if dangling > 0 {
        return Err(Error::Open {
            path: shown.to_string(),
            reason: format!("migration left {dangling} rows pointing nowhere; nothing was changed"),
        });
    }
    tx.commit().map_err(open_err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrate_from_empty_and_twice() {
        let mut conn = Connection::open_in_memory().unwrap();
        sqlite(&mut conn, Path::new(":memory:")).unwrap();
        sqlite(&mut conn, Path::new(":memory:")).unwrap();
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert_eq!(version, MIGRATIONS.len() as i64);
        let tables: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table'", [], |r| {
                r.get(0)
            })
            .unwrap();
        // 21 of ours, and sqlite_sequence (audit_log's AUTOINCREMENT).
        assert_eq!(tables, 22);
    }

    /// Rebuilding `projects` for 'hybrid' keeps every token and grant
    /// pointing at its project (a cascade would have deleted them).
    #[test]
    fn hybrid_migration_keeps_tokens_and_grants() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "foreign_keys", true).unwrap();
        conn.execute_batch(MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute_batch(
            "INSERT INTO projects (id, name, optimization) VALUES (7, 'p', 'bm25');
             INSERT INTO tokens (project_id, secret_hash) VALUES (7, x'00');
             INSERT INTO tool_permissions (project_id, server, enabled) VALUES (7, 'fs', 1);",
        )
        .unwrap();
        sqlite(&mut conn, Path::new(":memory:")).unwrap();
        let count = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap();
        assert_eq!(count("SELECT count(*) FROM tokens WHERE project_id = 7"), 1);
        assert_eq!(count("SELECT count(*) FROM tool_permissions WHERE project_id = 7"), 1);
        conn.execute("UPDATE projects SET search = 'hybrid' WHERE id = 7", [])
            .unwrap();
        assert!(
            conn.execute("UPDATE projects SET search = 'fast' WHERE id = 7", [])
                .is_err()
        );
        // Foreign keys are enforced again: deleting the project cascades.
        conn.execute("DELETE FROM projects WHERE id = 7", []).unwrap();
        assert_eq!(count("SELECT count(*) FROM tokens"), 0);
    }

    #[test]
    fn both_engines_have_every_migration() {
        assert_eq!(
            MIGRATIONS.len(),
            POSTGRES.len(),
            "migrations/ and migrations/postgres/ are numbered alike"
        );
    }

    /// Replicas starting together migrate once; a database from a newer
    /// gateway is refused.
    #[test]
    #[ignore = "full tier: needs PostgreSQL (scripts/setup)"]
    fn postgres_migrates_once_under_the_lock_and_refuses_a_newer_database() {
        let cluster = crate::test_cluster::Cluster::shared();
        let url = cluster.database();
        let replicas: Vec<_> = (0..4)
            .map(|_| {
                let url = url.clone();
                std::thread::spawn(move || postgres(&Postgres::connect(&url).unwrap()))
            })
            .collect();
        for replica in replicas {
            replica.join().unwrap().unwrap();
        }
        let db = url.rsplit('/').next().unwrap();
        let n = POSTGRES.len();
        assert_eq!(
            cluster.psql(db, "SELECT count(*) || '|' || max(version) FROM schema_migrations"),
            format!("{n}|{n}")
        );
        cluster.psql(db, "INSERT INTO schema_migrations VALUES (99, 'later')");
        let err = postgres(&Postgres::connect(&url).unwrap()).unwrap_err();
        assert!(matches!(err, Error::TooNew { found: 99, .. }), "{err}");
        assert!(err.to_string().contains("upgrade mcp-gateway"), "{err}");
    }

    #[test]
    fn a_newer_database_is_refused() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
        let err = sqlite(&mut conn, Path::new("future.db")).unwrap_err();
        assert!(matches!(err, Error::TooNew { found: 99, .. }), "{err}");
        assert!(err.to_string().contains("upgrade mcp-gateway"), "{err}");
    }
}
