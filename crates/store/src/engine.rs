//! Which engine holds the store, behind one interface: SQLite (one file,
//! the default) or PostgreSQL (shared by replicas). The store's modules see
//! only [`Sql`].

use std::path::PathBuf;
use std::sync::Mutex;

use rusqlite::{Connection, TransactionBehavior};

use super::postgres::Postgres;
use super::sql::Sql;
use super::{Error, migrate, sqlite};
use config::StoreLocation;

/// An open store's engine.
#[derive(Debug)]
pub(super) enum Engine {
    /// One SQLite file; one connection, taken in turn.
    Sqlite {
        /// The file.
        path: PathBuf,
        /// The connection.
        conn: Mutex<Connection>,
    },
    /// A PostgreSQL database, through a pool.
    Postgres(Postgres),
}

impl Engine {
    /// Opens the store at `at` and brings its schema up to date.
    pub(super) fn open(at: &StoreLocation) -> Result<Self, Error> {
        match at {
            StoreLocation::File(path) => {
                let mut conn = sqlite::open(path)?;
                migrate::sqlite(&mut conn, path)?;
                Ok(Self::Sqlite {
                    path: path.clone(),
                    conn: Mutex::new(conn),
                })
            }
            StoreLocation::Postgres { url, .. } => {
                let pg = Postgres::connect(url)?;
                migrate::postgres(&pg)?;
                Ok(Self::Postgres(pg))
            }
        }
    }

    /// For the audit writer's engine: its commits never checkpoint the WAL
    /// (the checkpoint's fsync would land in a commit an answer waits for);
    /// a thread with a connection of its own checkpoints it every second
    /// instead, without blocking the writer (PASSIVE), until the returned
    /// sender drops. Its temporary data stays in memory: a batch's
    /// multi-row `INSERT` keeps a statement journal, which past 64 KiB
    /// went to a file made, written and dropped for every batch.
    /// PostgreSQL has nothing to do.
    pub(super) fn checkpoint_apart(&self) -> Result<Option<std::sync::mpsc::Sender<()>>, Error> {
        let Self::Sqlite { path, conn } = self else {
            return Ok(None);
        };
        let open_err = |e: rusqlite::Error| Error::Open {
            path: path.display().to_string(),
            reason: sqlite::explain(&e),
        };
        {
            let conn = conn.lock().expect("sqlite lock");
            conn.pragma_update(None, "wal_autocheckpoint", 0).map_err(open_err)?;
            conn.pragma_update(None, "temp_store", "MEMORY").map_err(open_err)?;
        }
        let checkpointer = sqlite::open(path)?;
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("wal-checkpoint".into())
            .spawn(move || {
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(std::time::Duration::from_secs(1))
                {
                    // A busy or full disk is the writer's to report; the next tick tries again.
                    let _ = checkpointer.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
                }
            })
            .map_err(|e| Error::Open {
                path: path.display().to_string(),
                reason: e.to_string(),
            })?;
        Ok(Some(stop))
    }

    /// The same store through a connection of its own (the writer thread's,
    /// long reads'), so they never wait behind requests' statements.
    pub(super) fn another(&self) -> Result<Self, Error> {
        match self {
            Self::Sqlite { path, .. } => Ok(Self::Sqlite {
                path: path.clone(),
                conn: Mutex::new(sqlite::open(path)?),
            }),
            // Each statement takes a connection of the pool anyway.
            Self::Postgres(pg) => Ok(Self::Postgres(pg.clone())),
        }
    }

    /// Where the store is, for messages (never a password).
    pub(super) fn shown(&self) -> String {
        match self {
            Self::Sqlite { path, .. } => path.display().to_string(),
            Self::Postgres(pg) => pg.shown().to_string(),
        }
    }

    /// Runs `f` on a connection.
    pub(super) fn with<T>(&self, f: impl FnOnce(&dyn Sql) -> Result<T, Error>) -> Result<T, Error> {
        match self {
            Self::Sqlite { conn, .. } => f(&*conn.lock().expect("store connection lock")),
            Self::Postgres(pg) => pg.with(f),
        }
    }

    /// Runs `f` in one transaction, committed when it returns `Ok`.
    pub(super) fn transaction<T>(&self, f: impl FnOnce(&dyn Sql) -> Result<T, Error>) -> Result<T, Error> {
        match self {
            // IMMEDIATE: take the write lock first, so two processes never
            // deadlock upgrading a read.
            Self::Sqlite { conn, .. } => in_sqlite_transaction(conn, TransactionBehavior::Immediate, f),
            Self::Postgres(pg) => pg.transaction(|tx| f(&tx.sql())),
        }
    }

    /// Runs `f`, which only reads, on one consistent snapshot of the store.
    pub(super) fn snapshot<T>(&self, f: impl FnOnce(&dyn Sql) -> Result<T, Error>) -> Result<T, Error> {
        match self {
            // DEFERRED: a read transaction, which writers do not wait for.
            Self::Sqlite { conn, .. } => in_sqlite_transaction(conn, TransactionBehavior::Deferred, f),
            Self::Postgres(pg) => pg.snapshot(|tx| f(&tx.sql())),
        }
    }
}

fn in_sqlite_transaction<T>(
    conn: &Mutex<Connection>,
    behavior: TransactionBehavior,
    f: impl FnOnce(&dyn Sql) -> Result<T, Error>,
) -> Result<T, Error> {
    let mut conn = conn.lock().expect("store connection lock");
    let tx = conn.transaction_with_behavior(behavior)?;
    let out = f(&*tx)?;
    tx.commit()?;
    Ok(out)
}
