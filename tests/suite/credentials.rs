//! Per-project credentials, end to end: the real gateway binary, real
//! downstream servers that report which credential reached them (the demo
//! server's `whoami`, checked at the server), a real OAuth authorization
//! server (`oidc-provider`) in front of an OAuth-protected MCP server, and
//! `mcp-gateway login` with its browser played headless.

use crate::common;

use std::time::Duration;

use common::oauth::short_lived_provider;
use common::*;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

fn whoami(r: &CallToolResult) -> Value {
    assert_ne!(r.is_error, Some(true), "whoami failed: {}", text(r));
    r.structured_content
        .clone()
        .expect("whoami answers with structuredContent")
}

/// Creates `project`, grants it `server`, and connects a client with a fresh gateway token.
async fn project_client(gw: &Gateway, project: &str, server: &str) -> (Client, String) {
    gw.cli(&["project", "create", project]);
    gw.cli(&["grant", "--project", project, "--server", server]);
    let token = gw.issue_token(project);
    let client = gw.client_with_token(&token).await.unwrap();
    (client, token)
}

/// Runs `mcp-gateway secret WORDS…` (no word holds a space).
fn secret(gw: &Gateway, words: &str) {
    let mut args = vec!["secret"];
    args.extend(words.split(' '));
    gw.cli(&args);
}

/// Every file of the store (database, WAL, shared memory, audit journal) as bytes.
fn store_bytes(dir: &std::path::Path) -> Vec<u8> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if !name.starts_with("gateway.db") || name.ends_with(".key") {
            continue;
        }
        all.extend(bytes_under(&entry.path()));
    }
    all
}

fn bytes_under(path: &std::path::Path) -> Vec<u8> {
    if !path.is_dir() {
        return std::fs::read(path).unwrap();
    }
    let entries = std::fs::read_dir(path).unwrap().flatten();
    entries.flat_map(|e| bytes_under(&e.path())).collect()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[tokio::test]
#[ignore = "full tier: needs oidc-provider (scripts/setup)"]
async fn two_projects_use_one_oauth_server_each_as_its_own_account() {
    let provider = short_lived_provider();
    let (_demo, url) = http_demo("127.0.0.1:0", &["--require-jwt", &provider.issuer]).await;
    let gw = Gateway::start(&format!(
        "[store]\npath = \"gateway.db\"\n\n[[servers]]\nname = \"remote\"\nurl = \"{url}\"\n\n\
         [[servers]]\nname = \"misconfigured\"\nurl = \"{url}\"\nheaders = {{ Authorization = \"Bearer not-a-token\" }}\n"
    ))
    .await;
    let (alpha, _) = project_client(&gw, "alpha", "remote").await;
    let (beta, _) = project_client(&gw, "beta", "remote").await;
    let (gamma, _) = project_client(&gw, "gamma", "remote").await;

    // No shared credential: the server waits for projects' sign-ins.
    let servers: Value = serde_json::from_slice(&gw.cli(&["servers", "--json"]).stdout).unwrap();
    assert_eq!(servers[0]["status"], "sign-in", "{servers}");
    // With a configured credential, a 401 is that credential's fault.
    assert_eq!(servers[1]["status"], "failed", "{servers}");
    assert!(
        servers[1]["error"]
            .as_str()
            .unwrap()
            .contains("refused the configured credential"),
        "{servers}"
    );

    let said = login(&gw.config_path(), "remote", "alpha", "alice").await;
    assert!(said.contains("project 'alpha' is signed in to 'remote'"), "{said}");
    login(&gw.config_path(), "remote", "beta", "bob").await;

    // Its tools are listed through a signed-in project's connection.
    wait_for_tool(&alpha, "remote:whoami").await;
    let first = whoami(&execute(&alpha, "remote:whoami", json!({})).await);
    assert_eq!(first["subject"], "alice");
    assert_eq!(
        whoami(&execute(&beta, "remote:whoami", json!({})).await)["subject"],
        "bob"
    );
    // Tokens live 20 s, under rmcp's 30 s margin: each call refreshes first.
    let second = whoami(&execute(&alpha, "remote:whoami", json!({})).await);
    assert_eq!(second["subject"], "alice");
    assert_ne!(first["tokenId"], second["tokenId"], "the access token was refreshed");

    let status: Value = serde_json::from_slice(&gw.cli(&["login", "--status", "--json"]).stdout).unwrap();
    let states: Vec<_> = status
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["project"].as_str().unwrap(),
                s["state"].as_str().unwrap(),
                s["refreshable"].as_bool(),
            )
        })
        .collect();
    // `expired` only if this machine took 20 s since the last refresh; either way it refreshes.
    let usable = |state: &str| state == "signedIn" || state == "expired";
    assert!(
        states.len() == 2
            && states
                .iter()
                .all(|(_, state, refreshable)| usable(state) && *refreshable == Some(true)),
        "{states:?}"
    );
    assert_eq!((states[0].0, states[1].0), ("alpha", "beta"));

    // A project that never signed in is told how to.
    let r = execute(&gamma, "remote:whoami", json!({})).await;
    assert_eq!(error_code(&r), "SIGN_IN_REQUIRED");
    assert!(
        text(&r).contains("mcp-gateway login remote --project gamma"),
        "{}",
        text(&r)
    );

    // The authorization server revokes alice's grant: her next refresh is
    // refused, and the call says which command signs her in again.
    provider.revoke("alice").await;
    let r = execute(&alpha, "remote:whoami", json!({})).await;
    assert_eq!(error_code(&r), "SIGN_IN_REQUIRED", "{}", text(&r));
    assert!(
        text(&r).contains("mcp-gateway login remote --project alpha"),
        "{}",
        text(&r)
    );
    assert_eq!(
        whoami(&execute(&beta, "remote:whoami", json!({})).await)["subject"],
        "bob"
    );

    // Signing in again works without a restart.
    login(&gw.config_path(), "remote", "alpha", "alice").await;
    assert_eq!(
        whoami(&execute(&alpha, "remote:whoami", json!({})).await)["subject"],
        "alice"
    );

    let log = gw.log();
    assert!(!log.contains("eyJ"), "a token reached the gateway's log");
}

#[tokio::test]
async fn each_project_sends_its_own_header_and_the_store_alone_reveals_none() {
    let (_demo, url) = http_demo("127.0.0.1:0", &[]).await;
    // Spawned: the test reads and copies the store's files raw, and a file
    // SQLite holds in this process would lose its locks at that close
    // (POSIX), letting a CLI process truncate the shared memory mapped here.
    let gw = Gateway::spawn(&format!(
        "[store]\npath = \"gateway.db\"\n\n[[servers]]\nname = \"remote\"\nurl = \"{url}\"\nheaders = {{ X-Account = \"shared\" }}\n"
    ))
    .await;
    let (alpha, alpha_token) = project_client(&gw, "alpha", "remote").await;
    let (beta, _) = project_client(&gw, "beta", "remote").await;
    let (gamma, _) = project_client(&gw, "gamma", "remote").await;
    wait_for_tool(&alpha, "remote:whoami").await;
    let alpha_secret = "alpha-account-7f3a9c";
    let beta_secret = "beta-account-c41d0e";
    secret(
        &gw,
        &format!("set --project alpha --server remote --header X-Account={alpha_secret}"),
    );
    secret(
        &gw,
        &format!("set --project beta --server remote --header X-Account={beta_secret}"),
    );

    // Checked at the server: each project's calls carry its own header, never another's.
    let account = |r: CallToolResult| whoami(&r)["xAccount"].as_str().unwrap().to_string();
    for _ in 0..3 {
        assert_eq!(account(execute(&alpha, "remote:whoami", json!({})).await), alpha_secret);
        assert_eq!(account(execute(&beta, "remote:whoami", json!({})).await), beta_secret);
        assert_eq!(account(execute(&gamma, "remote:whoami", json!({})).await), "shared");
    }

    // Rotated: the next call carries the new value; removed: the shared one.
    let rotated = "alpha-account-rotated-55e1";
    secret(
        &gw,
        &format!("set --project alpha --server remote --header X-Account={rotated}"),
    );
    assert_eq!(account(execute(&alpha, "remote:whoami", json!({})).await), rotated);
    let listed = String::from_utf8(gw.cli(&["secret", "list"]).stdout).unwrap();
    assert!(listed.contains("alpha") && listed.contains("X-Account"), "{listed}");
    let shown = String::from_utf8(gw.cli(&["project", "show", "alpha", "--json"]).stdout).unwrap();
    let shown: Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(shown["credentials"][0]["name"], "X-Account", "{shown}");
    assert_eq!(shown["credentials"][0]["kind"], "header", "{shown}");
    for output in [listed, shown.to_string()] {
        assert!(!output.contains(rotated) && !output.contains(beta_secret), "{output}");
    }
    secret(&gw, "remove --project alpha --server remote --header X-Account");
    assert_eq!(account(execute(&alpha, "remote:whoami", json!({})).await), "shared");
    secret(
        &gw,
        &format!("set --project alpha --server remote --header X-Account={alpha_secret}"),
    );
    assert_eq!(account(execute(&alpha, "remote:whoami", json!({})).await), alpha_secret);

    // The store alone holds no value; its key sits beside it, private.
    let key_file = gw.dir.path().join("gateway.db.key");
    let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&key_file).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    let bytes = store_bytes(gw.dir.path());
    assert!(!bytes.is_empty());
    for value in [alpha_secret, beta_secret, rotated] {
        assert!(!contains(&bytes, value), "'{value}' is readable in the store file");
    }

    // A copy of the store without its key opens no secret, and says so.
    let copy = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(gw.dir.path()).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if name.starts_with("gateway.db") && !name.ends_with(".key") && entry.path().is_file() {
            std::fs::copy(entry.path(), copy.path().join(&name)).unwrap();
        }
    }
    std::fs::write(
        copy.path().join("gateway.toml"),
        std::fs::read_to_string(gw.config_path()).unwrap(),
    )
    .unwrap();
    let out = std::process::Command::new(bin())
        .args(["call", "remote:whoami", "--project", "alpha", "--config"])
        .arg(copy.path().join("gateway.toml"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        said.contains("CREDENTIAL_ERROR") && said.contains("key is missing"),
        "{said}"
    );
    assert!(!said.contains(alpha_secret));

    // Error paths a caller or operator can reach carry no value either.
    let bad = gw.cli_output(&[
        "secret",
        "set",
        "--project",
        "alpha",
        "--server",
        "remote",
        "--header",
        "X-Account=new\nline-9d2c",
    ]);
    assert!(!bad.status.success());
    let said = String::from_utf8_lossy(&bad.stderr);
    assert!(said.contains("X-Account") && !said.contains("line-9d2c"), "{said}");
    let log = gw.log();
    for value in [alpha_secret, beta_secret, rotated, alpha_token.as_str()] {
        assert!(!log.contains(value), "'{value}' reached the gateway's log");
    }
}

#[tokio::test]
async fn each_project_with_its_own_env_gets_its_own_child_stopped_when_idle() {
    let gw = Gateway::start(&format!(
        "[store]\npath = \"gateway.db\"\n\n{}",
        chaos_server(
            "local",
            "env = { DEMO_ACCOUNT = \"shared\" }\nidle_timeout_ms = 5000\nmax_instances = 2"
        )
    ))
    .await;
    let mut clients = Vec::new();
    for project in ["alpha", "beta", "gamma", "delta"] {
        clients.push(project_client(&gw, project, "local").await.0);
    }
    for project in ["alpha", "beta", "gamma"] {
        secret(
            &gw,
            &format!("set --project {project} --server local --env DEMO_ACCOUNT={project}-account"),
        );
    }
    let [alpha, beta, gamma, delta] = &clients[..] else {
        unreachable!()
    };
    wait_for_tool(delta, "local:whoami").await;

    let shared = whoami(&execute(delta, "local:whoami", json!({})).await);
    let a = whoami(&execute(alpha, "local:whoami", json!({})).await);
    let b = whoami(&execute(beta, "local:whoami", json!({})).await);
    assert_eq!(shared["account"], "shared");
    assert_eq!(a["account"], "alpha-account");
    assert_eq!(b["account"], "beta-account");
    let pids: Vec<u64> = [&shared, &a, &b].iter().map(|w| w["pid"].as_u64().unwrap()).collect();
    assert!(
        pids[0] != pids[1] && pids[1] != pids[2] && pids[0] != pids[2],
        "three children: {pids:?}"
    );
    // The same project keeps its child.
    assert_eq!(
        whoami(&execute(alpha, "local:whoami", json!({})).await)["pid"],
        a["pid"]
    );

    // Past max_instances (2), a clear error; nothing else is disturbed.
    let r = execute(gamma, "local:whoami", json!({})).await;
    assert_eq!(error_code(&r), "TOOL_EXECUTION_ERROR");
    assert!(text(&r).contains("max_instances"), "{}", text(&r));
    assert_eq!(whoami(&execute(beta, "local:whoami", json!({})).await)["pid"], b["pid"]);

    // Idle children stop; then gamma gets one of its own.
    for pid in &pids[1..] {
        let pid = *pid as u32;
        eventually(Duration::from_secs(30), "an idle project child to stop", || async {
            (!alive(pid)).then_some(())
        })
        .await;
    }
    let g = whoami(&execute(gamma, "local:whoami", json!({})).await);
    assert_eq!(g["account"], "gamma-account");
    // An idle project's next call starts its child again.
    let again = whoami(&execute(alpha, "local:whoami", json!({})).await);
    assert_eq!(again["account"], "alpha-account");
    assert_ne!(again["pid"], a["pid"]);
    assert!(
        !gw.log().contains("alpha-account"),
        "an env value reached the gateway's log"
    );
}

/// A tool of `team` whose description names `account`, as a server whose
/// tools depend on the account does (`DEMO_EXTRA_TOOLS`).
fn workspace_tool(account: &str) -> String {
    json!([{
        "name": "search_workspace",
        "description": format!("Search the workspace of account {account} (test tool)."),
        "inputSchema": { "type": "object" }
    }])
    .to_string()
}

/// What `client` finds for the workspace: `(toolKey, description)`.
async fn workspace_results(client: &Client) -> Vec<(String, String)> {
    let results = discover(client, json!(["search the workspace of an account", "team"])).await;
    results
        .iter()
        .map(|r| {
            (
                r["toolKey"].as_str().unwrap().into(),
                r["description"].as_str().unwrap_or("").into(),
            )
        })
        .collect()
}

/// Waits until `client` finds `team:search_workspace` naming `account`, and
/// sure that no other account's description reached it.
async fn sees_only(client: &Client, account: &str, others: &[&str]) {
    let found = eventually(Duration::from_secs(20), account, || async {
        let found = workspace_results(client).await;
        found
            .iter()
            .any(|(k, d)| k == "team:search_workspace" && d.contains(account))
            .then_some(found)
    })
    .await;
    for other in others {
        assert!(
            !format!("{found:?}").contains(other),
            "{other} reached {account}'s project: {found:?}"
        );
    }
}

/// Issue #71 (4): a `shared = false` server whose tools depend on the
/// account. A listing made with one project's credential is that project's
/// alone: another project never discovers it, a third's listing is not a
/// change of the first's (pins are kept per listing), and a restart keeps
/// it so.
#[tokio::test]
async fn a_listing_made_with_one_projects_credential_is_that_projects_alone() {
    let mut gw = Gateway::start(&chaos_server("team", "shared = false")).await;
    let mut tokens = Vec::new();
    for project in ["alpha", "beta", "gamma"] {
        gw.cli(&["project", "create", project]);
        gw.cli(&["grant", "--project", project, "--server", "team"]);
        tokens.push(gw.issue_token(project));
    }
    let set = |gw: &Gateway, project: &str, account: &str| {
        let value = format!("DEMO_EXTRA_TOOLS={}", workspace_tool(account));
        gw.cli(&[
            "secret",
            "set",
            "--project",
            project,
            "--server",
            "team",
            "--env",
            &value,
        ]);
    };
    set(&gw, "alpha", "alice-7f3a");
    set(&gw, "beta", "bob-91c2");

    for round in ["before a restart", "after a restart"] {
        let alpha = gw.client_with_token(&tokens[0]).await.unwrap();
        let beta = gw.client_with_token(&tokens[1]).await.unwrap();
        let gamma = gw.client_with_token(&tokens[2]).await.unwrap();
        sees_only(&alpha, "alice-7f3a", &["bob-91c2"]).await;
        sees_only(&beta, "bob-91c2", &["alice-7f3a"]).await;
        // Granted, without a secret: none of the server's tools, and a
        // call by key is told what is missing.
        let found = workspace_results(&gamma).await;
        assert!(found.iter().all(|(k, _)| !k.starts_with("team:")), "{round}: {found:?}");
        let r = execute(&gamma, "team:search_workspace", json!({})).await;
        assert_eq!(error_code(&r), "CREDENTIAL_ERROR", "{round}");
        assert!(
            text(&r).contains("runs only with a project's own secrets (shared = false), and project 'gamma' has none"),
            "{round}: {}",
            text(&r)
        );
        // Each listing pinned as its own: nothing waits for review.
        let changes = gw.cli(&["tools", "changes", "--json"]).stdout;
        assert_eq!(String::from_utf8_lossy(&changes).trim(), "[]", "{round}");
        let pins = mcp_gateway::vetting::PinStore::pins(&**gw.gateway().store()).unwrap();
        let mut pinned: Vec<&str> = pins.keys().map(String::as_str).collect();
        pinned.sort_unstable();
        assert_eq!(pinned, ["team@alpha", "team@beta"], "{round}");
        gw = gw.restart().await;
    }

    // Beta's server changes its definition: held for beta alone, until approved.
    set(&gw, "beta", "bob-NEW");
    let alpha = gw.client_with_token(&tokens[0]).await.unwrap();
    let beta = gw.client_with_token(&tokens[1]).await.unwrap();
    let held = eventually(Duration::from_secs(20), "beta's changed tool held", || async {
        let changes = gw.cli(&["tools", "changes", "--server", "team", "--json"]).stdout;
        let changes: Value = serde_json::from_slice(&changes).unwrap();
        (!changes.as_array().unwrap().is_empty()).then_some(changes)
    })
    .await;
    assert_eq!(held[0]["toolKey"], "team@beta:search_workspace", "{held}");
    sees_only(&alpha, "alice-7f3a", &["bob"]).await;
    let r = execute(&beta, "team:search_workspace", json!({})).await;
    assert_eq!(error_code(&r), "TOOL_HELD_FOR_REVIEW", "{}", text(&r));
    assert!(
        text(&r).contains("(mcp-gateway tools approve team@beta:search_workspace)"),
        "the key the operator approves: {}",
        text(&r)
    );
    gw.cli(&["tools", "approve", "team@beta:search_workspace"]);
    sees_only(&beta, "bob-NEW", &["alice-7f3a"]).await;
    gw.stop().await;
}
