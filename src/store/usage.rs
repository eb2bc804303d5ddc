//! Usage from the audit log for the operator console: calls over time, and
//! per tool and per project the calls, error and timeout rates and latency
//! percentiles, over the last hour, day or week. The range is always bounded
//! and read through a covering index on time (migration 0011), so the
//! query reads only the window's index entries, never the table.

use std::collections::HashMap;

use chrono::{DateTime, Duration, DurationRound, Utc};
use rusqlite::params;
use serde::Serialize;

use super::{Error, Store};

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
}

/// Counts and latencies of one group.
#[derive(Default)]
struct Tally {
    calls: u64,
    errors: u64,
    timeouts: u64,
    latencies: Vec<u32>,
}

impl Tally {
    fn add(&mut self, outcome: &str, latency_ms: u64) {
        self.calls += 1;
        self.errors += u64::from(outcome != "ok");
        self.timeouts += u64::from(outcome == "timeout");
        self.latencies.push(u32::try_from(latency_ms).unwrap_or(u32::MAX));
    }

    fn row(mut self, name: String) -> UsageRow {
        self.latencies.sort_unstable();
        UsageRow {
            name,
            calls: self.calls,
            errors: self.errors,
            timeouts: self.timeouts,
            p50_ms: percentile(&self.latencies, 50),
            p95_ms: percentile(&self.latencies, 95),
        }
    }
}

/// The nearest-rank `p`th percentile of sorted values (0 for none).
fn percentile(sorted: &[u32], p: usize) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    u64::from(sorted[rank - 1])
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
                })
                .collect(),
            calls: 0,
            errors: 0,
            tools: HashMap::new(),
            projects: HashMap::new(),
        }
    }

    fn add(&mut self, row: Seen<'_>) {
        let failed = row.outcome != "ok";
        self.calls += 1;
        self.errors += u64::from(failed);
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
        }
        if let Some(tool) = row.tool {
            let tally = match self.tools.get_mut(tool) {
                Some(t) => t,
                None => self.tools.entry(tool.to_string()).or_default(),
            };
            tally.add(row.outcome, row.latency_ms);
        }
        if let Some(p) = row.project {
            self.projects.entry(p).or_default().add(row.outcome, row.latency_ms);
        }
    }

    fn finish(self) -> Usage {
        Usage {
            range: self.range,
            since: self.since,
            calls: self.calls,
            errors: self.errors,
            series: self.series,
            tools: by_calls(self.tools),
            projects: by_calls(self.projects.into_iter().map(|(id, t)| (id.to_string(), t)).collect()),
        }
    }
}

impl Store {
    /// Usage over `range` up to `now`, of one project or all.
    pub fn usage(&self, range: UsageRange, project_id: Option<i64>, now: DateTime<Utc>) -> Result<Usage, Error> {
        let mut summary = Summary::new(range, now);
        self.with(|c| {
            // Every column comes from the covering index `audit_by_time`.
            let mut stmt = c.prepare_cached(
                "SELECT substr(at, 1, ?3), project_id, tool_key, outcome, latency_ms FROM audit_log
                 INDEXED BY audit_by_time
                 WHERE at >= ?1 AND (?2 IS NULL OR project_id = ?2)",
            )?;
            let mut rows = stmt.query(params![summary.since, project_id, range.bucket_chars() as i64])?;
            while let Some(r) = rows.next()? {
                let text = |i| r.get_ref(i).map(|v| v.as_str_or_null().ok().flatten());
                summary.add(Seen {
                    bucket: text(0)?.unwrap_or_default(),
                    project: r.get(1)?,
                    tool: text(2)?,
                    outcome: text(3)?.unwrap_or_default(),
                    latency_ms: r.get::<_, i64>(4)?.max(0) as u64,
                });
            }
            Ok(())
        })?;
        Ok(summary.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        assert_eq!(percentile(&[], 50), 0);
        assert_eq!(percentile(&[7], 95), 7);
        let v: Vec<u32> = (1..=100).collect();
        assert_eq!(percentile(&v, 50), 50);
        assert_eq!(percentile(&v, 95), 95);
        assert_eq!(percentile(&[1, 2, 3], 50), 2);
    }

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
        };
        let mut summary = Summary::new(UsageRange::Hour, now);
        for seen in [
            row("2026-11-25T06:34", Some(1), Some("a:x"), "ok", 10),
            row("2026-11-25T06:34", Some(1), Some("a:x"), "timeout", 900),
            row("2026-11-25T06:33", Some(2), Some("a:y"), "tool_error", 5),
            row("2026-11-25T06:33", Some(2), None, "ok", 1),
        ] {
            summary.add(seen);
        }
        let usage = summary.finish();
        assert_eq!((usage.calls, usage.errors), (4, 2));
        assert_eq!(usage.series.iter().map(|b| b.calls).sum::<u64>(), 4);
        assert_eq!(usage.series[59], Bucket { start: "2026-11-25T06:34".into(), calls: 2, errors: 1 });
        let x = &usage.tools[0];
        assert_eq!((x.name.as_str(), x.calls, x.errors, x.timeouts, x.p50_ms, x.p95_ms), ("a:x", 2, 1, 1, 10, 900));
        assert_eq!(usage.projects.len(), 2);
        assert_eq!(usage.projects.iter().find(|p| p.name == "2").unwrap().calls, 2);
    }

    #[test]
    fn the_store_reads_only_the_window() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&dir.path().join("g.db")).unwrap();
        let now = Utc::now();
        s.with(|c| {
            for (ago, outcome) in [(Duration::minutes(5), "ok"), (Duration::hours(3), "failed")] {
                let at = (now - ago).to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
                c.execute(
                    "INSERT INTO audit_log (at, request_id, project_id, meta_tool, tool_key, outcome, latency_ms)
                     VALUES (?1, 'r', 1, 'tool_execute', 'a:x', ?2, 3)",
                    params![at, outcome],
                )?;
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(s.usage(UsageRange::Hour, None, now).unwrap().calls, 1);
        let day = s.usage(UsageRange::Day, Some(1), now).unwrap();
        assert_eq!((day.calls, day.errors), (2, 1));
        assert_eq!(s.usage(UsageRange::Day, Some(2), now).unwrap().calls, 0);
    }
}
