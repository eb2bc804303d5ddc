//! The audit log: rows of IDs and counts. Callers queue rows on a bounded
//! channel; one writer thread with its own connection commits what is
//! queued in one transaction (group commit). A durable write
//! ([`Store::audit_durable`]) waits for its batch's commit, so an answer
//! never leaves before its row; a call's row is written twice, `started`
//! before its server is called and its outcome after, which replaces it
//! (one row per request id: a unique index, and retried batches change
//! nothing). A failed write (a locked or full disk, a PostgreSQL server
//! restarting) is retried until it succeeds, and [`Store::close`] flushes
//! what is queued.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use super::engine::Engine;
use super::journal::Journal;
use super::sql::{Sql, ToValue, Value, args};
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};

use super::{Error, Store, now};
use vocab::outcome::Outcome;
use vocab::text::clip;
use vocab::wire::{MAX_REQUEST_ID_BYTES, MAX_SUBJECT_BYTES, MAX_TOOL_KEY_BYTES, MAX_TRAIL_BYTES};

/// Audit rows that may wait in memory before callers are slowed down.
pub(super) const AUDIT_QUEUE: usize = 4096;
/// Rows written per transaction at most.
const AUDIT_BATCH: usize = 512;
/// How long the writer lets rows gather once one arrives, when nobody waits
/// for them (best-effort audit): under load one transaction, and one wake-up
/// of the writer, carries many calls' rows (a commit per call was a tenth of
/// the gateway's CPU per call). Durable writes are not held back: rows that
/// queue while a commit runs form the next batch.
const AUDIT_LINGER: Duration = Duration::from_millis(25);

/// One audit row. IDs and counts only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditRow {
    /// ISO 8601.
    pub at: String,
    /// The gateway's id for the upstream call (also in the logs).
    pub request_id: String,
    /// The caller's project, when known.
    pub project_id: Option<i64>,
    /// The caller's token, when one was used.
    pub token_id: Option<i64>,
    /// `tool_discovery` or `tool_execute`.
    pub meta_tool: String,
    /// The `toolKey` of an execute.
    pub tool_key: Option<String>,
    /// What happened.
    pub outcome: Outcome,
    /// Wall time of the call.
    pub latency_ms: u64,
    /// Results returned by a discovery.
    pub result_count: Option<u64>,
    /// The OAuth subject of the caller, when it signed in with OAuth.
    pub subject: Option<String>,
    /// The issuer of that caller's token.
    pub issuer: Option<String>,
    /// A discovery's analyzed query terms (or their hashes), JSON: one array per query.
    pub query_terms: Option<String>,
    /// A discovery's answered toolKeys, JSON array.
    pub ranked_keys: Option<String>,
    /// An execute's discovery: the request id of the call that found its tool.
    pub follows: Option<String>,
    /// The tool's rank in that discovery (1 = first).
    pub rank: Option<u32>,
    /// A discovery's o200k tokens saved against listing every tool the
    /// caller may see (negative when the answer cost more).
    #[serde(default)]
    pub saved_tokens: Option<i64>,
    /// A script's bytes of tool results kept out of the model's context.
    #[serde(default)]
    pub kept_bytes: Option<i64>,
}

impl AuditRow {
    /// The row as it may be stored: no string past its bound (`wire.rs`),
    /// no credential in its key. The gateway refuses an over-long string
    /// before it builds a row; this holds for any path that did not (a
    /// script's calls carry keys as the script wrote them).
    fn bounded(mut self) -> Self {
        self.request_id = clip(&self.request_id, MAX_REQUEST_ID_BYTES);
        self.follows = self.follows.map(|id| clip(&id, MAX_REQUEST_ID_BYTES));
        self.tool_key = self
            .tool_key
            .map(|key| clip(&leaks::redacted_head(&key, MAX_TOOL_KEY_BYTES), MAX_TOOL_KEY_BYTES));
        self.subject = self.subject.map(|s| clip(&s, MAX_SUBJECT_BYTES));
        self.issuer = self.issuer.map(|s| clip(&s, MAX_SUBJECT_BYTES));
        // JSON cut short is no JSON: a trail past its bound is left out.
        self.query_terms = self.query_terms.filter(|t| t.len() <= MAX_TRAIL_BYTES);
        self.ranked_keys = self.ranked_keys.filter(|k| k.len() <= MAX_TRAIL_BYTES);
        self
    }
}

/// Why a durable audit row was not written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unwritten {
    /// The store refused the batch (a full disk, a database that is down).
    #[error("the audit log cannot take rows ({0})")]
    Failed(String),
    /// The batch did not commit in time.
    #[error("the audit log did not take the row within {0} s")]
    Late(u64),
    /// Rows wait in memory up to a bound, and it is reached.
    #[error("the audit log is {AUDIT_QUEUE} rows behind")]
    Behind,
    /// The store is closing.
    #[error("the audit log is closed")]
    Closed,
}

/// Tells a durable write's caller how its batch went.
pub(super) type Ack = oneshot::Sender<Result<(), String>>;

/// How strict audit makes a row durable, as [`Store::strict_audit`] set it up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StrictAudit {
    /// Appended to the journal in `dir`; `replayed` rows were left there by
    /// a gateway that stopped and are in the store now.
    Journal { dir: std::path::PathBuf, replayed: usize },
    /// Committed to the store (PostgreSQL) before the caller goes on.
    Commits,
}

impl Store {
    /// Queues an audit row; waits if the writer is behind, never drops it.
    pub async fn audit(&self, row: AuditRow) {
        match self.sender() {
            Some(tx) => {
                if tx.send(Write::Audit(Box::new(row.bounded()), None)).await.is_err() {
                    tracing::error!("audit writer stopped; a row could not be queued");
                }
            }
            None => tracing::error!(request_id = %row.request_id, "audit row after the store was closed"),
        }
    }

    /// Writes an audit row and waits, at most `wait`, for its commit. A
    /// `started` row is refused at once when its batch fails: its call must
    /// not run. Any other row stays queued and is retried after an error
    /// too, since what it records has happened.
    pub async fn audit_durable(&self, row: AuditRow, wait: Duration) -> Result<(), Unwritten> {
        let tx = self.sender().ok_or(Unwritten::Closed)?;
        if let Some(journal) = self.journal.get() {
            // Room first: a row in the journal but not queued would reach
            // the store only at the next start.
            let permit = tx.try_reserve().map_err(|e| match e {
                mpsc::error::TrySendError::Full(()) => Unwritten::Behind,
                mpsc::error::TrySendError::Closed(()) => Unwritten::Closed,
            })?;
            let row = row.bounded();
            let line = serde_json::to_vec(&row).expect("an audit row is JSON");
            return journal
                .append(&line, || permit.send(Write::Journaled(Box::new(row))))
                .map_err(|e| Unwritten::Failed(format!("the audit journal cannot take rows: {e}")));
        }
        let (ack, committed) = oneshot::channel();
        tx.try_send(Write::Audit(Box::new(row.bounded()), Some(ack)))
            .map_err(|e| match e {
                mpsc::error::TrySendError::Full(_) => Unwritten::Behind,
                mpsc::error::TrySendError::Closed(_) => Unwritten::Closed,
            })?;
        match tokio::time::timeout(wait, committed).await {
            Ok(Ok(Ok(()))) => Ok(()),
            Ok(Ok(Err(reason))) => Err(Unwritten::Failed(reason)),
            Ok(Err(_)) => Err(Unwritten::Closed),
            Err(_) => Err(Unwritten::Late(wait.as_secs().max(1))),
        }
    }

    /// Turns strict audit on: [`Store::audit_durable`] then returns once
    /// its row is durable. On SQLite a row is durable once in the journal
    /// (whose leftovers from a gateway that stopped are replayed now); on
    /// PostgreSQL, once committed, and the writer commits at once instead of
    /// letting rows gather. Once per store.
    pub fn strict_audit(&self) -> Result<StrictAudit, Error> {
        let Some(dir) = &self.journal_dir else {
            self.commit_durably();
            return Ok(StrictAudit::Commits);
        };
        let (journal, replayed) = Journal::open(dir, |lines| replay(&self.engine, &lines))?;
        if self.journal.set(journal).is_err() {
            tracing::warn!("strict audit was already on");
        }
        Ok(StrictAudit::Journal {
            dir: dir.clone(),
            replayed,
        })
    }

    /// Rows durable in the journal and not yet in the store; none without a journal.
    pub fn journaled_backlog(&self) -> Option<u64> {
        self.journal.get().map(Journal::backlog)
    }

    /// Durable writes wait for their commits.
    pub(super) fn commit_durably(&self) {
        self.durable_audit.store(true, Ordering::Relaxed);
    }

    /// The newest audit rows, newest last.
    pub fn audit_tail(&self, project: Option<&str>, limit: usize) -> Result<Vec<AuditRow>, Error> {
        let project_id = project.map(|p| self.require_project(p)).transpose()?.map(|p| p.id);
        let mut rows = self.with(|c| {
            c.all(
                &format!(
                    "{AUDIT_SELECT} WHERE CAST(?1 AS BIGINT) IS NULL OR project_id = ?1 ORDER BY id DESC LIMIT ?2"
                ),
                args![project_id, limit],
                read_row,
            )
        })?;
        rows.reverse();
        Ok(rows)
    }

    /// Rows durable in the audit journal and not in the store yet (SQLite
    /// under strict audit, while its writer is behind or the store takes no
    /// rows), oldest first; none on PostgreSQL. What a running gateway has
    /// journaled is read too, without taking its segments.
    pub fn journaled_rows(&self, project: Option<&str>) -> Result<Vec<AuditRow>, Error> {
        let Some(dir) = &self.journal_dir else {
            return Ok(Vec::new());
        };
        let project_id = project.map(|p| self.require_project(p)).transpose()?.map(|p| p.id);
        let lines = super::journal::lines(dir).map_err(|e| Error::Journal {
            dir: dir.display().to_string(),
            reason: e.to_string(),
        })?;
        let rows: Vec<AuditRow> = lines
            .iter()
            .filter_map(|line| serde_json::from_str::<AuditRow>(line).ok())
            .filter(|r| project_id.is_none_or(|p| r.project_id == Some(p)))
            .collect();
        let (rows, _) = final_rows(rows.iter().collect());
        let mut pending = Vec::new();
        for chunk in rows.chunks(ROWS_PER_INSERT) {
            let ids: Vec<Value> = chunk.iter().map(|r| r.request_id.to_value()).collect();
            let stored: std::collections::HashSet<(String, String)> = self
                .with(|c| {
                    c.all(
                        &format!(
                            "SELECT request_id, outcome FROM audit_log WHERE request_id IN ({})",
                            places(chunk.len())
                        ),
                        &ids,
                        |r| Ok((r.get(0)?, r.get(1)?)),
                    )
                })?
                .into_iter()
                .collect();
            pending.extend(
                chunk
                    .iter()
                    .filter(|r| !stored.contains(&(r.request_id.clone(), r.outcome.as_str().to_string())))
                    .map(|r| (*r).clone()),
            );
        }
        pending.sort_by(|a, b| a.at.cmp(&b.at));
        Ok(pending)
    }

    /// One request's rows: the request itself, then, for a script, its
    /// inner calls (`ID.1`, `ID.2`…) in the order it made them. An
    /// operator's lookup, so a scan is fine; the id is matched whole, never
    /// as a pattern.
    pub fn audit_request(&self, request_id: &str) -> Result<Vec<AuditRow>, Error> {
        let inner = format!("{request_id}.");
        let mut rows = self.with(|c| {
            c.all(
                &format!("{AUDIT_SELECT} WHERE request_id = ?1 OR substr(request_id, 1, ?2) = ?3"),
                args![request_id, inner.chars().count() as i64, inner],
                read_row,
            )
        })?;
        // The script's row is written last, when it ends; it leads here.
        rows.sort_by_key(|r| {
            r.request_id
                .strip_prefix(&inner)
                .map(|n| n.parse::<u64>().unwrap_or(u64::MAX))
        });
        Ok(rows)
    }

    /// Calls whose server was called and whose outcome never came: running
    /// now, or cut off by a gateway that stopped (a crash, a kill); newest first.
    pub fn started_calls(&self, limit: usize) -> Result<Vec<AuditRow>, Error> {
        self.with(|c| {
            c.all(
                &format!("{AUDIT_SELECT} WHERE outcome = 'started' ORDER BY id DESC LIMIT ?1"),
                args![limit],
                read_row,
            )
        })
    }
}

const AUDIT_SELECT: &str =
    "SELECT at, request_id, project_id, token_id, meta_tool, tool_key, outcome, latency_ms, result_count,
        subject, issuer, query_terms, ranked_keys, follows, rank, saved_tokens, kept_bytes FROM audit_log";

fn read_row(r: &super::sql::Row) -> Result<AuditRow, Error> {
    Ok(AuditRow {
        at: r.get(0)?,
        request_id: r.get(1)?,
        project_id: r.get(2)?,
        token_id: r.get(3)?,
        meta_tool: r.get(4)?,
        tool_key: r.get(5)?,
        outcome: Outcome::from_word(r.text(6)),
        latency_ms: r.get::<i64>(7)?.max(0) as u64,
        result_count: r.get::<Option<i64>>(8)?.map(|n| n.max(0) as u64),
        subject: r.get(9)?,
        issuer: r.get(10)?,
        query_terms: r.get(11)?,
        ranked_keys: r.get(12)?,
        follows: r.get(13)?,
        rank: r.get(14)?,
        saved_tokens: r.get(15)?,
        kept_bytes: r.get(16)?,
    })
}

/// A write the request path hands to the writer thread.
#[derive(Debug)]
pub(super) enum Write {
    /// Boxed: the row is several times the size of the other writes; the
    /// ack, when its caller waits for the commit.
    Audit(Box<AuditRow>, Option<Ack>),
    /// A row already durable in the journal, to fold into the store.
    Journaled(Box<AuditRow>),
    TokenUsed {
        id: i64,
        at: String,
    },
    Learn(learning::Use),
    /// Boxed like audit rows: it carries its queries' vectors.
    Link(Box<learning::Link>),
    Prune {
        project_id: i64,
        least_weight: f64,
    },
}

/// Why the writer's latest batch failed, until a batch commits: a store
/// that answers reads but takes no writes (a full disk) is not ready.
#[derive(Debug, Clone, Default)]
pub(super) struct WriterHealth(Arc<Mutex<Option<String>>>);

impl WriterHealth {
    fn set(&self, failure: Option<String>) {
        *self.0.lock().expect("writer health lock") = failure;
    }

    /// The latest batch's failure, if it failed.
    pub(super) fn check(&self) -> Result<(), Error> {
        match &*self.0.lock().expect("writer health lock") {
            Some(reason) => Err(Error::AuditWrites(reason.clone())),
            None => Ok(()),
        }
    }
}

/// The writer thread: batches writes into transactions; on failure keeps the
/// batch and retries, so a locked or full disk delays audit rows but loses
/// none while the gateway runs. Waiting callers learn of each commit, and
/// of a failure when their row is a `started` one.
pub(super) fn write_behind(
    engine: Engine,
    mut rx: mpsc::Receiver<Write>,
    health: WriterHealth,
    durable: Arc<AtomicBool>,
    journal: Arc<OnceLock<Journal>>,
) {
    let mut batch = Vec::with_capacity(AUDIT_BATCH);
    let mut delay = Duration::from_millis(50);
    let _checkpoints = engine
        .checkpoint_apart()
        .inspect_err(|e| tracing::warn!(error = %e, "WAL checkpoints stay in the audit writer's commits"));
    loop {
        if batch.is_empty() {
            match rx.blocking_recv() {
                Some(row) => batch.push(row),
                None => {
                    // Every row given is committed: no journal is left to replay.
                    if let Some(journal) = journal.get() {
                        journal.finished();
                    }
                    return;
                }
            }
            // Rows already waiting need writing, not waiting for: the linger
            // must never cap the writer's throughput.
            if !durable.load(Ordering::Relaxed) && rx.len() < AUDIT_BATCH {
                std::thread::sleep(AUDIT_LINGER);
            }
        }
        while batch.len() < AUDIT_BATCH {
            match rx.try_recv() {
                Ok(row) => batch.push(row),
                Err(_) => break,
            }
        }
        match engine.transaction(|tx| insert_batch(tx, &batch)) {
            Ok(()) => {
                let mut journaled = 0;
                for write in batch.drain(..) {
                    match write {
                        Write::Audit(_, Some(ack)) => {
                            let _ = ack.send(Ok(()));
                        }
                        Write::Journaled(_) => journaled += 1,
                        _ => {}
                    }
                }
                if journaled > 0
                    && let Some(journal) = journal.get()
                {
                    journal.committed(journaled);
                }
                delay = Duration::from_millis(50);
                health.set(None);
            }
            Err(e) => {
                health.set(Some(e.to_string()));
                refuse_started(&mut batch, &e.to_string());
                let closed = rx.is_closed() && rx.is_empty();
                tracing::error!(error = %e, rows = batch.len(), "audit write failed; retrying");
                if closed && delay >= Duration::from_secs(2) {
                    tracing::error!(
                        rows = batch.len(),
                        "audit rows lost at shutdown: the store stayed unwritable"
                    );
                    return;
                }
                std::thread::sleep(delay);
                delay = (delay * 2).min(Duration::from_secs(2));
            }
        }
    }
}

/// Tells the callers of `started` rows in a failed batch at once: their calls
/// are refused and must not run. The rows stay, so the outcome row the
/// refusal writes finds and replaces them when the store is back.
fn refuse_started(batch: &mut [Write], reason: &str) {
    for write in batch {
        if let Write::Audit(row, ack) = write
            && row.outcome == Outcome::Started
            && let Some(ack) = ack.take()
        {
            let _ = ack.send(Err(reason.to_string()));
        }
    }
}

fn insert_batch(tx: &dyn Sql, writes: &[Write]) -> Result<(), Error> {
    // Audit writers take turns with each other and with the usage rollup
    // (SQLite's lock does this anyway): rows then commit in id order, and the
    // rollup's watermark never passes a row of a batch still committing on
    // another replica.
    tx.execute("UPDATE usage_rolled SET through = through WHERE id = 1", &[])?;
    let mut rows = Vec::with_capacity(writes.len());
    for w in writes {
        match w {
            Write::Audit(r, _) | Write::Journaled(r) => rows.push(r.as_ref()),
            Write::TokenUsed { id, at } => {
                tx.execute("UPDATE tokens SET last_used_at = ?1 WHERE id = ?2", args![at, id])?;
            }
            Write::Learn(u) => super::learned::insert(tx, u)?,
            Write::Link(link) => super::learned::insert_link(tx, link)?,
            Write::Prune {
                project_id,
                least_weight,
            } => super::learned::prune(tx, *project_id, *least_weight)?,
        }
    }
    let (rows, finished) = final_rows(rows);
    // An outcome replaces its call's `started` row with a row of its own (a
    // new id, so the usage rollup, which skips `started` rows, counts it).
    let per = rows_per_statement(tx);
    let delete = |n| {
        format!(
            "DELETE FROM audit_log WHERE outcome = 'started' AND request_id IN ({})",
            places(n)
        )
    };
    in_statements(&finished, per, delete, |sql, ids| {
        let ids: Vec<Value> = ids.iter().map(|id| id.to_value()).collect();
        tx.execute(sql, &ids).map(drop)
    })?;
    in_statements(&rows, per, insert_statement, |sql, rows| {
        let values: Vec<Value> = rows.iter().flat_map(|r| audit_values(r)).collect();
        tx.execute(sql, &values).map(drop)
    })
}

/// Runs `run` on `items` in chunks of `per`, each with the statement `shape`
/// writes for its length: written once per length (a batch has two at
/// most), not once per chunk, since on SQLite a chunk is one row.
fn in_statements<T>(
    items: &[T],
    per: usize,
    shape: impl Fn(usize) -> String,
    mut run: impl FnMut(&str, &[T]) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut written: Option<(usize, String)> = None;
    for chunk in items.chunks(per) {
        let sql = match written.take() {
            Some((n, sql)) if n == chunk.len() => sql,
            _ => shape(chunk.len()),
        };
        run(&sql, chunk)?;
        written = Some((chunk.len(), sql));
    }
    Ok(())
}

/// Writes the rows a stopped gateway left in its journal: as if its writer
/// had. A line cut short by the crash that left it is no row.
fn replay(engine: &Engine, lines: &[String]) -> Result<(), Error> {
    let rows: Vec<Write> = lines
        .iter()
        .filter_map(|line| serde_json::from_str::<AuditRow>(line).ok())
        .map(|row| Write::Journaled(Box::new(row)))
        .collect();
    for batch in rows.chunks(AUDIT_BATCH) {
        engine.transaction(|tx| insert_batch(tx, batch))?;
    }
    Ok(())
}

/// The rows a batch inserts, and the request ids whose `started` row an
/// outcome replaces: a `started` row followed in the same batch by its
/// outcome is not inserted at all.
fn final_rows(rows: Vec<&AuditRow>) -> (Vec<&AuditRow>, Vec<&str>) {
    let finished: Vec<&str> = rows
        .iter()
        .filter(|r| r.outcome != Outcome::Started)
        .map(|r| r.request_id.as_str())
        .collect();
    let done: std::collections::HashSet<&str> = finished.iter().copied().collect();
    let kept = rows
        .into_iter()
        .filter(|r| r.outcome != Outcome::Started || !done.contains(r.request_id.as_str()))
        .collect();
    (kept, finished)
}

/// `?1, ?2, …, ?n`: the places of an `IN` list of `n` arguments.
fn places(n: usize) -> String {
    (1..=n).map(|i| format!("?{i}")).collect::<Vec<_>>().join(", ")
}

/// Audit rows one `INSERT` carries at most ([`AUDIT_COLUMNS`] arguments each).
const ROWS_PER_INSERT: usize = 32;

/// Audit rows (or ids) one statement of a batch carries on `sql`: several
/// where each statement is a round trip (PostgreSQL); one on SQLite, where
/// a statement is a call, and the one shape stays prepared. (A statement
/// shaped to each batch's size was parsed anew for almost every batch: a
/// fortieth of a call's CPU at one session.)
fn rows_per_statement(sql: &dyn Sql) -> usize {
    if sql.round_trips() { ROWS_PER_INSERT } else { 1 }
}

/// `INSERT INTO audit_log … VALUES (?1, …, ?17), (?18, …)` for `rows` rows.
fn insert_statement(rows: usize) -> String {
    let tuples: Vec<String> = (0..rows)
        .map(|row| {
            let places: Vec<String> = (1..=AUDIT_COLUMNS)
                .map(|col| format!("?{}", row * AUDIT_COLUMNS + col))
                .collect();
            format!("({})", places.join(", "))
        })
        .collect();
    format!(
        "INSERT INTO audit_log (at, request_id, project_id, token_id, meta_tool, tool_key, outcome, latency_ms, result_count,
                                subject, issuer, query_terms, ranked_keys, follows, rank, saved_tokens, kept_bytes)
         VALUES {}
         ON CONFLICT (request_id) DO NOTHING",
        tuples.join(", ")
    )
}

const AUDIT_COLUMNS: usize = 17;

fn audit_values(r: &AuditRow) -> [Value; AUDIT_COLUMNS] {
    [
        r.at.to_value(),
        r.request_id.to_value(),
        r.project_id.to_value(),
        r.token_id.to_value(),
        r.meta_tool.to_value(),
        r.tool_key.to_value(),
        r.outcome.as_str().to_value(),
        r.latency_ms.to_value(),
        r.result_count.to_value(),
        r.subject.to_value(),
        r.issuer.to_value(),
        r.query_terms.to_value(),
        r.ranked_keys.to_value(),
        r.follows.to_value(),
        r.rank.to_value(),
        r.saved_tokens.to_value(),
        r.kept_bytes.to_value(),
    ]
}

/// An audit row stamped now.
pub fn audit_row(request_id: &str, meta_tool: &str) -> AuditRow {
    AuditRow {
        at: now(),
        request_id: request_id.to_string(),
        project_id: None,
        token_id: None,
        meta_tool: meta_tool.to_string(),
        tool_key: None,
        outcome: Outcome::Ok,
        latency_ms: 0,
        result_count: None,
        subject: None,
        issuer: None,
        query_terms: None,
        ranked_keys: None,
        follows: None,
        rank: None,
        saved_tokens: None,
        kept_bytes: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_insert_carries_several_rows() {
        let sql = insert_statement(2);
        assert!(
            sql.contains("(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17), (?18,"),
            "{sql}"
        );
        assert!(
            sql.contains("?34)") && sql.ends_with("ON CONFLICT (request_id) DO NOTHING"),
            "{sql}"
        );
    }

    fn row(id: &str, outcome: Outcome) -> AuditRow {
        let mut row = audit_row(id, "tool_execute");
        row.outcome = outcome;
        row
    }

    /// Issue 41: ten 1 MB keys from one script wrote 10 MB of audit rows.
    #[test]
    fn no_string_in_a_row_outgrows_its_bound_and_no_key_keeps_a_credential() {
        let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
        let mut r = audit_row(&"i".repeat(1 << 20), "tool_execute");
        r.tool_key = Some(format!("fs:{token} {}", "k".repeat(1 << 20)));
        r.follows = Some("f".repeat(1000));
        r.subject = Some("s".repeat(1000));
        r.issuer = Some("https://idp.example".into());
        r.query_terms = Some(format!("[{}\"t\"]", "\"t\",".repeat(1 << 16)));
        r.ranked_keys = Some(r#"["fs:read"]"#.into());
        let r = r.bounded();
        assert!(r.request_id.len() <= MAX_REQUEST_ID_BYTES);
        assert_eq!(r.tool_key.as_deref(), Some("fs:[REDACTED:github-token]…"));
        assert!(r.follows.unwrap().len() <= MAX_REQUEST_ID_BYTES);
        assert!(r.subject.unwrap().len() <= MAX_SUBJECT_BYTES);
        assert_eq!(r.issuer.as_deref(), Some("https://idp.example"));
        assert_eq!(r.query_terms, None, "left out rather than cut into broken JSON");
        assert_eq!(r.ranked_keys.as_deref(), Some(r#"["fs:read"]"#));
        let plain = audit_row("r", "tool_execute");
        assert_eq!(plain.clone().bounded(), plain, "an ordinary row is stored as it is");
    }

    #[test]
    fn an_outcome_in_the_same_batch_drops_its_started_row() {
        let (a, a_done, b) = (
            row("a", Outcome::Started),
            row("a", Outcome::Ok),
            row("b", Outcome::Started),
        );
        let (kept, finished) = final_rows(vec![&a, &b, &a_done]);
        let kept: Vec<_> = kept.iter().map(|r| (r.request_id.as_str(), r.outcome)).collect();
        assert_eq!(kept, [("b", Outcome::Started), ("a", Outcome::Ok)]);
        assert_eq!(finished, ["a"]);
    }

    #[test]
    fn a_failed_batch_refuses_started_rows_at_once_and_keeps_every_row() {
        let (started, started_rx) = oneshot::channel();
        let (outcome, mut outcome_rx) = oneshot::channel();
        let mut batch = vec![
            Write::Audit(Box::new(row("a", Outcome::Started)), Some(started)),
            Write::Audit(Box::new(row("b", Outcome::Ok)), Some(outcome)),
        ];
        refuse_started(&mut batch, "disk full");
        assert_eq!(started_rx.blocking_recv().unwrap(), Err("disk full".to_string()));
        assert!(outcome_rx.try_recv().is_err(), "an outcome waits for the retry");
        assert_eq!(batch.len(), 2, "both rows are retried");
    }

    crate::each_engine!(async a_request_is_found_with_its_inner_calls_only);
    async fn a_request_is_found_with_its_inner_calls_only((_dir, s): crate::TestStore) {
        s.commit_durably();
        // Written as a script's are: its calls first, its own row when it ends.
        for id in [
            "r7.1", "r70", "r7.10", "r7x.1", "r7.2", "r8.1", "a_b.1", "axb.1", "a_b", "r7",
        ] {
            s.audit_durable(row(id, Outcome::Ok), Duration::from_secs(5))
                .await
                .unwrap();
        }
        let found =
            |id: &str| -> Vec<String> { s.audit_request(id).unwrap().into_iter().map(|r| r.request_id).collect() };
        assert_eq!(found("r7"), ["r7", "r7.1", "r7.2", "r7.10"], "{}", s.shown());
        assert_eq!(
            found("a_b"),
            ["a_b", "a_b.1"],
            "`_` is a character here, not a wildcard"
        );
        assert!(found("nobody").is_empty());
    }

    crate::each_engine!(async one_row_per_call_however_often_its_batch_is_written);
    async fn one_row_per_call_however_often_its_batch_is_written((_dir, s): crate::TestStore) {
        let wait = Duration::from_secs(5);
        s.commit_durably();
        s.audit_durable(row("c1", Outcome::Started), wait).await.unwrap();
        let rows = |id: &str| -> Vec<(String, i64)> {
            s.with(|c| {
                c.all(
                    "SELECT outcome, id FROM audit_log WHERE request_id = ?1",
                    args![id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
            })
            .unwrap()
        };
        let started = rows("c1");
        assert_eq!(started.len(), 1);
        assert_eq!(started[0].0, "started", "committed before the durable write returned");
        s.audit_durable(row("c1", Outcome::Ok), wait).await.unwrap();
        let done = rows("c1");
        assert_eq!(done.len(), 1, "{}: {done:?}", s.shown());
        assert_eq!(done[0].0, "ok");
        assert!(done[0].1 > started[0].1, "a new id, so the usage rollup counts it");
        // A batch retried after its commit's answer was lost writes nothing twice.
        let batch = [Write::Audit(Box::new(row("c1", Outcome::Ok)), None)];
        s.with(|c| insert_batch(c, &batch)).unwrap();
        s.with(|c| insert_batch(c, &batch)).unwrap();
        assert_eq!(rows("c1").len(), 1, "{}", s.shown());
    }

    crate::each_engine!(a_batch_of_many_statements_is_written_whole);
    fn a_batch_of_many_statements_is_written_whole((_dir, s): crate::TestStore) {
        let ids = |range: std::ops::Range<usize>| range.map(|i| format!("b{i}")).collect::<Vec<_>>();
        let write = |id: &String, outcome| Write::Journaled(Box::new(row(id, outcome)));
        let earlier: Vec<Write> = ids(0..40).iter().map(|id| write(id, Outcome::Started)).collect();
        s.transaction(|tx| insert_batch(tx, &earlier)).unwrap();
        // Forty outcomes of calls started in the earlier batch, thirty new
        // calls: more than one statement's rows on either engine.
        let batch: Vec<Write> = ids(0..40)
            .iter()
            .map(|id| write(id, Outcome::Ok))
            .chain(ids(40..70).iter().map(|id| write(id, Outcome::Started)))
            .collect();
        s.transaction(|tx| insert_batch(tx, &batch)).unwrap();
        let stored: Vec<(String, String)> = s
            .with(|c| {
                c.all("SELECT request_id, outcome FROM audit_log", &[], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
            })
            .unwrap();
        assert_eq!(stored.len(), 70, "{}: one row per call", s.shown());
        let outcome = |id: &str| stored.iter().find(|(r, _)| r == id).map(|(_, o)| o.as_str());
        assert_eq!(outcome("b0"), Some("ok"));
        assert_eq!(outcome("b39"), Some("ok"));
        assert_eq!(outcome("b69"), Some("started"));
    }

    #[test]
    fn a_journal_left_by_a_crash_is_written_once_by_request_id() {
        let (_dir, s) = crate::sqlite_test_store();
        let line = |id: &str, outcome| serde_json::to_string(&row(id, outcome)).unwrap();
        // One call ended, one was cut off, and the last line is torn.
        let left = vec![
            line("done", Outcome::Started),
            line("done", Outcome::Ok),
            line("cut", Outcome::Started),
            r#"{"at":"2026-11-28T00:00:00Z","requ"#.to_string(),
        ];
        let stored = || -> Vec<(String, String)> {
            s.with(|c| {
                c.all(
                    "SELECT request_id, outcome FROM audit_log ORDER BY request_id",
                    &[],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
            })
            .unwrap()
        };
        replay(&s.engine, &left).unwrap();
        let want = [("cut".to_string(), "started".to_string()), ("done".into(), "ok".into())];
        assert_eq!(stored(), want);
        // A crash during the replay: the next start replays it again.
        replay(&s.engine, &left).unwrap();
        replay(&s.engine, &[line("done", Outcome::Started)]).unwrap();
        assert_eq!(stored(), want, "a started row never replaces an outcome");
    }

    #[tokio::test]
    async fn strict_audit_on_sqlite_returns_once_the_row_is_journaled() {
        let (dir, s) = crate::sqlite_test_store();
        let StrictAudit::Journal {
            dir: folder,
            replayed: 0,
        } = s.strict_audit().unwrap()
        else {
            panic!("SQLite journals")
        };
        assert!(folder.starts_with(dir.path()));
        s.audit_durable(row("j1", Outcome::Started), Duration::from_secs(5))
            .await
            .unwrap();
        let journaled: String = std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
            .collect();
        assert!(journaled.contains(r#""requestId":"j1""#), "{journaled}");
        assert_eq!(s.journaled_backlog(), Some(1));
        s.close();
        assert_eq!(s.journaled_backlog(), Some(0));
        assert_eq!(s.audit_request("j1").unwrap().len(), 1, "folded into the store");
        assert_eq!(
            std::fs::read_dir(&folder).unwrap().count(),
            0,
            "every row committed: nothing left to replay"
        );
    }

    crate::each_engine!(async audit_rows_are_flushed_on_close);
    async fn audit_rows_are_flushed_on_close((_dir, s): crate::TestStore) {
        for i in 0..1000 {
            let mut row = audit_row(&format!("r{i}"), "tool_execute");
            row.outcome = if i % 2 == 0 { Outcome::Ok } else { Outcome::Timeout };
            s.audit(row).await;
        }
        s.close();
        let n: i64 = s
            .with(|c| c.one("SELECT count(*) FROM audit_log", &[], |r| r.get(0)))
            .unwrap();
        assert_eq!(n, 1000, "{}", s.shown());
        let tail = s.audit_tail(None, 2).unwrap();
        assert_eq!(
            tail.iter()
                .map(|r| (r.request_id.as_str(), r.outcome))
                .collect::<Vec<_>>(),
            [("r998", Outcome::Ok), ("r999", Outcome::Timeout)]
        );
    }
}
