//! The embedded engine: one SQLite file in WAL mode. Statements are
//! prepared once per connection and kept (`prepare_cached`).

use std::path::Path;
use std::time::Duration;

use rusqlite::Connection;
use rusqlite::types::{ToSqlOutput, ValueRef};

use super::Error;
use super::sql::{Row, Sql, Value};

/// How long a connection waits for another writer's lock.
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Int(n) => ValueRef::Integer(*n),
            Value::Real(x) => ValueRef::Real(*x),
            Value::Text(s) => ValueRef::Text(s.as_bytes()),
            Value::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

fn row_of(r: &rusqlite::Row<'_>, columns: usize) -> rusqlite::Result<Row> {
    (0..columns)
        .map(|i| {
            Ok(match r.get_ref(i)? {
                ValueRef::Null => Value::Null,
                ValueRef::Integer(n) => Value::Int(n),
                ValueRef::Real(x) => Value::Real(x),
                ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                ValueRef::Blob(b) => Value::Blob(b.to_vec()),
            })
        })
        .collect::<rusqlite::Result<_>>()
        .map(Row)
}

impl Sql for Connection {
    fn query(&self, sql: &str, args: &[Value]) -> Result<Vec<Row>, Error> {
        let mut stmt = self.prepare_cached(sql)?;
        let columns = stmt.column_count();
        let rows = stmt.query_map(rusqlite::params_from_iter(args), |r| row_of(r, columns))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn execute(&self, sql: &str, args: &[Value]) -> Result<usize, Error> {
        Ok(self.prepare_cached(sql)?.execute(rusqlite::params_from_iter(args))?)
    }

    fn round_trips(&self) -> bool {
        false
    }
}

/// Opens a connection to the file at `path` (creating its folder), in WAL mode.
pub(super) fn open(path: &Path) -> Result<Connection, Error> {
    let shown = path.display().to_string();
    let open_err = |e: rusqlite::Error| Error::Open {
        path: shown.clone(),
        reason: explain(&e),
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::Open {
            path: shown.clone(),
            reason: e.to_string(),
        })?;
    }
    let conn = Connection::open(path).map_err(open_err)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;
    // journal_mode answers with a row, so it is a query, not an execute.
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .map_err(open_err)?;
    if mode != "wal" {
        tracing::warn!(path = %shown, mode, "the store is not in WAL mode");
    }
    conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;")
        .map_err(open_err)?;
    // SQLite built with STAT4 (as bundled) marks a statement whose bound value
    // could change its plan, and prepares it again on every new binding: for
    // the per-request reads that was most of their cost. Our queries are
    // point reads whose plan never depends on the value.
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
        .map_err(open_err)?;
    Ok(conn)
}

/// Turns SQLite's terse codes into a sentence for the person at the terminal.
pub(super) fn explain(e: &rusqlite::Error) -> String {
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) => {
            "the file is not a SQLite database (corrupt, or some other file)".into()
        }
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
            format!(
                "the database is locked by another process (waited {} s)",
                BUSY_TIMEOUT.as_secs()
            )
        }
        Some(rusqlite::ErrorCode::CannotOpen) => "cannot open the file (missing folder or no permission)".into(),
        Some(rusqlite::ErrorCode::ReadOnly) => "the file is read-only".into(),
        Some(rusqlite::ErrorCode::DiskFull) => "the disk is full".into(),
        _ => e.to_string(),
    }
}
