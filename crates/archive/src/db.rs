//! The archive's SQLite file: documents (with what incremental indexing
//! compares), their raw links, and the citations resolved from them.

use std::path::Path;

use rusqlite::{Connection, OpenFlags, params};
use serde::Serialize;

/// Moves whenever the schema, or what parsing reads from a file, changes:
/// a database of another version is read again from the files. (2: Markdown
/// indexed as it reads, navigation lines left out.)
const SCHEMA_VERSION: i64 = 2;
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS documents (
    id         TEXT PRIMARY KEY,
    path       TEXT NOT NULL UNIQUE,
    title      TEXT NOT NULL,
    source_url TEXT,
    date       TEXT,
    size       INTEGER NOT NULL,
    mtime_ns   INTEGER NOT NULL,
    hash       TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS links (
    source_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    url       TEXT NOT NULL,
    context   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS links_source ON links(source_id);
CREATE TABLE IF NOT EXISTS citations (
    source_id  TEXT NOT NULL,
    target_id  TEXT,
    target_url TEXT NOT NULL,
    context    TEXT NOT NULL,
    confidence REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS citations_source ON citations(source_id);
CREATE INDEX IF NOT EXISTS citations_target ON citations(target_id);
";

/// Opens (and creates, for the indexer) the database.
pub(super) fn open(path: &Path, write: bool) -> Result<Connection, rusqlite::Error> {
    let conn = if write {
        Connection::open(path)?
    } else {
        Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)?
    };
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    if write {
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "foreign_keys", true)?;
        conn.execute_batch(SCHEMA)?;
        // Only when it differs: setting it rewrites the file, and an indexer
        // run that finds nothing changed writes nothing.
        let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if version != SCHEMA_VERSION {
            // Every file then differs from what is known of it: parsed again.
            conn.execute("UPDATE documents SET size = -1, hash = ''", [])?;
            conn.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        }
    }
    Ok(conn)
}

/// What the indexer knows of a document from the last run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Known {
    /// Its id.
    pub id: String,
    /// Bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i64,
    /// SHA-256 of the content.
    pub hash: String,
}

/// Every indexed document by path.
pub(super) fn known(conn: &Connection) -> Result<std::collections::HashMap<String, Known>, rusqlite::Error> {
    let mut stmt = conn.prepare("SELECT path, id, size, mtime_ns, hash FROM documents")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            Known {
                id: r.get(1)?,
                size: r.get::<_, i64>(2)? as u64,
                mtime_ns: r.get(3)?,
                hash: r.get(4)?,
            },
        ))
    })?;
    rows.collect()
}

/// One citation, as the tool reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Citation {
    /// The citing document.
    pub source_id: String,
    /// The cited document, when the link resolves to one.
    pub target_id: Option<String>,
    /// The link as written.
    pub target_url: String,
    /// The sentence around it.
    pub context: String,
    /// How sure the resolution is (1.0 for an exact path or URL).
    pub confidence: f64,
}

fn citations_where(conn: &Connection, column: &str, id: &str) -> Result<Vec<Citation>, rusqlite::Error> {
    let sql = format!(
        "SELECT source_id, target_id, target_url, context, confidence FROM citations WHERE {column} = ?1 ORDER BY rowid"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params![id], |r| {
        Ok(Citation {
            source_id: r.get(0)?,
            target_id: r.get(1)?,
            target_url: r.get(2)?,
            context: r.get(3)?,
            confidence: r.get(4)?,
        })
    })?;
    rows.collect()
}

/// What `id` cites.
pub(super) fn citing(conn: &Connection, id: &str) -> Result<Vec<Citation>, rusqlite::Error> {
    citations_where(conn, "source_id", id)
}

/// What cites `id`.
pub(super) fn cited_by(conn: &Connection, id: &str) -> Result<Vec<Citation>, rusqlite::Error> {
    citations_where(conn, "target_id", id)
}

/// A document's title, for graph nodes outside the results.
pub(super) fn title(conn: &Connection, id: &str) -> Result<Option<String>, rusqlite::Error> {
    let mut stmt = conn.prepare_cached("SELECT title FROM documents WHERE id = ?1")?;
    let mut rows = stmt.query(params![id])?;
    rows.next()?.map(|r| r.get(0)).transpose()
}
