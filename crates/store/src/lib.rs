//! The store: projects, tokens, tool permissions, credentials and the
//! audit log ([`audit`]), in SQLite (one file, the default) or PostgreSQL
//! (shared by gateway replicas): one interface, two engines ([`engine`]),
//! one SQL for both ([`sql`]).
//!
//! Reads on the request path (token, project, grants, credentials) run
//! inline: in WAL mode a SQLite reader never waits for a writer, and a cached
//! point query is cheaper than the hop to tokio's blocking pool (see
//! `benches/checks.rs`). What they answer is cached by its users while the
//! access generation ([`generation`]) stays the same, so a request pays one
//! one-row read, on PostgreSQL too: a change made by any replica applies on
//! every replica from its next request. Writes on the request path (audit
//! rows, a token's last use) go to the writer thread ([`audit`]).

pub mod access;
mod admin;
mod audit;
mod credential_rows;
mod engine;
mod generation;
mod journal;
mod learned;
mod migrate;
mod pins;
mod postgres;
mod rates;
pub mod secrets;
mod sql;
mod sqlite;
mod usage;

pub use admin::{ADMIN_TOKEN_PREFIX, AdminAction, AdminTokenInfo};
pub use audit::{AuditRow, StrictAudit, Unwritten, audit_row};
pub use credential_rows::CredentialInfo;
pub use learned::Forgotten;
pub use pins::Review;
pub use usage::{Bucket, Usage, UsageRange, UsageRow};
pub use vocab::outcome::Outcome;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use sha2::Digest;
use tokio::sync::mpsc;

use crate::access::{Apps, Exposure, Permission, Project, Search};
use crate::secrets::constant_time_eq;
use audit::{AUDIT_QUEUE, Write, WriterHealth, write_behind};
use config::StoreLocation;
use engine::Engine;
use sql::{Row, Sql, args};

pub use config::DB_ENV;
/// Prefix of every token, so a leaked one is recognisable (e.g. by secret scanners).
pub(crate) const TOKEN_PREFIX: &str = "mgw_";

/// Why the store refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file or database could not be opened or is not a usable store.
    #[error("cannot open the store {path}: {reason}")]
    Open {
        /// The file, or the database URL without its password.
        path: String,
        /// Why, in words.
        reason: String,
    },
    /// The database was written by a newer mcp-gateway.
    #[error(
        "the store {path} has schema version {found}, newer than this mcp-gateway understands ({known}); upgrade mcp-gateway or point MCP_GATEWAY_DB at another store"
    )]
    TooNew {
        /// The file, or the database URL without its password.
        path: String,
        /// Its schema version (SQLite's `user_version`, PostgreSQL's migrations table).
        found: i64,
        /// The newest this binary knows.
        known: i64,
    },
    /// No live token by that id.
    #[error("no live token #{0}")]
    NoToken(i64),
    /// No project by that name or id.
    #[error("no project '{0}' (see `mcp-gateway project list`)")]
    NoProject(String),
    /// A project by that name exists.
    #[error("a project named '{0}' already exists")]
    ProjectExists(String),
    /// The database stopped answering (a PostgreSQL server down or restarting).
    #[error("the store {store} is unavailable: {reason}")]
    Unavailable {
        /// The database URL without its password.
        store: String,
        /// Why, in words.
        reason: String,
    },
    /// A column did not hold what the store expected (a database edited by hand).
    #[error("store: {0}")]
    Column(String),
    /// Any other SQLite failure.
    #[error("store: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// Any other PostgreSQL failure.
    #[error("store: {0}")]
    Postgres(String),
    /// The audit writer's latest batch did not commit (a full disk, a
    /// read-only file); its rows wait in memory and are retried.
    #[error("audit writes failing: {0}; the rows wait in memory and are retried until one commits")]
    AuditWrites(String),
    /// The audit journal's folder cannot be read or written.
    #[error("the audit journal {dir}: {reason}")]
    Journal { dir: String, reason: String },
}

impl From<tokio_postgres::Error> for Error {
    fn from(e: tokio_postgres::Error) -> Self {
        match e.as_db_error() {
            Some(db) => Self::Postgres(format!("{} ({})", db.message(), db.code().code())),
            None => Self::Postgres(e.to_string()),
        }
    }
}

/// A token's metadata (never its secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenInfo {
    /// Row id; part of the token text.
    pub id: i64,
    /// Its project.
    pub project_id: i64,
    /// A note for people.
    pub label: String,
    /// ISO 8601.
    pub created_at: String,
    /// ISO 8601, updated at most once a minute.
    pub last_used_at: Option<String>,
    /// ISO 8601 when revoked.
    pub revoked_at: Option<String>,
}

/// The store. Cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct Store {
    engine: Engine,
    key_home: PathBuf,
    writes: Mutex<Option<mpsc::Sender<Write>>>,
    writer: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Whether the writer's latest batch committed, for readiness.
    writer_health: WriterHealth,
    /// Whether callers wait for their audit rows' commits (the writer does not linger then).
    durable_audit: Arc<std::sync::atomic::AtomicBool>,
    /// Where strict audit journals rows on SQLite, once it is on.
    journal: Arc<std::sync::OnceLock<journal::Journal>>,
    /// The journal's folder, for a SQLite store.
    journal_dir: Option<PathBuf>,
    /// What tells a SQLite store's reader that nothing committed since.
    commits: Option<generation::Commits>,
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn sha256(text: &str) -> [u8; 32] {
    sha2::Sha256::digest(text.as_bytes()).into()
}

/// Whether a token last used at `last_used` should be stamped again: one
/// write a minute per token at most, as `last_used_at` is for people, not accounting.
fn use_is_stale(last_used: Option<&str>) -> bool {
    last_used.is_none_or(|t| {
        chrono::DateTime::parse_from_rfc3339(t)
            .map(|t| chrono::Utc::now().signed_duration_since(t) > chrono::Duration::minutes(1))
            .unwrap_or(true)
    })
}

/// Splits `mgw_<id>_<secret>`.
fn parse_token(token: &str) -> Option<(i64, &str)> {
    let (id, secret) = token.strip_prefix(TOKEN_PREFIX)?.split_once('_')?;
    Some((id.parse().ok()?, secret))
}

impl Store {
    /// Opens (creating if needed) the SQLite store at `path`, migrates it, and starts the audit writer.
    pub fn open(path: &Path) -> Result<Self, Error> {
        Self::open_at(&StoreLocation::File(path.to_path_buf()))
    }

    /// Opens the store at `at` (a SQLite file, or a PostgreSQL database),
    /// migrates it, and starts the audit writer.
    pub fn open_at(at: &StoreLocation) -> Result<Self, Error> {
        let engine = Engine::open(at)?;
        let writer_engine = engine.another()?;
        let (tx, rx) = mpsc::channel(AUDIT_QUEUE);
        let writer_health = WriterHealth::default();
        let health = writer_health.clone();
        let durable_audit = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let durable = durable_audit.clone();
        let journal = Arc::new(std::sync::OnceLock::new());
        let journaled = journal.clone();
        let writer = std::thread::Builder::new()
            .name("audit-writer".into())
            .spawn(move || write_behind(writer_engine, rx, health, durable, journaled))
            .map_err(|e| Error::Open {
                path: engine.shown(),
                reason: e.to_string(),
            })?;
        Ok(Self {
            engine,
            key_home: at.key_home().to_path_buf(),
            writes: Mutex::new(Some(tx)),
            writer: Mutex::new(Some(writer)),
            writer_health,
            durable_audit,
            journal,
            journal_dir: match at {
                StoreLocation::File(db) => Some(journal::folder_of(db)),
                StoreLocation::Postgres { .. } => None,
            },
            commits: match at {
                StoreLocation::File(db) => generation::Commits::of(db),
                StoreLocation::Postgres { .. } => None,
            },
        })
    }

    /// Where the key that seals credentials is kept beside (`<key_home>.key`,
    /// see [`crate::secrets`]): the SQLite file, or for PostgreSQL a name
    /// beside the configuration.
    pub fn key_home(&self) -> &Path {
        &self.key_home
    }

    /// Whether gateways on other machines can share it (PostgreSQL).
    pub fn is_shared(&self) -> bool {
        matches!(self.engine, Engine::Postgres(_))
    }

    /// Where the store is, for messages (a file, or a URL without its password).
    pub fn shown(&self) -> String {
        self.engine.shown()
    }

    fn with<T>(&self, f: impl FnOnce(&dyn Sql) -> Result<T, Error>) -> Result<T, Error> {
        self.engine.with(f)
    }

    fn transaction<T>(&self, f: impl FnOnce(&dyn Sql) -> Result<T, Error>) -> Result<T, Error> {
        self.engine.transaction(f)
    }

    /// Creates a project.
    pub fn create_project(&self, name: &str, search: Option<Search>) -> Result<Project, Error> {
        let inserted = self.with(|c| {
            c.execute(
                "INSERT INTO projects (name, search) VALUES (?1, ?2) ON CONFLICT (name) DO NOTHING",
                args![name, search.map(Search::as_str)],
            )
        })?;
        if inserted == 0 {
            return Err(Error::ProjectExists(name.to_string()));
        }
        self.project(name)?.ok_or_else(|| Error::NoProject(name.to_string()))
    }

    /// Every project, by name.
    pub fn projects(&self) -> Result<Vec<Project>, Error> {
        self.with(|c| {
            c.all(
                "SELECT id, name, search, created_at, exposure, apps FROM projects ORDER BY name",
                &[],
                project_row,
            )
        })
    }

    /// Whether the database answers, and takes the audit log's writes (for
    /// readiness checks: reads still answer on a full disk).
    pub fn ping(&self) -> Result<(), Error> {
        self.with(|c| c.one("SELECT count(*) FROM projects", &[], |_| Ok(())))?;
        self.writer_health.check()
    }

    /// A project by name or id.
    pub fn project(&self, name_or_id: &str) -> Result<Option<Project>, Error> {
        self.with(|c| {
            c.row(
                "SELECT id, name, search, created_at, exposure, apps FROM projects WHERE name = ?1 OR CAST(id AS TEXT) = ?1",
                args![name_or_id],
                project_row,
            )
        })
    }

    fn require_project(&self, name_or_id: &str) -> Result<Project, Error> {
        self.project(name_or_id)?
            .ok_or_else(|| Error::NoProject(name_or_id.to_string()))
    }

    /// Sets a project's search strategy (`None`: catalog off).
    pub fn set_search(&self, project: &str, search: Option<Search>) -> Result<Project, Error> {
        self.set_setting(project, "search", search.map(Search::as_str))
    }

    /// Sets how a project's clients see the tools.
    pub fn set_exposure(&self, project: &str, exposure: Exposure) -> Result<Project, Error> {
        self.set_setting(project, "exposure", Some(exposure.as_str()))
    }

    /// Sets whether a project on the `meta` exposure lists its Apps.
    pub fn set_apps(&self, project: &str, apps: Apps) -> Result<Project, Error> {
        self.set_setting(project, "apps", Some(apps.as_str()))
    }

    /// Sets one of a project's settings; `column` is always one of ours.
    fn set_setting(&self, project: &str, column: &'static str, value: Option<&str>) -> Result<Project, Error> {
        let p = self.require_project(project)?;
        let sql = format!("UPDATE projects SET {column} = ?1 WHERE id = ?2");
        self.with(|c| c.execute(&sql, args![value, p.id]))?;
        self.require_project(project)
    }

    /// Issues a token; the returned secret is shown once and stored only as a hash.
    pub fn issue_token(&self, project: &str, label: &str) -> Result<(TokenInfo, String), Error> {
        let p = self.require_project(project)?;
        let secret = self.new_secret()?;
        let info = self.with(|c| {
            c.one(
                "INSERT INTO tokens (project_id, label, secret_hash) VALUES (?1, ?2, ?3)
                 RETURNING id, project_id, label, created_at, last_used_at, revoked_at",
                args![p.id, label, sha256(&secret).as_slice()],
                token_row,
            )
        })?;
        let id = info.id;
        Ok((info, format!("{TOKEN_PREFIX}{id}_{secret}")))
    }

    /// 256 random bits in hex: a token's secret.
    fn new_secret(&self) -> Result<String, Error> {
        crate::secrets::random_hex().map_err(|e| Error::Open {
            path: self.shown(),
            reason: format!("no randomness: {e}"),
        })
    }

    /// Tokens, of one project or all.
    pub fn tokens(&self, project: Option<&str>) -> Result<Vec<TokenInfo>, Error> {
        let project_id = project.map(|p| self.require_project(p)).transpose()?.map(|p| p.id);
        self.with(|c| {
            c.all(
                "SELECT id, project_id, label, created_at, last_used_at, revoked_at FROM tokens
                 WHERE CAST(?1 AS BIGINT) IS NULL OR project_id = ?1 ORDER BY id",
                args![project_id],
                token_row,
            )
        })
    }

    /// Revokes a token; false when there is no such live token.
    pub fn revoke_token(&self, id: i64) -> Result<bool, Error> {
        let n = self.with(|c| {
            c.execute(
                "UPDATE tokens SET revoked_at = ?1 WHERE id = ?2 AND revoked_at IS NULL",
                args![now(), id],
            )
        })?;
        Ok(n == 1)
    }

    /// The live token behind `token` and its project, or `None`. Unknown,
    /// revoked and mistyped tokens are indistinguishable, and the secret is
    /// compared in constant time.
    pub fn authenticate(&self, token: &str) -> Result<Option<(i64, Project)>, Error> {
        let (id, secret) = parse_token(token).unwrap_or((-1, token));
        let presented = sha256(secret);
        let row = self.with(|c| {
            c.row(
                "SELECT t.secret_hash, t.last_used_at, p.id, p.name, p.search, p.created_at, p.exposure, p.apps
                 FROM tokens t JOIN projects p ON p.id = t.project_id
                 WHERE t.id = ?1 AND t.revoked_at IS NULL",
                args![id],
                |r| Ok((r.get::<Vec<u8>>(0)?, r.get::<Option<String>>(1)?, project_row_at(r, 2)?)),
            )
        })?;
        let Some((stored, last_used, project)) = row else {
            // Same work as a hit, so timing tells nothing about which ids exist.
            let _ = constant_time_eq(&presented, &[0u8; 32]);
            return Ok(None);
        };
        if !constant_time_eq(&presented, &stored) {
            return Ok(None);
        }
        if use_is_stale(last_used.as_deref()) {
            self.record_token_use(id);
        }
        Ok(Some((id, project)))
    }

    /// Records that token `id` was used, now, in the background.
    pub fn record_token_use(&self, id: i64) {
        // Advisory: when the writer is busy the next use records it.
        if let Some(tx) = self.sender() {
            let _ = tx.try_send(Write::TokenUsed { id, at: now() });
        }
    }

    /// Grants (or, with `enabled = false`, denies) a server or one of its tools.
    pub fn set_permission(&self, project: &str, server: &str, tool: Option<&str>, enabled: bool) -> Result<(), Error> {
        let p = self.require_project(project)?;
        self.with(|c| {
            c.execute(
                "INSERT INTO tool_permissions (project_id, server, tool, enabled) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (project_id, server, tool) DO UPDATE SET enabled = excluded.enabled",
                args![p.id, server, tool.unwrap_or(""), enabled],
            )
        })?;
        Ok(())
    }

    /// Denies a whole server: its tool overrides go, an explicit deny stays
    /// (so the anonymous project's automatic grants do not bring it back).
    pub fn deny_server(&self, project: &str, server: &str) -> Result<(), Error> {
        let p = self.require_project(project)?;
        self.transaction(|tx| {
            tx.execute(
                "DELETE FROM tool_permissions WHERE project_id = ?1 AND server = ?2",
                args![p.id, server],
            )?;
            // Another replica may deny it at the same moment.
            tx.execute(
                "INSERT INTO tool_permissions (project_id, server, tool, enabled) VALUES (?1, ?2, '', 0)
                 ON CONFLICT (project_id, server, tool) DO UPDATE SET enabled = excluded.enabled",
                args![p.id, server],
            )
        })?;
        Ok(())
    }

    /// Grants a whole server unless the project already has a decision about it.
    pub fn grant_if_undecided(&self, project: &str, server: &str) -> Result<(), Error> {
        let p = self.require_project(project)?;
        self.with(|c| {
            c.execute(
                "INSERT INTO tool_permissions (project_id, server, tool, enabled) VALUES (?1, ?2, '', 1) ON CONFLICT DO NOTHING",
                args![p.id, server],
            )
        })?;
        Ok(())
    }

    /// The tools `server` listed last time it was reached through `transport`.
    pub fn remembered_tools(&self, server: &str, transport: &str) -> Result<Option<String>, Error> {
        self.with(|c| {
            c.row(
                "SELECT tools FROM server_tools WHERE server = ?1 AND transport = ?2",
                args![server, transport],
                |r| r.get(0),
            )
        })
    }

    /// Keeps `tools` (JSON) as `server`'s latest listing through `transport`.
    pub fn remember_tools(&self, server: &str, transport: &str, tools: &str) -> Result<(), Error> {
        self.with(|c| {
            c.execute(
                "INSERT INTO server_tools (server, transport, tools) VALUES (?1, ?2, ?3)
                 ON CONFLICT (server) DO UPDATE SET transport = ?2, tools = ?3, listed_at = ?4",
                args![server, transport, tools, now()],
            )
        })?;
        Ok(())
    }

    /// The protocol revision `server` spoke last time it was reached through `transport`.
    pub fn remembered_protocol(&self, server: &str, transport: &str) -> Result<Option<String>, Error> {
        self.with(|c| {
            c.row(
                "SELECT protocol FROM server_tools WHERE server = ?1 AND transport = ?2",
                args![server, transport],
                |r| r.get(0),
            )
        })
        .map(Option::flatten)
    }

    /// Keeps the revision `server` spoke through `transport` (after its listing).
    pub fn keep_protocol(&self, server: &str, transport: &str, protocol: &str) -> Result<(), Error> {
        self.with(|c| {
            c.execute(
                "UPDATE server_tools SET protocol = ?3 WHERE server = ?1 AND transport = ?2",
                args![server, transport, protocol],
            )
        })?;
        Ok(())
    }

    /// A project's permission rows.
    pub fn permissions(&self, project_id: i64) -> Result<Vec<Permission>, Error> {
        self.with(|c| {
            c.all(
                "SELECT server, tool, enabled FROM tool_permissions WHERE project_id = ?1 ORDER BY server, tool",
                args![project_id],
                |r| {
                    let tool: String = r.get(1)?;
                    Ok(Permission {
                        server: r.get(0)?,
                        tool: (!tool.is_empty()).then_some(tool),
                        enabled: r.get(2)?,
                    })
                },
            )
        })
    }

    fn sender(&self) -> Option<mpsc::Sender<Write>> {
        self.writes.lock().expect("writes lock").clone()
    }

    /// Flushes queued audit rows and stops the writer. Later rows are refused with an error log.
    pub fn close(&self) {
        drop(self.writes.lock().expect("writes lock").take());
        if let Some(writer) = self.writer.lock().expect("writer lock").take() {
            let _ = writer.join();
        }
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        self.close();
    }
}

fn token_row(r: &Row) -> Result<TokenInfo, Error> {
    Ok(TokenInfo {
        id: r.get(0)?,
        project_id: r.get(1)?,
        label: r.get(2)?,
        created_at: r.get(3)?,
        last_used_at: r.get(4)?,
        revoked_at: r.get(5)?,
    })
}

fn project_row(r: &Row) -> Result<Project, Error> {
    project_row_at(r, 0)
}

fn project_row_at(r: &Row, at: usize) -> Result<Project, Error> {
    Ok(Project {
        id: r.get(at)?,
        name: r.get(at + 1)?,
        search: r.get::<Option<String>>(at + 2)?.as_deref().and_then(Search::from_word),
        created_at: r.get(at + 3)?,
        exposure: Exposure::from_word(r.text(at + 4)),
        apps: Apps::from_word(r.text(at + 5)),
    })
}

/// A throwaway PostgreSQL cluster, once per test binary (shared with the integration tests).
#[cfg(any(test, feature = "test-support"))]
#[path = "../../../tests/suite/common/postgres.rs"]
pub(crate) mod test_cluster;

/// A store for a test, and the folder it (or its key file) is in.
#[cfg(test)]
pub(crate) type TestStore = (tempfile::TempDir, Store);

/// A fresh SQLite store in a folder of its own.
#[cfg(test)]
pub(crate) fn sqlite_test_store() -> TestStore {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("gw.db")).unwrap();
    (dir, store)
}

/// A fresh store on its own database of the test binary's PostgreSQL cluster.
#[cfg(test)]
pub(crate) fn postgres_test_store() -> TestStore {
    let (dir, at) = test_database();
    let store = Store::open_at(&at).unwrap();
    (dir, store)
}

/// One store test on each engine: `each_engine!(NAME)` beside `fn NAME((dir,
/// s): TestStore)` (or `each_engine!(async NAME)` beside an async
/// one) defines `NAME::sqlite`, which runs anywhere, and `NAME::postgres`,
/// which needs PostgreSQL, so only the full tier runs it (`cargo test --
/// --include-ignored`, docs/src/contributing.md).
#[cfg(test)]
macro_rules! each_engine {
    ($name:ident) => {
        mod $name {
            #[test]
            fn sqlite() {
                super::$name($crate::sqlite_test_store())
            }
            #[test]
            #[ignore = "full tier: needs PostgreSQL (scripts/setup)"]
            fn postgres() {
                super::$name($crate::postgres_test_store())
            }
        }
    };
    (async $name:ident) => {
        mod $name {
            #[tokio::test]
            async fn sqlite() {
                super::$name($crate::sqlite_test_store()).await
            }
            #[tokio::test]
            #[ignore = "full tier: needs PostgreSQL (scripts/setup)"]
            async fn postgres() {
                super::$name($crate::postgres_test_store()).await
            }
        }
    };
}
#[cfg(test)]
pub(crate) use each_engine;

/// A fresh database on the test binary's PostgreSQL cluster, for stores
/// that share it as replicas do (and the folder their key file would be in).
#[cfg(any(test, feature = "test-support"))]
pub fn test_database() -> (tempfile::TempDir, StoreLocation) {
    let dir = tempfile::tempdir().unwrap();
    let at = StoreLocation::Postgres {
        url: test_cluster::Cluster::shared().database(),
        key_home: dir.path().join("pg"),
    };
    (dir, at)
}

#[cfg(test)]
mod tests;
