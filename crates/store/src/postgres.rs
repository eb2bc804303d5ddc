//! The shared engine: PostgreSQL, for gateway replicas that share one store.
//!
//! The store's interface is synchronous (SQLite answers a point read faster
//! than a hop to another thread), so this engine owns a small runtime of its
//! own: connections (a `deadpool-postgres` pool) are made and driven there,
//! and a caller waits on its statement's future from its own thread. Every
//! wait has a deadline, so a database that stops answering is an error
//! within seconds, never a hung request.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use deadpool_postgres::{GenericClient, Manager, ManagerConfig, Pool, RecyclingMethod};
use regex::Regex;
use tokio_postgres::IsolationLevel;
use tokio_postgres::types::{IsNull, ToSql, Type, to_sql_checked};

use super::Error;
use super::sql::{Row, Sql, Value};

/// How long a statement, or the wait for a connection, may take.
const DEADLINE: Duration = Duration::from_secs(5);
/// How long making a connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Connections per process at most.
const POOL_SIZE: usize = 16;

/// A PostgreSQL store.
#[derive(Clone)]
pub(super) struct Postgres {
    inner: Arc<Inner>,
}

struct Inner {
    /// The URL without its password, for messages.
    shown: String,
    pool: Pool,
    /// Each statement as PostgreSQL reads it, translated once: the store's
    /// statements are a fixed set, and the per-request read is one of them.
    dialect: Mutex<HashMap<String, Arc<str>>>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Dropping a runtime blocks, which a runtime thread may not do.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl std::fmt::Debug for Postgres {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Postgres({})", self.inner.shown)
    }
}

impl Postgres {
    /// A pool for the database at `url` (`postgres://user:password@host:port/db`);
    /// connects once to say early whether it can.
    pub(super) fn connect(url: &str) -> Result<Self, Error> {
        let shown = vocab::mask::url(url);
        let refused = |reason: String| Error::Open {
            path: shown.clone(),
            reason,
        };
        let mut config: tokio_postgres::Config =
            url.parse().map_err(|e| refused(format!("not a PostgreSQL URL: {e}")))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("mcp-gateway");
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("store-postgres")
            .enable_all()
            .build()
            .map_err(|e| refused(e.to_string()))?;
        let manager = Manager::from_config(
            config,
            tokio_postgres::NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = {
            let _entered = runtime.enter();
            Pool::builder(manager)
                .max_size(POOL_SIZE)
                .runtime(deadpool_postgres::Runtime::Tokio1)
                .wait_timeout(Some(DEADLINE))
                .create_timeout(Some(CONNECT_TIMEOUT))
                .recycle_timeout(Some(CONNECT_TIMEOUT))
                .build()
                .map_err(|e| refused(e.to_string()))?
        };
        let pg = Self {
            inner: Arc::new(Inner {
                shown: shown.clone(),
                pool,
                dialect: Mutex::default(),
                runtime: Some(runtime),
            }),
        };
        match pg.client() {
            Ok(_) => Ok(pg),
            Err(Error::Unavailable { reason, .. }) => Err(refused(reason)),
            Err(other) => Err(refused(other.to_string())),
        }
    }

    /// The URL without its password.
    pub(super) fn shown(&self) -> &str {
        &self.inner.shown
    }

    /// Waits for `work` on this thread, with the engine's runtime as the
    /// context its sockets and timers live in. On a worker of the gateway's
    /// runtime the wait is `block_in_place`: the worker's other tasks
    /// (`/healthz`, calls that need no statement) move to another thread
    /// instead of waiting out a slow database with it.
    fn block<T>(&self, work: impl Future<Output = Result<T, Error>>) -> Result<T, Error> {
        let runtime = self.inner.runtime.as_ref().expect("runtime lives as long as the pool");
        let wait = || {
            let _entered = runtime.enter();
            futures::executor::block_on(async {
                tokio::time::timeout(DEADLINE, work)
                    .await
                    .map_err(|_| self.unavailable(format!("no answer within {} s", DEADLINE.as_secs())))?
            })
        };
        match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
            Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(wait),
            _ => wait(),
        }
    }

    /// `sql` as PostgreSQL reads it ([`dialect`]).
    fn statement(&self, sql: &str) -> Arc<str> {
        let mut known = self.inner.dialect.lock().expect("dialect cache lock");
        if let Some(translated) = known.get(sql) {
            return translated.clone();
        }
        let translated: Arc<str> = dialect(sql).into();
        known.insert(sql.to_string(), translated.clone());
        translated
    }

    fn unavailable(&self, reason: String) -> Error {
        Error::Unavailable {
            store: self.inner.shown.clone(),
            reason,
        }
    }

    fn client(&self) -> Result<deadpool_postgres::Object, Error> {
        self.block(async { self.inner.pool.get().await.map_err(|e| self.unavailable(e.to_string())) })
    }

    /// Runs `f` on a connection of the pool.
    pub(super) fn with<T>(&self, f: impl FnOnce(&dyn Sql) -> Result<T, Error>) -> Result<T, Error> {
        let client = self.client()?;
        f(&Statements {
            client: &client,
            pg: self,
        })
    }

    /// Runs `f` in a transaction, committed when it returns `Ok`.
    pub(super) fn transaction<T>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T, Error>) -> Result<T, Error> {
        self.run_in(IsolationLevel::ReadCommitted, false, f)
    }

    /// Runs `f` in a read-only transaction that sees one snapshot throughout.
    pub(super) fn snapshot<T>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T, Error>) -> Result<T, Error> {
        self.run_in(IsolationLevel::RepeatableRead, true, f)
    }

    fn run_in<T>(
        &self,
        isolation: IsolationLevel,
        read_only: bool,
        f: impl FnOnce(&Transaction<'_>) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let mut client = self.client()?;
        let tx = self.block(async {
            Ok(client
                .build_transaction()
                .isolation_level(isolation)
                .read_only(read_only)
                .start()
                .await?)
        })?;
        let done = Transaction { tx, pg: self };
        let out = f(&done)?;
        self.block(async { Ok(done.tx.commit().await?) })?;
        Ok(out)
    }
}

/// A transaction in progress (rolled back when dropped uncommitted).
pub(super) struct Transaction<'a> {
    tx: deadpool_postgres::Transaction<'a>,
    pg: &'a Postgres,
}

impl Transaction<'_> {
    /// Statements in this transaction.
    pub(super) fn sql(&self) -> Statements<'_, deadpool_postgres::Transaction<'_>> {
        Statements {
            client: &self.tx,
            pg: self.pg,
        }
    }

    /// Runs several `;`-separated statements without arguments (a migration).
    pub(super) fn batch(&self, sql: &str) -> Result<(), Error> {
        self.pg.block(async { Ok(self.tx.batch_execute(sql).await?) })
    }
}

/// Statements on a connection or in a transaction.
pub(super) struct Statements<'a, C: ?Sized> {
    client: &'a C,
    pg: &'a Postgres,
}

impl<C: GenericClient + ?Sized> Sql for Statements<'_, C> {
    fn query(&self, sql: &str, args: &[Value]) -> Result<Vec<Row>, Error> {
        let sql = self.pg.statement(sql);
        self.pg.block(async {
            let statement = self.client.prepare_cached(&sql).await?;
            let rows = self.client.query(&statement, &arguments(args)).await?;
            rows.iter().map(row_of).collect()
        })
    }

    fn execute(&self, sql: &str, args: &[Value]) -> Result<usize, Error> {
        let sql = self.pg.statement(sql);
        self.pg.block(async {
            let statement = self.client.prepare_cached(&sql).await?;
            Ok(self.client.execute(&statement, &arguments(args)).await? as usize)
        })
    }

    fn round_trips(&self) -> bool {
        true
    }
}

/// The store's SQL as PostgreSQL reads it: `$N` for `?N`, and without
/// SQLite's index hints (PostgreSQL's planner needs none).
fn dialect(sql: &str) -> String {
    static PLACEHOLDER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\?(\d+)").expect("regex"));
    static HINT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\s+(?:INDEXED BY \w+|NOT INDEXED)\b").expect("regex"));
    let sql = HINT.replace_all(sql, "");
    PLACEHOLDER.replace_all(&sql, "$$$1").into_owned()
}

fn arguments(args: &[Value]) -> Vec<&(dyn ToSql + Sync)> {
    args.iter().map(|v| v as &(dyn ToSql + Sync)).collect()
}

/// A value for whatever type PostgreSQL inferred for its placeholder.
impl ToSql for Value {
    fn to_sql(&self, ty: &Type, out: &mut bytes::BytesMut) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(n) => match *ty {
                Type::BOOL => (*n != 0).to_sql(ty, out),
                Type::INT2 => i16::try_from(*n)?.to_sql(ty, out),
                Type::INT4 => i32::try_from(*n)?.to_sql(ty, out),
                Type::FLOAT8 => (*n as f64).to_sql(ty, out),
                Type::TEXT | Type::VARCHAR => n.to_string().to_sql(ty, out),
                _ => n.to_sql(ty, out),
            },
            Value::Real(x) => match *ty {
                Type::FLOAT4 => (*x as f32).to_sql(ty, out),
                _ => x.to_sql(ty, out),
            },
            Value::Text(s) => s.as_str().to_sql(ty, out),
            Value::Blob(b) => b.as_slice().to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

fn row_of(row: &tokio_postgres::Row) -> Result<Row, Error> {
    let value = |i: usize, ty: &Type| -> Result<Value, tokio_postgres::Error> {
        Ok(match *ty {
            Type::INT8 => row.try_get::<_, Option<i64>>(i)?.map_or(Value::Null, Value::Int),
            Type::INT4 => row
                .try_get::<_, Option<i32>>(i)?
                .map_or(Value::Null, |n| Value::Int(n.into())),
            Type::INT2 => row
                .try_get::<_, Option<i16>>(i)?
                .map_or(Value::Null, |n| Value::Int(n.into())),
            Type::BOOL => row
                .try_get::<_, Option<bool>>(i)?
                .map_or(Value::Null, |b| Value::Int(b.into())),
            Type::FLOAT8 => row.try_get::<_, Option<f64>>(i)?.map_or(Value::Null, Value::Real),
            Type::FLOAT4 => row
                .try_get::<_, Option<f32>>(i)?
                .map_or(Value::Null, |x| Value::Real(x.into())),
            Type::BYTEA => row.try_get::<_, Option<Vec<u8>>>(i)?.map_or(Value::Null, Value::Blob),
            _ => row.try_get::<_, Option<String>>(i)?.map_or(Value::Null, Value::Text),
        })
    };
    row.columns()
        .iter()
        .enumerate()
        .map(|(i, c)| value(i, c.type_()).map_err(Error::from))
        .collect::<Result<_, _>>()
        .map(Row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_statements_read_as_postgres() {
        assert_eq!(
            dialect("SELECT a FROM t INDEXED BY t_by_a WHERE a = ?1 AND (?2 IS NULL OR b = ?2) LIMIT ?10"),
            "SELECT a FROM t WHERE a = $1 AND ($2 IS NULL OR b = $2) LIMIT $10"
        );
        assert_eq!(
            dialect("SELECT * FROM audit_log NOT INDEXED\n WHERE id > ?3"),
            "SELECT * FROM audit_log\n WHERE id > $3"
        );
    }

    #[test]
    fn a_database_that_does_not_answer_is_a_clear_error() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let started = std::time::Instant::now();
        let err = Postgres::connect(&format!("postgres://gw:hunter2@127.0.0.1:{port}/gw"))
            .unwrap_err()
            .to_string();
        assert!(started.elapsed() < DEADLINE, "{:?}", started.elapsed());
        assert!(
            err.contains("postgres://gw:***@127.0.0.1") && !err.contains("hunter2"),
            "{err}"
        );
        let err = Postgres::connect("postgres://db/gw?connect_timeout=x")
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a PostgreSQL URL"), "{err}");
    }
}
