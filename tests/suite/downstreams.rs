//! Downstream servers as the gateway supervises them, end to end with the
//! real binary: hung, crashed, garbage-writing, flooding, failing and
//! vanishing servers harm nobody else; tool lists follow their changes; and
//! the first calls after start wait for servers still starting.

use crate::common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// Waits until `server`'s calculate tool answers (after a crash, it restarts with backoff).
async fn wait_until_usable(client: &Client, server: &str) {
    let key = format!("{server}:calculate");
    eventually(Duration::from_secs(20), &key, || async {
        let r = execute(client, &key, json!({"expression": "2+2"})).await;
        (r.is_error == Some(false)).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_hung_call_times_out_and_is_cancelled_downstream() {
    let gw = Gateway::start(&two_servers()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "alpha:sleep").await;
    let started = Instant::now();
    let r = execute(&client, "alpha:sleep", json!({"ms": 30000})).await;
    let took = started.elapsed();
    assert_eq!(error_code(&r), "TOOL_EXECUTION_TIMEOUT");
    assert!(text(&r).contains("1500 ms"), "{}", text(&r));
    assert!(took < Duration::from_secs(10), "timed out after {took:?}");
    cancel_reached(&client, "alpha").await;
    // The server is still usable afterwards.
    let r = execute(&client, "alpha:calculate", json!({"expression": "1+1"})).await;
    assert_eq!(r.is_error, Some(false));
}

#[tokio::test]
async fn a_crashed_server_is_reported_and_restarted_while_the_other_serves() {
    let gw = Gateway::start(&two_servers()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "alpha:crash").await;
    wait_for_tool(&client, "beta:calculate").await;

    let r = execute(&client, "alpha:crash", json!({})).await;
    assert_eq!(error_code(&r), "TOOL_EXECUTION_ERROR");
    assert!(text(&r).contains("'alpha'"), "the error names the server: {}", text(&r));

    // beta is untouched, at once.
    let r = execute(&client, "beta:calculate", json!({"expression": "6*7"})).await;
    assert_eq!(r.structured_content.unwrap()["result"], 42.0);

    // alpha comes back with its tools listed again.
    wait_until_usable(&client, "alpha").await;
    assert!(gw.log().contains("downstream server failed"), "{}", gw.log());
    assert!(
        gw.log().contains("crashing on request"),
        "child stderr reaches the log: {}",
        gw.log()
    );
}

#[tokio::test]
async fn garbage_on_a_servers_stdout_harms_nobody_else() {
    let gw = Gateway::start(&two_servers()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "alpha:garbage").await;
    wait_for_tool(&client, "beta:calculate").await;
    let _ = execute(&client, "alpha:garbage", json!({})).await;
    let r = execute(&client, "beta:calculate", json!({"expression": "1+2"})).await;
    assert_eq!(r.structured_content.unwrap()["result"], 3.0);
    wait_until_usable(&client, "alpha").await;
}

#[tokio::test]
async fn a_flood_of_notifications_harms_nobody() {
    let gw = Gateway::start(&two_servers()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "beta:flood").await;
    wait_for_tool(&client, "alpha:calculate").await;
    let flood = execute(&client, "beta:flood", json!({"count": 5000}));
    let steady = async {
        for i in 0..20 {
            let r = execute(&client, "alpha:calculate", json!({"expression": format!("{i}+1")})).await;
            assert_eq!(r.structured_content.unwrap()["result"], f64::from(i + 1));
        }
    };
    let (flooded, ()) = tokio::join!(flood, steady);
    assert_eq!(text(&flooded), "sent 5000 progress notifications", "{flooded:?}");
    let r = execute(&client, "beta:calculate", json!({"expression": "2*21"})).await;
    assert_eq!(
        r.structured_content.unwrap()["result"],
        42.0,
        "the flooder itself still serves"
    );
    wait_for_tool(&client, "beta:calculate").await;
}

#[tokio::test]
async fn http_downstreams_that_fail_drop_or_vanish_harm_nobody_and_are_reconnected() {
    // One that answers 500 to everything, one that drops every connection.
    let failing = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let failing_url = format!("http://{}/mcp", failing.local_addr().unwrap());
    let app = axum::Router::new().fallback(|| async { (http::StatusCode::INTERNAL_SERVER_ERROR, "boom") });
    tokio::spawn(async move { axum::serve(failing, app).await });
    let dropping = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dropping_url = format!("http://{}/mcp", dropping.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((socket, _)) = dropping.accept().await {
            drop(socket);
        }
    });
    let (mut demo, demo_url) = http_demo("127.0.0.1:0", &[]).await;
    let remote =
        |name: &str, url: &str| format!("[[servers]]\nname = \"{name}\"\nurl = \"{url}\"\nconnect_timeout_ms = 3000\n");
    let gw = Gateway::start(&format!(
        "{}{}{}{}",
        two_servers(),
        remote("failing", &failing_url),
        remote("dropping", &dropping_url),
        remote("remote", &demo_url)
    ))
    .await;
    let client = gw.client().await;
    wait_for_tool(&client, "remote:calculate").await;
    wait_for_tool(&client, "beta:calculate").await;

    let base = gw.url.trim_end_matches("/mcp").to_string();
    let ready: Value = eventually(Duration::from_secs(15), "both broken servers failed", || async {
        let body: Value = reqwest::get(format!("{base}/readyz")).await.ok()?.json().await.ok()?;
        let status = |n: &str| {
            body["servers"]
                .as_array()?
                .iter()
                .find(|s| s["name"] == n)
                .map(|s| s["status"].clone())
        };
        (status("failing")? == "failed" && status("dropping")? == "failed").then_some(body)
    })
    .await;
    assert_eq!(ready["store"], "ok");
    // rmcp's HTTP transport does not surface the status of a failed
    // initialize, so the gateway reports the connect timeout it ran into
    // (between attempts: each retry shows the server `connecting` again).
    eventually(
        Duration::from_secs(15),
        "the failing server's connect timeout",
        || async {
            let servers: Value = serde_json::from_slice(&gw.cli(&["servers", "--json"]).stdout).unwrap();
            let failing_row = servers.as_array()?.iter().find(|s| s["name"] == "failing")?.clone();
            failing_row["error"]
                .as_str()?
                .contains("connect_timeout_ms")
                .then_some(())
        },
    )
    .await;

    // The remote server vanishes: calls fail naming it, the rest serve.
    let port = demo_url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    demo.kill().await.unwrap();
    let r = eventually(
        Duration::from_secs(10),
        "a clear error for the vanished server",
        || async {
            let r = execute(&client, "remote:calculate", json!({"expression": "1+1"})).await;
            (r.is_error == Some(true)).then_some(r)
        },
    )
    .await;
    assert!(
        ["TOOL_EXECUTION_ERROR", "TOOL_NOT_FOUND"].contains(&error_code(&r).as_str()),
        "{r:?}"
    );
    let r = execute(&client, "beta:calculate", json!({"expression": "6*7"})).await;
    assert_eq!(r.structured_content.unwrap()["result"], 42.0);

    // It comes back on the same address: the gateway reconnects by itself.
    let (_demo, _) = http_demo(&port, &[]).await;
    eventually(Duration::from_secs(40), "the remote server reconnected", || async {
        let r = execute(&client, "remote:calculate", json!({"expression": "3^2"})).await;
        (r.is_error == Some(false)).then_some(())
    })
    .await;
}

#[tokio::test]
async fn tool_list_changes_downstream_reach_discovery() {
    let gw = Gateway::start(&two_servers()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "alpha:add_tool").await;
    assert!(
        discover(&client, json!("extra_tool"))
            .await
            .iter()
            .all(|r| r["toolKey"] != "alpha:extra_tool")
    );
    let r = execute(&client, "alpha:add_tool", json!({})).await;
    assert_eq!(r.is_error, Some(false));
    wait_for_tool(&client, "alpha:extra_tool").await;
    let r = execute(&client, "alpha:extra_tool", json!({})).await;
    assert_eq!(text(&r), "extra");
}

#[tokio::test]
async fn an_http_servers_tools_are_listed_again_when_their_ttl_runs_out() {
    let (_demo, _gw, client) = gateway_before_http_demo(&[], "tools_ttl_ms = 1000").await;
    // The tool appears without a list_changed: only the TTL can reveal it.
    let r = execute(&client, "remote:add_tool", json!({"silent": true})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let started = Instant::now();
    wait_for_tool(&client, "remote:extra_tool").await;
    assert!(
        started.elapsed() >= Duration::from_millis(200),
        "found before any re-listing"
    );
    assert_eq!(text(&execute(&client, "remote:extra_tool", json!({})).await), "extra");
}

#[tokio::test]
async fn an_expired_http_session_is_opened_again() {
    // A legacy (session) server that forgets a session after 300 ms without requests.
    let (_demo, gw, client) = gateway_before_http_demo(&["--session-idle-ms", "300"], "").await;
    let servers: Value = serde_json::from_slice(&gw.cli(&["servers", "--json"]).stdout).unwrap();
    assert_eq!(servers[0]["protocol"], "2025-11-25", "{servers}");
    for round in 0..3 {
        let r = execute(&client, "remote:calculate", json!({"expression": "6*7"})).await;
        assert_eq!(r.is_error, Some(false), "round {round}: {r:?}");
        assert_eq!(r.structured_content.unwrap()["result"], 42.0);
        tokio::time::sleep(Duration::from_millis(800)).await;
    }
    // Re-opened by the transport: the connection was never given up.
    let ready = gw.readyz().await;
    assert_eq!(ready["servers"][0]["restarts"], 0, "{ready}");
}

#[tokio::test]
async fn a_server_that_cannot_start_is_failed_and_the_rest_serve() {
    let config = format!(
        "{ANONYMOUS}{}[[servers]]\nname = \"ghost\"\ncommand = \"/nonexistent/mcp-server\"\n\n[[servers]]\nname = \"mute\"\ncommand = \"sleep\"\nargs = [\"600\"]\nconnect_timeout_ms = 1000\n",
        chaos_server("alpha", "")
    );
    let gw = Gateway::start(&config).await;
    let client = gw.client().await;
    wait_for_tool(&client, "alpha:calculate").await;
    let ten = Duration::from_secs(10);
    gw.wait_server_error("ghost", "cannot start '/nonexistent/mcp-server'", ten)
        .await;
    gw.wait_server_error("mute", "no answer within 1000 ms", ten).await;
    let r = execute(&client, "alpha:calculate", json!({"expression": "1"})).await;
    assert_eq!(r.is_error, Some(false));
}

#[tokio::test]
async fn http_downstreams_work_like_stdio_ones() {
    // A demo server over streamable HTTP, then a gateway in front of it.
    let (_demo, _gw, client) = gateway_before_http_demo(&[], "timeout_ms = 1000").await;
    let r = execute(&client, "remote:calculate", json!({"expression": "3^2"})).await;
    assert_eq!(r.structured_content.unwrap()["result"], 9.0);
    let r = execute(&client, "remote:sleep", json!({"ms": 20000})).await;
    assert_eq!(error_code(&r), "TOOL_EXECUTION_TIMEOUT");
}

/// A stdio server that takes longer than rmcp's 10 s `server/discover`
/// window to start (npx/uvx fetching a package, docker run, a loaded
/// machine). Before, `initialize` followed the probe down the same pipe, the
/// late answers broke the handshake, and the server restarted forever.
/// Fifty of them start at once.
#[tokio::test]
async fn fifty_slow_starting_stdio_servers_connect_on_their_first_start() {
    let slow = |i: usize| {
        format!(
            "[[servers]]\nname = \"slow{i}\"\ncommand = \"sh\"\nargs = [\"-c\", \"sleep 11; exec '{}' demo-server\"]\nconnect_timeout_ms = 120000\n\n",
            bin()
        )
    };
    let config: String = std::iter::once(ANONYMOUS.to_string())
        .chain((0..50).map(slow))
        .collect();
    let started = Instant::now();
    let gw = Gateway::start(&config).await;
    let readyz = gw.url.replace("/mcp", "/readyz");
    let ready: Value = eventually(Duration::from_secs(110), "every server past connecting", || async {
        let r = reqwest::get(&readyz).await.ok()?;
        (r.status() == 200).then_some(())?;
        r.json().await.ok()
    })
    .await;
    eprintln!("50 slow servers running after {:?}", started.elapsed());
    let servers = ready["servers"].as_array().unwrap();
    let slow: Vec<&Value> = servers
        .iter()
        .filter(|s| s["name"].as_str().unwrap().starts_with("slow"))
        .collect();
    assert_eq!(slow.len(), 50);
    for s in slow {
        assert_eq!(s["status"], "running", "{s}\n{}", gw.log());
        assert_eq!(s["restarts"], 0, "{s}");
    }
    let client = gw.client().await;
    // The catalog is rebuilt off the request path, just after the servers come up.
    wait_for_tool(&client, "slow49:calculate").await;
    let r = execute(&client, "slow49:calculate", json!({"expression": "6*7"})).await;
    assert_eq!(text(&r), "6*7 = 42");
}

/// A discovery and an execute sent together, as a model's first calls are.
async fn first_calls<S: rmcp::service::Service<rmcp::RoleClient>>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, S>,
) -> (rmcp::model::CallToolResult, rmcp::model::CallToolResult) {
    tokio::join!(
        call(client, "tool_discovery", json!({"query": "multiply 17 by 23"})),
        execute(client, "slow:calculate", json!({"expression": "17*23"})),
    )
}

/// Both first calls waited for the slow server and got its tool.
fn assert_the_slow_server_answered(found: &rmcp::model::CallToolResult, ran: &rmcp::model::CallToolResult) {
    let structured = found.structured_content.as_ref().unwrap();
    assert_eq!(structured["results"][0]["toolKey"], "slow:calculate", "{found:?}");
    assert!(structured.get("starting").is_none(), "{structured}");
    assert_eq!(text(ran), "17*23 = 391", "{ran:?}");
}

/// Issue 33: a stdio client starts the gateway with its conversation and
/// asks at once. The first calls wait for the server that is still starting
/// instead of answering "no matching tools" and "unknown toolKey".
#[tokio::test]
async fn the_first_calls_over_stdio_wait_for_a_server_still_starting() {
    let (client, _pid, _dir) = stdio_gateway(&format!("{ANONYMOUS}{}", slow_server("slow", 3, ""))).await;
    let (found, ran) = first_calls(&client).await;
    assert_the_slow_server_answered(&found, &ran);
    client.cancel().await.unwrap();
}

/// The same over HTTP, right after a (re)start.
#[tokio::test]
async fn the_first_calls_over_http_wait_for_a_server_still_starting() {
    let gw = Gateway::start(&format!("{ANONYMOUS}{}", slow_server("slow", 3, ""))).await;
    let client = gw.client().await;
    let ready = gw.readyz().await;
    let slow = ready["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "slow");
    assert_eq!(
        slow.unwrap()["status"],
        "connecting",
        "the calls come while it starts: {ready}"
    );
    let (found, ran) = first_calls(&client).await;
    assert_the_slow_server_answered(&found, &ran);
}

/// Past `[startup] wait_ms`, the answer comes from the servers that are up
/// and names the one still starting; an execute of its tool says so too.
#[tokio::test]
async fn a_server_slower_than_the_startup_wait_is_named_and_the_rest_answer() {
    let config = format!(
        "{ANONYMOUS}[startup]\nwait_ms = 1000\n\n{}{}",
        chaos_server("quick", ""),
        slow_server("slow", 20, "connect_timeout_ms = 30000")
    );
    let gw = Gateway::start(&config).await;
    let client = gw.client().await;
    let began = Instant::now();
    let (found, ran) = first_calls(&client).await;
    assert!(began.elapsed() < Duration::from_secs(10), "{:?}", began.elapsed());
    let structured = found.structured_content.as_ref().unwrap();
    assert_eq!(structured["starting"], json!(["slow"]), "{structured}");
    assert_eq!(structured["results"][0]["toolKey"], "quick:calculate", "{structured}");
    let notice = text(&found);
    assert!(
        notice.contains("still starting: slow") && notice.contains("ask again"),
        "{notice}"
    );
    assert_eq!(error_code(&ran), "SERVER_STARTING", "{ran:?}");
    assert!(
        text(&ran).contains("'slow' is still starting") && text(&ran).contains("again"),
        "{ran:?}"
    );
}

/// A client that starts the gateway per call (llama-index) sends its first
/// request the moment the handshake is done. A fast server's state could
/// read "running" before the catalog listed it, and about one start in ten
/// answered "unknown toolKey" and "No matching tools". Fifty cold starts of
/// the binary over stdio, each with its first calls sent at once.
#[tokio::test]
async fn fifty_cold_starts_over_stdio_each_answer_their_first_calls_from_a_full_catalog() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gateway.toml");
    std::fs::write(&path, format!("{ANONYMOUS}{}", chaos_server("demo", ""))).unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "cold", "version": "1"}}});
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let run = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "tool_execute",
        "arguments": {"toolKey": "demo:calculate", "arguments": {"expression": "2*(3+4)"}}}});
    let find = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "tool_discovery",
        "arguments": {"query": "evaluate an arithmetic expression"}}});
    let mut failures = Vec::new();
    for start in 0..50 {
        let mut child = tokio::process::Command::new(bin())
            .args(["serve", "--config"])
            .arg(&path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        stdin.write_all(format!("{init}\n").as_bytes()).await.unwrap();
        // The handshake's answer, then everything at once.
        let _ = tokio::time::timeout(Duration::from_secs(20), lines.next_line()).await;
        let burst = format!("{initialized}\n{run}\n{find}\n");
        stdin.write_all(burst.as_bytes()).await.unwrap();
        let mut answers = std::collections::HashMap::new();
        while answers.len() < 2 {
            let Ok(Ok(Some(line))) = tokio::time::timeout(Duration::from_secs(20), lines.next_line()).await else {
                break;
            };
            let message: Value = serde_json::from_str(&line).unwrap();
            if let Some(id) = message["id"].as_u64() {
                answers.insert(id, message["result"].clone());
            }
        }
        let ran = answers.get(&1).map(|r| r["content"][0]["text"].clone());
        let found = answers
            .get(&2)
            .map(|r| r["structuredContent"]["results"][0]["toolKey"].clone());
        if ran != Some(json!("2*(3+4) = 14")) || found != Some(json!("demo:calculate")) {
            failures.push(format!("start {start}: ran {ran:?}, found {found:?}"));
        }
        drop(stdin);
        let _ = child.kill().await;
    }
    assert!(
        failures.is_empty(),
        "{} of 50 cold starts failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `stateless_instances`: while the server's one child is busy, copies of
/// it start (other processes), never more than configured, and each call
/// goes to the least busy child.
#[tokio::test]
async fn calls_to_a_busy_stateless_server_spread_over_its_copies() {
    let gw = Gateway::start(&format!(
        "{ANONYMOUS}{}",
        chaos_server("pool", "stateless_instances = 3")
    ))
    .await;
    let client = std::sync::Arc::new(gw.client().await);
    wait_for_tool(&client, "pool:stats").await;
    let pid_of = |r: rmcp::model::CallToolResult| -> u64 {
        r.structured_content
            .as_ref()
            .and_then(|s| s["pid"].as_u64())
            .unwrap_or_else(|| panic!("{r:?}"))
    };
    let first = pid_of(execute(&*client, "pool:stats", json!({})).await);
    assert_eq!(
        pid_of(execute(&*client, "pool:stats", json!({})).await),
        first,
        "an idle server keeps its one child"
    );

    // Long calls keep the one child busy, and copies start; each long call
    // after that goes to the least busy child, and a short call shows which.
    let sleep = |ms: u64| {
        let client = client.clone();
        tokio::spawn(async move { execute(&*client, "pool:sleep", json!({"ms": ms})).await })
    };
    let mut busy: Vec<_> = (0..4).map(|_| sleep(4000)).collect();
    let mut pids = std::collections::BTreeSet::from([first]);
    // Until three children have answered (a loaded machine starts them
    // slowly), then a second more, in which a fourth would show.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut settled: Option<Instant> = None;
    while Instant::now() < deadline && settled.is_none_or(|at| at.elapsed() < Duration::from_secs(1)) {
        pids.insert(pid_of(execute(&*client, "pool:stats", json!({})).await));
        if pids.len() >= 3 {
            settled.get_or_insert_with(Instant::now);
        }
        busy.push(sleep(2000));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for call in busy {
        assert_eq!(call.await.unwrap().is_error, Some(false));
    }
    assert_eq!(pids.len(), 3, "three children answered, no more: {pids:?}");
}
