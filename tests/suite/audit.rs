//! The audit log's guarantee, end to end with the real binary on a real
//! SQLite file: every answered call has its row, under load, behind a locked
//! store, on a full disk, and across a crash in mid-call.

use crate::common;

use std::time::Duration;

use common::projects::*;
use common::*;
use serde_json::{Value, json};

#[tokio::test]
async fn every_call_is_audited_under_concurrent_load() {
    const CLIENTS: usize = 8;
    const CALLS: usize = 200;
    let (mut gw, t1, _) = two_projects().await;
    let warmup = gw.client_with_token(&t1).await.unwrap();
    wait_ready(&warmup, "red:calculate").await;
    warmup.cancel().await.unwrap();
    let store = gw.dir.path().join("mcp-gateway.db");
    let before = settled_rows(&store).await;

    let mut tasks = Vec::new();
    for c in 0..CLIENTS {
        let client = gw.client_with_token(&t1).await.unwrap();
        tasks.push(tokio::spawn(async move {
            for i in 0..CALLS {
                let r = if i % 2 == 0 {
                    execute(&client, "red:calculate", json!({"expression": format!("{c}+{i}")})).await
                } else {
                    call(&client, "tool_discovery", json!({"query": "hash"})).await
                };
                assert_ne!(r.is_error, Some(true));
            }
            client.cancel().await.unwrap();
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    gw.stop().await;
    let after = count_rows(&store);
    assert_eq!(
        after - before,
        (CLIENTS * CALLS) as i64,
        "one audit row per call, none lost"
    );

    let conn = rusqlite::Connection::open(&store).unwrap();
    let (outcome, project, token, key): (String, i64, i64, String) = conn
        .query_row(
            "SELECT outcome, project_id, token_id, tool_key FROM audit_log WHERE meta_tool = 'tool_execute' ORDER BY id DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!((outcome.as_str(), key.as_str()), ("ok", "red:calculate"));
    assert!(project > 0 && token > 0);
    let counted: i64 = conn
        .query_row(
            "SELECT count(*) FROM audit_log WHERE meta_tool = 'tool_discovery' AND result_count > 0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(counted >= (CLIENTS * CALLS / 2) as i64);
}

/// Best-effort audit: a store another process has locked delays rows, and
/// calls go on (strict audit refuses them, as on a full disk).
#[tokio::test]
async fn a_locked_store_delays_audit_rows_but_loses_none() {
    // The writer's retry is told only by its log line, from a thread of
    // its own: the binary's log has it.
    let gw = Gateway::spawn(&format!("[store]\naudit = \"best_effort\"\n{}", config())).await;
    let (t1, _) = grant_two_projects(&gw);
    let client = gw.client_with_token(&t1).await.unwrap();
    wait_ready(&client, "red:calculate").await;
    let store = gw.dir.path().join("mcp-gateway.db");
    let executes = |store: &std::path::Path| {
        let conn = rusqlite::Connection::open(store).unwrap();
        conn.query_row(
            "SELECT count(*) FROM audit_log WHERE meta_tool = 'tool_execute'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .unwrap()
    };
    let before = executes(&store);

    // Another process holds the write lock longer than the writer's busy timeout (5 s).
    let locker = rusqlite::Connection::open(&store).unwrap();
    locker.execute_batch("BEGIN EXCLUSIVE").unwrap();
    for i in 0..10 {
        let r = execute(&client, "red:calculate", json!({"expression": format!("{i}*2")})).await;
        assert_eq!(
            r.structured_content.unwrap()["result"],
            f64::from(i * 2),
            "calls are answered meanwhile"
        );
    }
    gw.wait_log("audit write failed; retrying", Duration::from_secs(15))
        .await
        .unwrap_or_else(|| panic!("the writer never met the lock:\n{}", gw.log()));
    locker.execute_batch("COMMIT").unwrap();
    drop(locker);
    eventually(Duration::from_secs(15), "the held-back audit rows", || async {
        (executes(&store) - before >= 10).then_some(())
    })
    .await;
    assert_eq!(executes(&store) - before, 10, "each call once");
}

/// A small tmpfs, unmounted when dropped. Mounting needs root, which CI is.
struct SmallDisk(tempfile::TempDir);

impl SmallDisk {
    fn mount(size: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let status = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(status.success(), "mount -t tmpfs failed");
        Self(dir)
    }

    /// Writes zeros into `name` until the disk is full.
    fn fill(&self, name: &str) -> std::path::PathBuf {
        use std::io::Write;
        let path = self.0.path().join(name);
        let mut file = std::fs::File::create(&path).unwrap();
        while file.write_all(&[0; 4096]).is_ok() {}
        let _ = file.sync_all();
        path
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.0.path())
            .status();
    }
}

fn running_as_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

#[tokio::test]
#[ignore = "full tier: needs root, to mount a small tmpfs (CI runs as root)"]
async fn a_full_disk_delays_audit_rows_but_loses_none() {
    full_disk(false).await;
}

/// With strict audit (the default), a call on a full disk is refused before
/// its server is called, saying why; the store back, calls run again, and
/// every answered call has its one row.
#[tokio::test]
#[ignore = "full tier: needs root, to mount a small tmpfs (CI runs as root)"]
async fn a_full_disk_refuses_calls_under_strict_audit_and_loses_nothing_answered() {
    full_disk(true).await;
}

async fn full_disk(strict: bool) {
    assert!(
        running_as_root(),
        "mounting a small tmpfs for the store needs root (CI runs as root)"
    );
    let disk = SmallDisk::mount("4m");
    let store = disk.0.path().join("mcp-gateway.db");
    let mode = if strict { "strict" } else { "best_effort" };
    let gw = Gateway::start(&format!(
        "[store]\npath = \"{}\"\naudit = \"{mode}\"\n{ANONYMOUS}{}",
        store.display(),
        chaos_server("red", "")
    ))
    .await;
    let client = gw.client().await;
    wait_for_tool(&client, "red:calculate").await;
    let executes = || {
        let conn = rusqlite::Connection::open(&store).unwrap();
        conn.query_row(
            "SELECT count(*) FROM audit_log WHERE tool_key = 'red:calculate' AND outcome = 'ok'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .unwrap()
    };

    let filler = disk.fill("filler");
    // Best effort: calls are answered while the writer cannot grow the
    // database. Strict: they are refused, the audit log named, nothing run.
    let mut calls: i32 = 0;
    let mut refused: i64 = 0;
    while readyz_status(&gw).await.0 != 503 || (strict && refused == 0) {
        assert!(i64::from(calls) + refused < 2000, "the store never ran out of space");
        let r = execute(&client, "red:calculate", json!({"expression": format!("{calls}+1")})).await;
        if r.is_error == Some(true) {
            assert!(strict, "best effort answers on a full disk: {r:?}");
            assert_eq!(error_code(&r), "AUDIT_UNAVAILABLE", "{r:?}");
            assert!(
                text(&r).contains("audit log") && text(&r).contains("nothing ran"),
                "{}",
                text(&r)
            );
            refused += 1;
            continue;
        }
        assert_eq!(
            r.structured_content.unwrap()["result"],
            f64::from(calls + 1),
            "answered"
        );
        calls += 1;
    }
    for _ in 0..10 {
        let r = execute(&client, "red:calculate", json!({"expression": "1+1"})).await;
        if strict {
            assert_eq!(
                error_code(&r),
                "AUDIT_UNAVAILABLE",
                "refused while the disk is full: {r:?}"
            );
            refused += 1;
        } else {
            assert_eq!(r.is_error, Some(false), "{r:?}");
            calls += 1;
        }
    }
    // The store still answers reads, but a replica that cannot write its
    // audit log is not ready, and says why (from the writer's next failed
    // try: on a loaded machine the last one may be a moment old).
    let ready = eventually(
        Duration::from_secs(10),
        "/readyz to say the audit writes fail",
        || async {
            let (status, ready) = readyz_status(&gw).await;
            (status == 503).then_some(ready)
        },
    )
    .await;
    let reason = ready["store"].as_str().unwrap();
    assert!(
        reason.contains("audit writes failing") && reason.contains("full"),
        "{ready}"
    );

    std::fs::remove_file(filler).unwrap();
    if strict {
        // Back: calls run and are answered again, each with its row.
        eventually(Duration::from_secs(20), "calls run again", || async {
            let r = execute(&client, "red:calculate", json!({"expression": format!("{calls}+1")})).await;
            (r.is_error != Some(true)).then_some(())
        })
        .await;
        calls += 1;
        // The server ran exactly the answered calls: none of the refused ones.
        let stats = execute(&client, "red:stats", json!({})).await;
        assert_eq!(
            stats.structured_content.unwrap()["calls"],
            json!(calls),
            "calls the server received"
        );
        // The refused calls' rows arrive too, as failed, and none is left `started`.
        eventually(Duration::from_secs(20), "the refusals' rows", || async {
            let conn = rusqlite::Connection::open(&store).unwrap();
            let count = |outcome: &str| {
                conn.query_row(
                    "SELECT count(*) FROM audit_log WHERE tool_key = 'red:calculate' AND outcome = ?1",
                    [outcome],
                    |r| r.get::<_, i64>(0),
                )
                .unwrap()
            };
            (count("failed") == refused && count("started") == 0).then_some(())
        })
        .await;
    }
    eventually(Duration::from_secs(20), "the held-back audit rows", || async {
        (executes() >= i64::from(calls)).then_some(())
    })
    .await;
    assert_eq!(executes(), i64::from(calls), "each answered call once");
    let (status, ready) = readyz_status(&gw).await;
    assert_eq!((status, &ready["store"]), (200, &json!("ok")), "{ready}");
}

/// `GET /readyz`: its status code and body.
async fn readyz_status(gw: &Gateway) -> (u16, Value) {
    let r = reqwest::get(gw.url.replace("/mcp", "/readyz")).await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

/// The audit row count once the writer has caught up: rows are written a
/// moment after their answers, so the count must hold still.
async fn settled_rows(store: &std::path::Path) -> i64 {
    let mut last = count_rows(store);
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = count_rows(store);
        if now == last {
            return now;
        }
        last = now;
    }
}

fn count_rows(store: &std::path::Path) -> i64 {
    let conn = rusqlite::Connection::open(store).unwrap();
    conn.query_row("SELECT count(*) FROM audit_log", [], |r| r.get(0))
        .unwrap()
}

/// A gateway killed during a call leaves its trace: the call's `started` row
/// was durable before its server was called, and `audit` and the console
/// show it as started, with no outcome.
#[tokio::test]
async fn a_call_cut_off_by_a_crash_is_visible_as_started() {
    let store_dir = tempfile::tempdir().unwrap();
    let store = store_dir.path().join("mcp-gateway.db");
    let config = format!(
        "[store]\npath = \"{}\"\n{ANONYMOUS}{}",
        store.display(),
        chaos_server("red", "timeout_ms = 60000")
    );
    let mut gw = Gateway::spawn(&config).await;
    let client = gw.client().await;
    wait_for_tool(&client, "red:sleep").await;
    let call = tokio::spawn(async move {
        let _ = execute(&client, "red:sleep", json!({"ms": 30000})).await;
    });
    let started = || {
        let conn = rusqlite::Connection::open(&store).unwrap();
        conn.query_row(
            "SELECT request_id FROM audit_log WHERE tool_key = 'red:sleep' AND outcome = 'started'",
            [],
            |r| r.get::<_, String>(0),
        )
        .ok()
    };
    let request_id = eventually(Duration::from_secs(10), "the started row", || async { started() }).await;
    signal(gw.pid(), nix::sys::signal::Signal::SIGKILL);
    let _ = gw.terminate().await;
    call.abort();

    let audit = gw.cli(&["audit", "tail", "-n", "5"]);
    let audit = String::from_utf8(audit.stdout).unwrap();
    let line = audit
        .lines()
        .find(|l| l.contains(&request_id))
        .unwrap_or_else(|| panic!("{audit}"));
    assert!(line.contains("started") && line.contains("red:sleep"), "{line}");

    // The console of a gateway on the same store lists it.
    let again = Gateway::spawn(&config).await;
    let admin = String::from_utf8(again.cli(&["token", "issue", "--admin", "--json"]).stdout).unwrap();
    let admin: Value = serde_json::from_str(&admin).unwrap();
    let overview: Value = reqwest::Client::new()
        .get(again.url.replace("/mcp", "/console/api/overview"))
        .bearer_auth(admin["token"].as_str().unwrap())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let listed = overview["startedCalls"].as_array().unwrap();
    assert!(
        listed
            .iter()
            .any(|c| c["requestId"] == request_id.as_str() && c["toolKey"] == "red:sleep"),
        "{overview}"
    );
    assert_eq!(overview["audit"], "strict");
}

/// Strict audit on SQLite makes a row durable in the journal, not in the
/// store: a gateway killed after answering, while the store took no rows,
/// loses none of them. The next start replays the journal, one row per call.
#[tokio::test]
async fn an_answered_calls_row_outlives_a_crash_in_the_journal() {
    let store_dir = tempfile::tempdir().unwrap();
    let store = store_dir.path().join("mcp-gateway.db");
    let config = format!(
        "[store]\npath = \"{}\"\n{ANONYMOUS}{}",
        store.display(),
        chaos_server("red", "")
    );
    let mut gw = Gateway::spawn(&config).await;
    let client = gw.client().await;
    wait_for_tool(&client, "red:calculate").await;
    let db = refuse_audit_rows(&store);
    let r = execute(&client, "red:calculate", json!({"expression": "6*7"})).await;
    assert!(text(&r).contains("42"), "answered: {}", text(&r));
    let outcomes = || -> Vec<String> {
        db.prepare("SELECT outcome FROM audit_log WHERE tool_key = 'red:calculate'")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert!(outcomes().is_empty(), "the store took no row");
    signal(gw.pid(), nix::sys::signal::Signal::SIGKILL);
    let _ = gw.terminate().await;
    db.execute_batch("DROP TRIGGER refuse_rows").unwrap();

    // The journal is replayed before the gateway listens.
    let _again = Gateway::spawn(&config).await;
    assert_eq!(outcomes(), ["ok"], "one row, with the call's outcome");
}

/// Issue 41: ten calls with a 1 MB `toolKey` wrote 10 MB of audit rows. A
/// key over its bound is refused before its row is built, and the rows stay
/// small.
#[tokio::test]
async fn megabyte_keys_leave_small_audit_rows() {
    let (gw, t1, _) = two_projects().await;
    let client = gw.client_with_token(&t1).await.unwrap();
    wait_ready(&client, "red:calculate").await;
    for i in 0..10 {
        let key = format!("red:{i}{}", "k".repeat(1 << 20));
        let r = execute(&client, &key, json!({})).await;
        assert_eq!(error_code(&r), "INVALID_ARGUMENTS", "{}", text(&r));
        assert!(serde_json::to_string(&r).unwrap().len() < 4096);
    }
    gw.audit_folded().await;
    let conn = rusqlite::Connection::open(gw.dir.path().join("mcp-gateway.db")).unwrap();
    let (refused, stored): (i64, i64) = conn
        .query_row(
            "SELECT count(*), coalesce(sum(length(tool_key)), 0) FROM audit_log
             WHERE meta_tool = 'tool_execute' AND outcome = 'failed'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(refused, 10, "each refusal has its row");
    assert_eq!(stored, 0, "and none keeps the key");
}

/// Issue #75: every change an operator makes from the command line is in
/// `audit actions`, naming what it changed and never a secret's value.
#[tokio::test]
async fn every_operator_change_is_in_the_admin_log() {
    let gw = Gateway::start(&chaos_server("team", "")).await;
    let value = "value-never-logged-5d1e";
    for args in [
        &["project", "create", "ops"][..],
        &["grant", "--project", "ops", "--server", "team"],
        &["project", "set-exposure", "ops", "both"],
        &["project", "set-apps", "ops", "unlisted"],
        &["project", "reset-learning", "ops"],
        &[
            "secret",
            "set",
            "--project",
            "ops",
            "--server",
            "team",
            "--env",
            &format!("TEAM_KEY={value}"),
        ],
        &[
            "secret",
            "remove",
            "--project",
            "ops",
            "--server",
            "team",
            "--env",
            "TEAM_KEY",
        ],
    ] {
        gw.cli(args);
    }
    let printed = gw.cli(&["audit", "actions", "--json"]);
    assert!(!String::from_utf8_lossy(&printed.stdout).contains(value));
    let actions: Value = serde_json::from_slice(&printed.stdout).unwrap();
    let actions: Vec<(&str, &str, Option<&str>)> = actions
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            assert_eq!(a["actor"], "cli", "{a}");
            (
                a["action"].as_str().unwrap(),
                a["target"].as_str().unwrap(),
                a["detail"].as_str(),
            )
        })
        .collect();
    for want in [
        ("project.create", "project ops", Some("hybrid")),
        ("grant", "project ops, server team", None),
        ("project.exposure", "project ops", Some("both")),
        ("project.apps", "project ops", Some("unlisted")),
        ("project.reset-learning", "project ops", None),
        ("secret.set", "project ops, server team", Some("env TEAM_KEY")),
        ("secret.remove", "project ops, server team", Some("env TEAM_KEY")),
    ] {
        assert!(actions.contains(&want), "{want:?} in {actions:?}");
    }
}
