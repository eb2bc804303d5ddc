//! What the console's usage view costs on a big audit log: one million
//! `tool_execute` rows spread over the last week (the week's range holds all
//! of them: the worst case), over 40 tools and 8 projects. The hour is read
//! from the rows (covering index on time), the day and week from the hourly
//! rollups, measured here with nothing rolled up (every row read) and after
//! the roll-up the gateway runs each minute (also timed).
//! Run: `cargo bench --bench console`.

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_gateway::outcome::Outcome;
use mcp_gateway::store::{self, Store, UsageRange};

const ROWS: u32 = 1_000_000;

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("bench.db")).unwrap();
    for p in 0..8 {
        store.create_project(&format!("p{p}"), None).unwrap();
    }
    let now = chrono::Utc::now();
    let week = Duration::from_secs(7 * 24 * 3600).as_millis() as u64;
    let filled = Instant::now();
    rt.block_on(async {
        for i in 0..ROWS {
            let mut row = store::audit_row(&format!("{i:016x}"), "tool_execute");
            let ago = chrono::Duration::milliseconds((u64::from(i) * week / u64::from(ROWS)) as i64);
            row.at = (now - ago).to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            row.project_id = Some(i64::from(i % 8 + 1));
            row.tool_key = Some(format!("server{}:tool{}", i % 5, i % 40));
            row.outcome = if i % 50 == 0 { Outcome::ToolError } else { Outcome::Ok };
            row.latency_ms = u64::from(i % 300);
            store.audit(row).await;
        }
    });
    store.close();
    let store = Store::open(&dir.path().join("bench.db")).unwrap();
    eprintln!("{ROWS} audit rows written in {:.1} s", filled.elapsed().as_secs_f64());

    let mut group = c.benchmark_group("usage");
    group.sample_size(10);
    group.bench_function("week, nothing rolled up", |b| {
        b.iter(|| store.usage(UsageRange::Week, None, None, chrono::Utc::now()).unwrap());
    });
    let rolled = Instant::now();
    let rows = store.roll_up_usage().unwrap();
    eprintln!("{rows} rows rolled up in {:.2} s", rolled.elapsed().as_secs_f64());
    for (name, range) in [
        ("hour", UsageRange::Hour),
        ("day", UsageRange::Day),
        ("week", UsageRange::Week),
    ] {
        let calls = store.usage(range, None, None, chrono::Utc::now()).unwrap().calls;
        eprintln!("{name}: {calls} calls in range");
        group.bench_function(format!("{name}, all projects"), |b| {
            b.iter(|| store.usage(range, None, None, chrono::Utc::now()).unwrap());
        });
    }
    group.bench_function("week, one project", |b| {
        b.iter(|| {
            store
                .usage(UsageRange::Week, Some(3), None, chrono::Utc::now())
                .unwrap()
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
