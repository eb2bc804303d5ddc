//! Usage from the audit log for the operator console: calls over time, and
//! per tool and per project the calls, error and timeout rates and latency
//! percentiles, over the last hour, day or week. The hour is read from the
//! audit rows themselves, through a covering index on time; the day and the
//! week from hourly rollups (`usage_hours`, migration 0011) plus the rows not
//! rolled up yet, so their cost follows hours × tools × projects, not calls.
//! Both read on a connection of their own, never the one requests use.

mod histogram;

use std::collections::HashMap;

use chrono::{DateTime, Duration, DurationRound, Utc};
use serde::Serialize;

use super::sql::{Row, Sql, args};
use super::{Error, Outcome, Store};
use histogram::Histogram;

/// Audit rows rolled up per transaction at most (the audit writer waits for
/// each). The rows of a batch are read into memory at once: at 100,000 a
/// minute's calls under load took about 25 MB a minute, which the allocator
/// kept, so a soak's RSS grew by that much every minute or so.
const ROLLUP_BATCH: i64 = 5_000;

/// How far back usage looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum UsageRange {
    /// The last hour, by minute.
    Hour,
    /// The last day, by hour.
    Day,
    /// The last week, by hour.
    Week,
}

impl UsageRange {
    /// `hour`, `day` or `week`.
    pub fn parse(word: &str) -> Option<Self> {
        match word {
            "hour" => Some(Self::Hour),
            "day" => Some(Self::Day),
            "week" => Some(Self::Week),
            _ => None,
        }
    }

    /// One bar of the chart.
    fn step(self) -> Duration {
        match self {
            Self::Hour => Duration::minutes(1),
            Self::Day | Self::Week => Duration::hours(1),
        }
    }

    fn buckets(self) -> i32 {
        match self {
            Self::Hour => 60,
            Self::Day => 24,
            Self::Week => 24 * 7,
        }
    }

    /// How many leading characters of an ISO 8601 `at` name its bucket
    /// (`2026-11-25T06:34` for a minute, `2026-11-25T06` for an hour).
    fn bucket_chars(self) -> usize {
        match self {
            Self::Hour => 16,
            Self::Day | Self::Week => 13,
        }
    }
}

/// One bar: calls that started in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Bucket {
    /// The bucket's start, as the prefix of ISO 8601 times in it.
    pub start: String,
    /// Every meta-tool call.
    pub calls: u64,
    /// Calls that did not end `ok`.
    pub errors: u64,
    /// o200k tokens discovery saved against listing every tool.
    pub saved_tokens: i64,
    /// Bytes of tool results code mode kept out of the model's context.
    pub kept_bytes: i64,
}

/// Usage of one tool (by key) or one project (by id).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageRow {
    /// The toolKey, or the project id.
    pub name: String,
    /// Calls.
    pub calls: u64,
    /// Calls that did not end `ok` (tool errors, refusals, failures, timeouts).
    pub errors: u64,
    /// Calls that timed out.
    pub timeouts: u64,
    /// Median latency.
    pub p50_ms: u64,
    /// 95th percentile latency.
    pub p95_ms: u64,
    /// o200k tokens its discoveries saved against listing every tool.
    pub saved_tokens: i64,
    /// Bytes of tool results its scripts kept out of the model's context.
    pub kept_bytes: i64,
}

/// Usage over one range.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// The range.
    pub range: UsageRange,
    /// Its start (ISO 8601).
    pub since: String,
    /// Every meta-tool call in it.
    pub calls: u64,
    /// Those that did not end `ok`.
    pub errors: u64,
    /// o200k tokens discovery saved against listing every tool, in all.
    pub saved_tokens: i64,
    /// Bytes of tool results code mode kept out of models' context, in all.
    pub kept_bytes: i64,
    /// Calls per bucket, oldest first, empty buckets included.
    pub series: Vec<Bucket>,
    /// `tool_execute` calls per tool, most called first.
    pub tools: Vec<UsageRow>,
    /// Meta-tool calls per project id, most calls first.
    pub projects: Vec<UsageRow>,
}

/// One audit row as usage reads it.
struct Seen<'a> {
    bucket: &'a str,
    project: Option<i64>,
    tool: Option<&'a str>,
    outcome: &'a str,
    latency_ms: u64,
    saved: Saved,
}

/// What one call, or a group of calls, kept out of models' context.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Saved {
    tokens: i64,
    bytes: i64,
}

impl Saved {
    fn add(&mut self, other: Saved) {
        self.tokens += other.tokens;
        self.bytes += other.bytes;
    }
}

/// Counts and latencies of one group.
#[derive(Default)]
struct Tally {
    calls: u64,
    errors: u64,
    timeouts: u64,
    latencies: Histogram,
    saved: Saved,
}

impl Tally {
    fn add(&mut self, outcome: &str, latency_ms: u64, saved: Saved) {
        self.calls += 1;
        self.errors += u64::from(outcome != "ok");
        self.timeouts += u64::from(outcome == "timeout");
        self.latencies.add(latency_ms);
        self.saved.add(saved);
    }

    fn merge(&mut self, other: &Tally) {
        self.calls += other.calls;
        self.errors += other.errors;
        self.timeouts += other.timeouts;
        self.latencies.merge(&other.latencies);
        self.saved.add(other.saved);
    }

    fn row(self, name: String) -> UsageRow {
        UsageRow {
            name,
            calls: self.calls,
            errors: self.errors,
            timeouts: self.timeouts,
            p50_ms: self.latencies.percentile(50),
            p95_ms: self.latencies.percentile(95),
            saved_tokens: self.saved.tokens,
            kept_bytes: self.saved.bytes,
        }
    }
}

/// The first bucket of `range` ending now, and every bucket's name.
fn bucket_names(range: UsageRange, now: DateTime<Utc>) -> (DateTime<Utc>, Vec<String>) {
    let step = range.step();
    let last = now.duration_trunc(step).unwrap_or(now);
    let first = last - step * (range.buckets() - 1);
    let names = (0..range.buckets())
        .map(|i| {
            let start = (first + step * i).to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            start[..range.bucket_chars()].to_string()
        })
        .collect();
    (first, names)
}

fn by_calls(rows: HashMap<String, Tally>) -> Vec<UsageRow> {
    let mut rows: Vec<UsageRow> = rows.into_iter().map(|(name, t)| t.row(name)).collect();
    rows.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.name.cmp(&b.name)));
    rows
}

/// Folds the window's rows into usage (pure; the store feeds it).
struct Summary {
    range: UsageRange,
    since: String,
    slot: HashMap<String, usize>,
    /// The bucket of the previous row: rows come in time order, so most
    /// rows fall in the same bucket as the one before.
    last: Option<(String, usize)>,
    series: Vec<Bucket>,
    calls: u64,
    errors: u64,
    saved: Saved,
    tools: HashMap<String, Tally>,
    projects: HashMap<i64, Tally>,
}

impl Summary {
    fn new(range: UsageRange, now: DateTime<Utc>) -> Self {
        let (first, names) = bucket_names(range, now);
        Self {
            range,
            since: first.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            slot: names.iter().enumerate().map(|(i, b)| (b.clone(), i)).collect(),
            last: None,
            series: names
                .into_iter()
                .map(|start| Bucket {
                    start,
                    calls: 0,
                    errors: 0,
                    saved_tokens: 0,
                    kept_bytes: 0,
                })
                .collect(),
            calls: 0,
            errors: 0,
            saved: Saved::default(),
            tools: HashMap::new(),
            projects: HashMap::new(),
        }
    }

    fn add(&mut self, row: Seen<'_>) {
        let failed = row.outcome != "ok";
        self.calls += 1;
        self.errors += u64::from(failed);
        self.saved.add(row.saved);
        let slot = match &self.last {
            Some((bucket, i)) if bucket == row.bucket => Some(*i),
            _ => {
                let found = self.slot.get(row.bucket).copied();
                self.last = found.map(|i| (row.bucket.to_string(), i));
                found
            }
        };
        if let Some(i) = slot {
            self.series[i].calls += 1;
            self.series[i].errors += u64::from(failed);
            self.series[i].saved_tokens += row.saved.tokens;
            self.series[i].kept_bytes += row.saved.bytes;
        }
        if let Some(tool) = row.tool {
            let tally = match self.tools.get_mut(tool) {
                Some(t) => t,
                None => self.tools.entry(tool.to_string()).or_default(),
            };
            tally.add(row.outcome, row.latency_ms, row.saved);
        }
        if let Some(p) = row.project {
            self.projects
                .entry(p)
                .or_default()
                .add(row.outcome, row.latency_ms, row.saved);
        }
    }

    /// Adds an hour's rollup of one project's calls of one tool.
    fn add_rolled(&mut self, hour: &str, project: i64, tool: &str, tally: &Tally) {
        self.calls += tally.calls;
        self.errors += tally.errors;
        self.saved.add(tally.saved);
        if let Some(&i) = self.slot.get(hour) {
            self.series[i].calls += tally.calls;
            self.series[i].errors += tally.errors;
            self.series[i].saved_tokens += tally.saved.tokens;
            self.series[i].kept_bytes += tally.saved.bytes;
        }
        if !tool.is_empty() {
            self.tools.entry(tool.to_string()).or_default().merge(tally);
        }
        if project != 0 {
            self.projects.entry(project).or_default().merge(tally);
        }
    }

    fn finish(self) -> Usage {
        Usage {
            range: self.range,
            since: self.since,
            calls: self.calls,
            errors: self.errors,
            saved_tokens: self.saved.tokens,
            kept_bytes: self.saved.bytes,
            series: self.series,
            tools: by_calls(self.tools),
            projects: by_calls(self.projects.into_iter().map(|(id, t)| (id.to_string(), t)).collect()),
        }
    }
}

/// Folds audit rows (`SELECT bucket, project_id, tool_key, outcome,
/// latency_ms, saved_tokens, kept_bytes`) into `summary`.
fn add_rows(summary: &mut Summary, rows: &[Row]) -> Result<(), Error> {
    for r in rows.iter().filter(|r| r.text(3) != Outcome::Started.as_str()) {
        summary.add(Seen {
            bucket: r.text(0),
            project: r.get(1)?,
            tool: Some(r.text(2)).filter(|t| !t.is_empty()),
            outcome: r.text(3),
            latency_ms: r.get::<i64>(4)?.max(0) as u64,
            saved: saved_at(r, 5)?,
        });
    }
    Ok(())
}

/// The savings in columns `at` and `at + 1` of an audit or rollup row.
fn saved_at(r: &Row, at: usize) -> Result<Saved, Error> {
    Ok(Saved {
        tokens: r.get::<Option<i64>>(at)?.unwrap_or(0),
        bytes: r.get::<Option<i64>>(at + 1)?.unwrap_or(0),
    })
}

/// Rolls up to [`ROLLUP_BATCH`] audit rows past the watermark into
/// `usage_hours`, in one transaction; says how many.
fn roll_up(tx: &dyn Sql) -> Result<usize, Error> {
    // Locks the watermark: a second rollup waits and then reads the new one.
    let through: i64 = tx.one(
        "UPDATE usage_rolled SET through = through WHERE id = 1 RETURNING through",
        &[],
        |r| r.get(0),
    )?;
    let mut groups: HashMap<(String, i64, String), Tally> = HashMap::new();
    let found = tx.query(
        "SELECT id, substr(at, 1, 13), coalesce(project_id, 0), coalesce(tool_key, ''), outcome, latency_ms,
                saved_tokens, kept_bytes
         FROM audit_log WHERE id > ?1 ORDER BY id LIMIT ?2",
        args![through, ROLLUP_BATCH],
    )?;
    let mut last = through;
    for r in &found {
        last = r.get(0)?;
        // A call still running (or cut off by a crash) is no usage yet; its
        // outcome comes as a row of its own.
        if r.text(4) == Outcome::Started.as_str() {
            continue;
        }
        let key = (r.get(1)?, r.get(2)?, r.get(3)?);
        groups
            .entry(key)
            .or_default()
            .add(r.text(4), r.get::<i64>(5)?.max(0) as u64, saved_at(r, 6)?);
    }
    for ((hour, project, tool), mut tally) in groups {
        let before = tx.row(
            "SELECT calls, errors, timeouts, latencies, saved_tokens, kept_bytes FROM usage_hours
             WHERE hour = ?1 AND project_id = ?2 AND tool_key = ?3",
            args![hour, project, tool],
            |r| {
                Ok(Tally {
                    calls: r.get::<i64>(0)?.max(0) as u64,
                    errors: r.get::<i64>(1)?.max(0) as u64,
                    timeouts: r.get::<i64>(2)?.max(0) as u64,
                    latencies: Histogram::decode(&r.get::<Vec<u8>>(3)?),
                    saved: saved_at(r, 4)?,
                })
            },
        )?;
        if let Some(before) = before {
            tally.merge(&before);
        }
        tx.execute(
            "INSERT INTO usage_hours (hour, project_id, tool_key, calls, errors, timeouts, latencies, saved_tokens, kept_bytes)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
             ON CONFLICT (hour, project_id, tool_key) DO UPDATE SET calls = excluded.calls,
                 errors = excluded.errors, timeouts = excluded.timeouts, latencies = excluded.latencies,
                 saved_tokens = excluded.saved_tokens, kept_bytes = excluded.kept_bytes",
            args![
                hour,
                project,
                tool,
                tally.calls,
                tally.errors,
                tally.timeouts,
                tally.latencies.encode(),
                tally.saved.tokens,
                tally.saved.bytes
            ],
        )?;
    }
    tx.execute("UPDATE usage_rolled SET through = ?1", args![last])?;
    Ok(found.len())
}

impl Store {
    /// Usage over `range` up to `now`, of one project or all, one tool or all.
    pub fn usage(
        &self,
        range: UsageRange,
        project_id: Option<i64>,
        tool: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Usage, Error> {
        let mut summary = Summary::new(range, now);
        let since = summary.since.clone();
        // A connection of its own, and one snapshot: the rollups and the
        // fresh rows agree on where one ends and the other begins.
        self.engine.another()?.snapshot(|tx| {
        if range == UsageRange::Hour {
            // Every column comes from the covering index `audit_by_time`.
            let rows = tx.query(
                "SELECT substr(at, 1, 16), project_id, tool_key, outcome, latency_ms, saved_tokens, kept_bytes
                 FROM audit_log INDEXED BY audit_by_time
                 WHERE at >= ?1 AND (CAST(?2 AS BIGINT) IS NULL OR project_id = ?2) AND (CAST(?3 AS TEXT) IS NULL OR tool_key = ?3)",
                args![since, project_id, tool],
            )?;
            add_rows(&mut summary, &rows)?;
        } else {
            let through: i64 = tx.one("SELECT through FROM usage_rolled", &[], |r| r.get(0))?;
            let since_hour = &since[..13];
            let rolled = tx.query(
                "SELECT hour, project_id, tool_key, calls, errors, timeouts, latencies, saved_tokens, kept_bytes FROM usage_hours
                 WHERE hour >= ?1 AND (CAST(?2 AS BIGINT) IS NULL OR project_id = ?2) AND (CAST(?3 AS TEXT) IS NULL OR tool_key = ?3)",
                args![since_hour, project_id, tool],
            )?;
            for r in &rolled {
                let tally = Tally {
                    calls: r.get::<i64>(3)?.max(0) as u64,
                    errors: r.get::<i64>(4)?.max(0) as u64,
                    timeouts: r.get::<i64>(5)?.max(0) as u64,
                    latencies: Histogram::decode(&r.get::<Vec<u8>>(6)?),
                    saved: saved_at(r, 7)?,
                };
                summary.add_rolled(r.text(0), r.get(1)?, r.text(2), &tally);
            }
            // The rows not rolled up yet: the newest, found by id (NOT
            // INDEXED: through the time index this would read the whole range).
            let fresh = tx.query(
                "SELECT substr(at, 1, 13), project_id, tool_key, outcome, latency_ms, saved_tokens, kept_bytes
                 FROM audit_log NOT INDEXED
                 WHERE id > ?3 AND at >= ?1 AND (CAST(?2 AS BIGINT) IS NULL OR project_id = ?2) AND (CAST(?4 AS TEXT) IS NULL OR tool_key = ?4)",
                args![since, project_id, through, tool],
            )?;
            add_rows(&mut summary, &fresh)?;
        }
        Ok(())
        })?;
        Ok(summary.finish())
    }

    /// Rolls every audit row not rolled up yet into the hourly usage, a
    /// batch per transaction, on a connection of its own; says how many.
    pub fn roll_up_usage(&self) -> Result<usize, Error> {
        let engine = self.engine.another()?;
        let mut total = 0;
        loop {
            let rows = engine.transaction(roll_up)?;
            total += rows;
            if (rows as i64) < ROLLUP_BATCH {
                return Ok(total);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_end_at_now_and_name_their_prefix() {
        let now = DateTime::parse_from_rfc3339("2026-11-25T06:34:22.5Z").unwrap().to_utc();
        let (first, names) = bucket_names(UsageRange::Hour, now);
        assert_eq!(names.len(), 60);
        assert_eq!(names.last().unwrap(), "2026-11-25T06:34");
        assert_eq!(names[0], "2026-11-25T05:35");
        assert_eq!(first.to_rfc3339(), "2026-11-25T05:35:00+00:00");
        let (_, names) = bucket_names(UsageRange::Week, now);
        assert_eq!((names.len(), names[0].as_str()), (168, "2026-11-18T07"));
    }

    #[test]
    fn usage_counts_errors_timeouts_and_latency_per_tool_and_project() {
        let now = DateTime::parse_from_rfc3339("2026-11-25T06:34:22Z").unwrap().to_utc();
        let row = |bucket, project, tool, outcome, latency_ms| Seen {
            bucket,
            project,
            tool,
            outcome,
            latency_ms,
            saved: Saved::default(),
        };
        let mut summary = Summary::new(UsageRange::Hour, now);
        let discovery = Seen {
            saved: Saved { tokens: 900, bytes: 0 },
            ..row("2026-11-25T06:33", Some(2), None, "ok", 1)
        };
        let script = Seen {
            saved: Saved { tokens: 0, bytes: 4096 },
            ..row("2026-11-25T06:34", Some(1), None, "ok", 30)
        };
        for seen in [
            row("2026-11-25T06:34", Some(1), Some("a:x"), "ok", 10),
            row("2026-11-25T06:34", Some(1), Some("a:x"), "timeout", 900),
            row("2026-11-25T06:33", Some(2), Some("a:y"), "tool_error", 5),
            discovery,
            script,
        ] {
            summary.add(seen);
        }
        let usage = summary.finish();
        assert_eq!((usage.calls, usage.errors), (5, 2));
        assert_eq!((usage.saved_tokens, usage.kept_bytes), (900, 4096));
        assert_eq!(usage.series.iter().map(|b| b.calls).sum::<u64>(), 5);
        assert_eq!(
            usage.series[59],
            Bucket {
                start: "2026-11-25T06:34".into(),
                calls: 3,
                errors: 1,
                saved_tokens: 0,
                kept_bytes: 4096
            }
        );
        let by_project = |id: &str| usage.projects.iter().find(|p| p.name == id).unwrap();
        assert_eq!((by_project("2").saved_tokens, by_project("1").kept_bytes), (900, 4096));
        let x = &usage.tools[0];
        assert_eq!(
            (x.name.as_str(), x.calls, x.errors, x.timeouts, x.p50_ms, x.p95_ms),
            ("a:x", 2, 1, 1, 10, 959)
        );
        assert_eq!(usage.projects.len(), 2);
        assert_eq!(by_project("2").calls, 2);
    }

    crate::each_engine!(the_store_reads_only_the_window_and_counts_each_row_once);
    fn the_store_reads_only_the_window_and_counts_each_row_once((_dir, s): crate::TestStore) {
        let now = Utc::now();
        let insert = |ago: Duration, outcome: &str| {
            let at = (now - ago).to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            s.with(|c| {
                c.execute(
                    "INSERT INTO audit_log (at, request_id, project_id, meta_tool, tool_key, outcome, latency_ms)
                     VALUES (?1, ?3, 1, 'tool_execute', 'a:x', ?2, 3)",
                    args![at, outcome, format!("r-{at}-{outcome}")],
                )
            })
            .unwrap();
        };
        insert(Duration::minutes(5), "ok");
        insert(Duration::hours(3), "failed");
        insert(Duration::days(3), "ok");
        s.with(|c| {
            c.execute(
                "UPDATE audit_log SET saved_tokens = 700, kept_bytes = 50 WHERE outcome = 'failed'",
                &[],
            )
        })
        .unwrap();
        assert_eq!(s.usage(UsageRange::Hour, None, None, now).unwrap().calls, 1);
        let day = s.usage(UsageRange::Day, Some(1), None, now).unwrap();
        assert_eq!((day.calls, day.errors), (2, 1));
        assert_eq!(s.usage(UsageRange::Day, Some(2), None, now).unwrap().calls, 0);

        // Rolled up, then more rows (one of them late, for an hour already
        // rolled up): the rollups and the fresh rows each count once.
        assert_eq!(s.roll_up_usage().unwrap(), 3);
        insert(Duration::minutes(1), "timeout");
        insert(Duration::hours(3), "ok");
        let week = s.usage(UsageRange::Week, None, None, now).unwrap();
        assert_eq!((week.calls, week.errors), (5, 2));
        assert_eq!(week.tools[0].timeouts, 1);
        assert_eq!(s.roll_up_usage().unwrap(), 2);
        assert_eq!(s.roll_up_usage().unwrap(), 0);
        let again = s.usage(UsageRange::Week, None, None, now).unwrap();
        assert_eq!(again, week);
        assert_eq!((again.saved_tokens, again.kept_bytes), (700, 50), "savings roll up too");
        assert_eq!(again.projects[0].name, "1");
        assert_eq!(s.usage(UsageRange::Day, None, None, now).unwrap().calls, 4);
        assert_eq!(s.usage(UsageRange::Week, None, Some("a:x"), now).unwrap().calls, 5);
        assert_eq!(s.usage(UsageRange::Week, None, Some("a:y"), now).unwrap().calls, 0);
        assert_eq!(s.usage(UsageRange::Hour, Some(1), Some("a:x"), now).unwrap().calls, 2);
    }
}
