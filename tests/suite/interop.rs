//! Parts nobody here wrote: the public `@modelcontextprotocol/server-everything`
//! as a downstream, and the official MCP Python SDK as the upstream client.
//! `scripts/setup` installs both into `tests/interop/` (npm ci, a venv).

use crate::common;

use std::path::PathBuf;
use std::time::Duration;

use common::*;
use serde_json::json;

fn installed(relative: &str, what: &str) -> PathBuf {
    let path = repo_path(relative);
    assert!(
        path.exists(),
        "{what} is not installed at {}; run scripts/setup (it installs it)",
        path.display()
    );
    path
}

/// Runs `tests/interop/SCRIPT ARGS` with `program` (the SDK's venv Python,
/// or Node); its last stdout line, as JSON.
async fn run_client(program: &std::path::Path, script: &str, args: &[&str]) -> serde_json::Value {
    let out = tokio::process::Command::new(program)
        .arg(repo_path(&format!("tests/interop/{script}")))
        .args(args)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{script} {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
}

/// A `[[servers]]` entry `name` running `tests/interop/SCRIPT` (a Python SDK
/// server) with `python`, `--legacy` when it speaks only the 2025 generation.
fn python_server(python: &std::path::Path, name: &str, script: &str, legacy: bool) -> String {
    format!(
        "[[servers]]\nname = \"{name}\"\ncommand = \"{}\"\nargs = [\"{}\"{}]\n\n",
        python.display(),
        repo_path(&format!("tests/interop/{script}")).display(),
        if legacy { ", \"--legacy\"" } else { "" }
    )
}

fn everything_config() -> String {
    let everything = installed(
        "tests/interop/node_modules/.bin/mcp-server-everything",
        "server-everything",
    );
    format!(
        "{ANONYMOUS}[[servers]]\nname = \"everything\"\ncommand = \"{}\"\nargs = [\"stdio\"]\n\n{}",
        everything.display(),
        chaos_server("demo", "")
    )
}

#[tokio::test]
#[ignore = "full tier: needs the npm MCP servers (scripts/setup)"]
async fn a_legacy_servers_revision_is_remembered_and_a_restart_skips_the_probe() {
    let config = everything_config();
    let store_dir = tempfile::tempdir().unwrap();
    let store = store_dir.path().join("gw.db");
    let env = [("MCP_GATEWAY_DB", store.to_str().unwrap())];
    let first = Gateway::spawn_with(&config, &env).await;
    let running = |gw: &Gateway| {
        gw.log()
            .lines()
            .find(|l| l.contains("downstream server running") && l.contains("server=everything"))
            .map(str::to_string)
    };
    let line = eventually(Duration::from_secs(30), "everything running", || async {
        running(&first)
    })
    .await;
    // server-everything (TypeScript SDK) refuses server/discover: probed, then initialize.
    assert!(line.contains("handshake=\"probed, then initialize\""), "{line}");
    assert!(line.contains("protocol=\"2025-"), "{line}");
    let remembered = || async {
        let db = rusqlite::Connection::open(&store).ok()?;
        db.query_row(
            "SELECT protocol FROM server_tools WHERE server = 'everything'",
            [],
            |r| r.get::<_, Option<String>>(0),
        )
        .ok()
        .flatten()
    };
    let protocol = eventually(Duration::from_secs(10), "the revision in the store", remembered).await;
    assert!(protocol.starts_with("2025-"), "{protocol}");
    drop(first);

    // The same store: straight to initialize.
    let second = Gateway::spawn_with(&config, &env).await;
    let line = eventually(Duration::from_secs(30), "everything running again", || async {
        running(&second)
    })
    .await;
    assert!(line.contains("handshake=\"remembered\""), "{line}");
}

#[tokio::test]
#[ignore = "full tier: needs the npm MCP servers (scripts/setup)"]
async fn server_everything_is_aggregated() {
    let gw = Gateway::start(&everything_config()).await;
    let client = gw.client().await;
    // Sent while the Node server starts: the first call waits for it (#33).
    let results = discover(&client, json!(["add two numbers", "sum"])).await;
    assert_eq!(results[0]["toolKey"], "everything:get-sum", "{results:#?}");

    let r = execute(&client, "everything:get-sum", json!({"a": 19, "b": 23})).await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    assert!(text(&r).contains("42"), "{}", text(&r));

    let r = execute(&client, "everything:echo", json!({"message": "through the gateway"})).await;
    assert_eq!(text(&r), "Echo: through the gateway");

    let r = execute(&client, "everything:get-sum", json!({"a": "nineteen"})).await;
    assert_eq!(error_code(&r), "TOOL_VALIDATION_ERROR");

    // Its resources and prompts pass through beside the demo server's.
    let resources = client.list_all_resources().await.unwrap();
    let doc = resources
        .iter()
        .find(|r| r.uri.starts_with("demo://resource/static/document/"))
        .expect("everything's documents");
    assert!(resources.iter().any(|r| r.uri == "demo://readme"), "{resources:?}");
    let read = client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(doc.uri.clone()))
        .await
        .unwrap();
    assert!(
        serde_json::to_string(&read).unwrap().contains(&doc.uri),
        "routed to the server that listed it"
    );
    let prompts = client.list_all_prompts().await.unwrap();
    assert!(prompts.iter().any(|p| p.name.starts_with("everything:")), "{prompts:?}");
    assert!(
        prompts.iter().any(|p| p.name == "demo:explain_calculation"),
        "{prompts:?}"
    );
}

#[tokio::test]
#[ignore = "full tier: needs the Python SDKs (scripts/setup)"]
async fn the_official_python_sdk_drives_the_gateway() {
    let python = installed("tests/interop/.venv/bin/python", "the MCP Python SDK venv");
    let gw = Gateway::start(&everything_config()).await;
    let client = gw.client().await;
    eventually(Duration::from_secs(30), "everything's tools", || async {
        let r = discover(&client, json!("get-sum")).await;
        r.iter().any(|t| t["toolKey"] == "everything:get-sum").then_some(())
    })
    .await;
    for (mode, protocol) in [("legacy", "2025-11-25"), ("auto", "2026-07-28")] {
        let seen = run_client(&python, "python_client.py", &[gw.url.as_str(), mode]).await;
        assert_eq!(seen["protocol"], protocol, "{seen}");
        assert_eq!(seen["found"][0], "everything:get-sum", "{seen}");
    }
}

/// Downstreams written with the official Python SDK ask their user before
/// they act (`tests/interop/ask_server.py`): `ask` speaks 2026-07-28, `old`
/// only 2025. The official Python client answers through the gateway:
/// - `ask`, 2026 client: the `InputRequiredResult` reaches it, and its retry
///   reaches the server with `inputResponses` and `requestState` intact (the
///   SDK seals that state to the tool and its arguments, so a lost or altered
///   field would start over or fail);
/// - `ask`, 2025 client: the gateway asks over the client's session, then
///   retries the 2026 server for it;
/// - `old`, 2025 client: the server's mid-call `elicitation/create` is relayed
///   to the client whose call it belongs to, and the answer back, also while
///   two of its calls are in flight;
/// - `old`, 2026 client: it cannot be asked mid-call, so the server's
///   `elicitation/create` reaches it as an `InputRequiredResult` while the
///   call waits, and its retry's answer goes back to the waiting server.
#[tokio::test]
#[ignore = "full tier: needs the Python SDKs (scripts/setup)"]
async fn a_downstream_question_reaches_the_user_in_both_protocol_generations() {
    let python = installed("tests/interop/.venv/bin/python", "the MCP Python SDK venv");
    let config = format!(
        "{ANONYMOUS}{}{}",
        python_server(&python, "ask", "ask_server.py", false),
        python_server(&python, "old", "ask_server.py", true)
    );
    let gw = Gateway::start(&config).await;
    let client = gw.client().await;
    wait_for_tool(&client, "ask:confirm_delete").await;
    wait_for_tool(&client, "old:confirm_delete").await;
    let servers: serde_json::Value = serde_json::from_slice(&gw.cli(&["servers", "--json"]).stdout).unwrap();
    assert_eq!(servers[0]["protocol"], "2026-07-28", "{servers}");
    assert_eq!(servers[1]["protocol"], "2025-11-25", "{servers}");

    let ask = |key: &'static str, mode: &'static str, answer: &'static str| {
        let (python, url) = (python.clone(), gw.url.clone());
        async move { run_client(&python, "ask_client.py", &[url.as_str(), mode, key, answer]).await }
    };
    let answered = [
        ("ask:confirm_delete", "2026-07-28", "2026-07-28"),
        ("ask:confirm_delete", "legacy", "2025-11-25"),
        ("old:confirm_delete", "legacy", "2025-11-25"),
        ("old:confirm_delete", "2026-07-28", "2026-07-28"),
    ];
    for (key, mode, protocol) in answered {
        let yes = ask(key, mode, "yes").await;
        assert_eq!(yes["protocol"], protocol, "{yes}");
        assert_eq!(yes["text"], "deleted 40 files", "{key} {mode}: {yes}");
        assert_eq!(
            yes["asked"],
            json!(["Delete 40 files?"]),
            "{key} {mode}: asked once: {yes}"
        );
        let no = ask(key, mode, "no").await;
        assert_eq!(no["text"], "kept the files", "{key} {mode}: {no}");
    }
    // A 2025 client that cannot answer questions is told so, in one sentence.
    let unable = ask("ask:confirm_delete", "legacy", "none").await;
    assert_eq!(unable["code"], "TOOL_INPUT_UNANSWERED", "{unable}");
    assert!(
        unable["text"]
            .as_str()
            .unwrap()
            .contains("'ask:confirm_delete' asks its user for input, but this client cannot answer a question (elicitation): it did not declare that capability"),
        "{unable}"
    );
    // Two calls of one 2025 session in flight at once on the one stdio
    // connection: the questions both go to that session's user.
    let both = run_client(
        &python,
        "ask_client.py",
        &[gw.url.as_str(), "legacy", "old:confirm_delete", "yes", "2"],
    )
    .await;
    assert_eq!(both["texts"], json!(["deleted 40 files", "deleted 40 files"]), "{both}");
    assert_eq!(both["asked"], json!(["Delete 40 files?", "Delete 40 files?"]), "{both}");
    for mode in ["legacy", "2026-07-28"] {
        let unable = ask("old:confirm_delete", mode, "none").await;
        assert!(
            unable["text"]
                .as_str()
                .unwrap()
                .contains("elicitation/create: the client did not declare that capability"),
            "{mode}: {unable}"
        );
    }
}

/// Issue #76: prompts, completions and `logging/setLevel` pass through to
/// a 2025 server (server-everything) for the official Python SDK in both
/// generations: a 2026-07-28 client gets the result type it requires, a
/// completion reaches the server of its prompt or template (the first
/// argument narrowing the second), and `logging/setLevel`, which the
/// 2026-07-28 revision does not have, is refused there as unknown.
#[tokio::test]
#[ignore = "full tier: needs the Python SDKs and server-everything (scripts/setup)"]
async fn prompts_and_completions_pass_through_in_both_generations() {
    let python = installed("tests/interop/.venv/bin/python", "the MCP Python SDK venv");
    let gw = Gateway::start(&everything_config()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "everything:echo").await;
    for (mode, protocol) in [("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28")] {
        let got = run_client(&python, "passthrough_client.py", &[gw.url.as_str(), mode]).await;
        assert_eq!(got["protocol"], protocol, "{got}");
        if mode == "legacy" {
            // (The SDK's 2026-07-28 client leaves every server capability unset.)
            assert_eq!(got["completions"], true, "the capability is declared: {got}");
        }
        assert_eq!(
            got["prompt"], "Please promote Alice to the head of the Engineering team.",
            "{mode}: {got}"
        );
        assert_eq!(got["department"], json!(["Engineering"]), "{mode}: {got}");
        assert_eq!(got["lead"], json!(["Alice"]), "{mode}: {got}");
        assert_eq!(got["resource"], json!(["7"]), "{mode}: {got}");
        // The server's own refusal, passed on.
        assert_eq!(got["unknown"]["error"], -32602, "{mode}: {got}");
        assert!(
            got["unknown"]["message"].as_str().unwrap().contains("no-such-prompt"),
            "{mode}: {got}"
        );
        match mode {
            "legacy" => assert_eq!(got["setLevel"], "ok", "{got}"),
            _ => assert_eq!(got["setLevel"]["error"], -32601, "{got}"),
        }
    }
    // What `server/discover` tells a 2026-07-28 client.
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "test", "version": "1" }
    });
    let discovered: serde_json::Value = reqwest::Client::new()
        .post(&gw.url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "server/discover")
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": { "_meta": meta } }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        discovered["result"]["capabilities"]["completions"].is_object(),
        "{discovered}"
    );
}

/// Issue #76: roots and log messages of Python SDK servers of both
/// generations reach the official Python SDK client of both generations
/// through the gateway. A 2026-07-28 server is told per call what the
/// caller can answer, so it asks for roots only a client that has them, and
/// logs at the level the caller asked for; a 2025 server, whose connection
/// the gateway shares between callers, is never told of roots.
#[tokio::test]
#[ignore = "full tier: needs the Python SDKs (scripts/setup)"]
async fn roots_and_log_messages_reach_the_caller_in_both_generations() {
    let python = installed("tests/interop/.venv/bin/python", "the MCP Python SDK venv");
    let config = format!(
        "{ANONYMOUS}{}{}",
        python_server(&python, "corners", "corners_server.py", false),
        python_server(&python, "old", "corners_server.py", true)
    );
    let gw = Gateway::start(&config).await;
    let client = gw.client().await;
    wait_for_tool(&client, "corners:where").await;
    wait_for_tool(&client, "old:where").await;
    let run = |mode: &'static str, server: &'static str, roots: &'static str| {
        let (python, url) = (python.clone(), gw.url.clone());
        async move { run_client(&python, "corners_client.py", &[url.as_str(), mode, server, roots]).await }
    };
    let step_two = json!([{ "level": "info", "data": "step two" }]);
    for mode in ["legacy", "2026-07-28"] {
        let got = run(mode, "corners", "yes").await;
        assert_eq!(got["where"], "file:///srv/project-x", "{mode}: {got}");
        assert_eq!(got["chatty"], "done", "{mode}: {got}");
        assert_eq!(got["logged"], step_two, "{mode}: info and up, once: {got}");
        // A client without roots is not asked for them: the server says so.
        let without = run(mode, "corners", "no").await;
        assert!(
            without["where"]
                .as_str()
                .unwrap()
                .contains("did not declare the roots capability"),
            "{mode}: {without}"
        );
        // A 2025 server logs through its session; roots stay undeclared there.
        let old = run(mode, "old", "yes").await;
        assert_eq!(old["chatty"], "done", "{mode}: {old}");
        assert_eq!(old["logged"], step_two, "{mode}: {old}");
        assert!(
            old["where"]
                .as_str()
                .unwrap()
                .contains("did not declare the roots capability"),
            "{mode}: {old}"
        );
    }
}

/// Issue #76, the other SDK: the official TypeScript client (2.x), in both
/// generations, gets a 2025 server's prompt and completions, a 2026-07-28
/// Python SDK server's request for its roots, and that server's log
/// messages from the level it asked for. Its 2026-07-28 mode refuses
/// `logging/setLevel` itself, before it reaches the gateway.
#[tokio::test]
#[ignore = "full tier: needs the Python SDKs and the npm packages (scripts/setup)"]
async fn the_typescript_client_gets_prompts_completions_roots_and_logs_in_both_generations() {
    let python = installed("tests/interop/.venv/bin/python", "the MCP Python SDK venv");
    let node = installed("tests/interop/node_modules/.bin/node", "Node.js (npm's node package)");
    let config = format!(
        "{}{}",
        everything_config(),
        python_server(&python, "corners", "corners_server.py", false)
    );
    let gw = Gateway::start(&config).await;
    let client = gw.client().await;
    wait_for_tool(&client, "everything:echo").await;
    wait_for_tool(&client, "corners:where").await;
    for mode in ["legacy", "2026-07-28"] {
        let got = run_client(&node, "corners_client.mjs", &[gw.url.as_str(), mode]).await;
        assert_eq!(
            got["prompt"], "Please promote Alice to the head of the Engineering team.",
            "{mode}: {got}"
        );
        assert_eq!(got["department"], json!(["Engineering"]), "{mode}: {got}");
        assert_eq!(got["lead"], json!(["Alice"]), "{mode}: {got}");
        assert_eq!(got["where"], "file:///srv/project-x", "{mode}: {got}");
        assert_eq!(got["chatty"], "done", "{mode}: {got}");
        assert_eq!(
            got["logged"],
            json!([{ "level": "info", "data": "step two" }]),
            "{mode}: {got}"
        );
        match mode {
            "legacy" => assert_eq!(got["setLevel"], "ok", "{got}"),
            _ => assert_eq!(
                got["setLevel"]["error"], "METHOD_NOT_SUPPORTED_BY_PROTOCOL_VERSION",
                "{got}"
            ),
        }
    }
}

/// Servers on the official Python SDK pull the rug
/// (`tests/interop/rug_server.py`): once their tool `notes` has been called,
/// they poison its description. Whether they announce it or not, pinning
/// holds the tool within a bound:
/// - `loud` announces it as the SDK offers at 2026-07-28, on the gateway's
///   `subscriptions/listen` stream;
/// - `quiet` announces it the 2025 way, which the SDK drops on a 2026-07-28
///   connection, but its listings say they are fresh for 2 s (`ttlMs`);
/// - `cut` ends its listen streams first, so its announcement reaches nobody:
///   the gateway listens again, and lists again when it is acknowledged;
/// - `sticky` announces it the same lost way and says its listings are fresh
///   for an hour, but the operator trusts them for half a second: the
///   gateway lists again, and past rmcp's response cache.
#[tokio::test]
#[ignore = "full tier: needs the Python SDKs (scripts/setup)"]
async fn python_sdk_servers_that_poison_a_tool_after_a_call_are_held_announced_or_not() {
    let python = installed("tests/interop/.venv/bin/python", "the MCP Python SDK venv");
    let server = |name: &str, args: &str, extra: &str| {
        format!(
            "[[servers]]\nname = \"{name}\"\ncommand = \"{}\"\nargs = [\"{}\", {args}]\n{extra}\n",
            python.display(),
            repo_path("tests/interop/rug_server.py").display()
        )
    };
    let config = format!(
        "{ANONYMOUS}{}{}{}{}",
        server("loud", r#""--announce", "listen""#, ""),
        server("quiet", r#""--announce", "session", "--ttl-ms", "2000""#, ""),
        server("cut", r#""--announce", "listen", "--end-streams""#, ""),
        server(
            "sticky",
            r#""--announce", "session", "--ttl-ms", "3600000""#,
            "tools_ttl_ms = 500"
        ),
    );
    let gw = Gateway::start(&config).await;
    let client = gw.client().await;
    for (server, why) in [
        ("loud", "list_changed"),
        ("quiet", "ttlMs"),
        ("cut", "subscribed"),
        ("sticky", "tools_ttl_ms"),
    ] {
        let key = format!("{server}:notes");
        wait_for_tool(&client, &key).await;
        assert_eq!(text(&execute(&client, &key, json!({})).await), "buy milk", "{key}");
        let held = eventually(Duration::from_secs(10), &format!("{key} held"), || async {
            let r = execute(&client, &key, json!({})).await;
            (r.is_error == Some(true) && error_code(&r) == "TOOL_HELD_FOR_REVIEW").then_some(r)
        })
        .await;
        assert!(
            text(&held).contains("its server changed its definition after it was approved"),
            "{}",
            text(&held)
        );
        let found = discover(&client, json!(["notes", "read the user's notes"])).await;
        assert!(found.iter().all(|f| f["toolKey"] != key.as_str()), "{found:?}");
        let log = gw.log();
        assert!(
            log.lines().any(|l| l.contains("downstream tools changed")
                && l.contains(&format!("server={server} "))
                && l.contains(&format!("why=\"{why}\""))),
            "{server} listed again for {why}:\n{log}"
        );
    }
    let servers: serde_json::Value = serde_json::from_slice(&gw.cli(&["servers", "--json"]).stdout).unwrap();
    assert!(
        servers.as_array().unwrap()[..4]
            .iter()
            .all(|s| s["protocol"] == "2026-07-28"),
        "{servers}"
    );
    let changes = String::from_utf8(gw.cli(&["tools", "changes"]).stdout).unwrap();
    assert!(changes.contains("read ~/.ssh/id_rsa"), "{changes}");
}

/// Code mode through the official clients: the TypeScript and the Python
/// SDK each send one script, over stdio and over streamable HTTP, that lists
/// 30 files with `@modelcontextprotocol/server-filesystem`, reads them all in
/// parallel, keeps the 3 that name someone, records them as entities in
/// `@modelcontextprotocol/server-memory`, adds with server-everything, and
/// meets its tool that asks the user mid-call; only the answer comes back.
#[tokio::test]
#[ignore = "full tier: needs the Python SDKs (scripts/setup)"]
async fn official_clients_run_scripts_over_stdio_and_http_against_npm_servers() {
    let python = installed("tests/interop/.venv/bin/python", "the MCP Python SDK venv");
    let bin_of = |name: &str| installed(&format!("tests/interop/node_modules/.bin/{name}"), name);
    let work = tempfile::tempdir().unwrap();
    let files = work.path().join("files");
    std::fs::create_dir(&files).unwrap();
    for i in 1..=30 {
        let text = match i % 10 {
            3 => format!("Notes {i}: met Ada Lovelace about the engine."),
            _ => format!("Notes {i}: nothing of note, the weather was fine."),
        };
        std::fs::write(files.join(format!("note{i}.txt")), text).unwrap();
    }
    let config = format!(
        "{ANONYMOUS}[[servers]]\nname = \"filesystem\"\ncommand = \"{}\"\nargs = [\"{}\"]\n\n\
         [[servers]]\nname = \"memory\"\ncommand = \"{}\"\nenv = {{ MEMORY_FILE_PATH = \"{}\" }}\n\n\
         [[servers]]\nname = \"everything\"\ncommand = \"{}\"\nargs = [\"stdio\"]\n",
        bin_of("mcp-server-filesystem").display(),
        files.display(),
        bin_of("mcp-server-memory").display(),
        work.path().join("memory.jsonl").display(),
        bin_of("mcp-server-everything").display(),
    );
    let script = work.path().join("task.js");
    std::fs::write(
        &script,
        format!(
            r#"const dir = "{}";
const listing = await tools.call("filesystem:list_directory", {{ path: dir }});
const names = listing.text.split("\n").filter((l) => l.startsWith("[FILE] ")).map((l) => l.slice(7));
const files = await Promise.all(names.map(async (name) => ({{ name, text: (await tools.call("filesystem:read_text_file", {{ path: `${{dir}}/${{name}}` }})).text }})));
const hits = files.filter((f) => f.text.includes("Ada Lovelace")).map((f) => f.name).sort();
await tools.call("memory:create_entities", {{ entities: hits.map((name) => ({{ name, entityType: "file", observations: ["mentions Ada Lovelace"] }})) }});
const graph = await tools.call("memory:read_graph", {{}});
const sum = await tools.call("everything:get-sum", {{ a: hits.length, b: 39 }});
const asked = await tools.call("everything:trigger-elicitation-request", {{}});
console.log(`read ${{files.length}} files`);
return {{ hits, entities: graph.structuredContent.entities.map((e) => e.name).sort(), sum: sum.text, asked: asked.isError && asked.text }};
"#,
            files.display()
        ),
    )
    .unwrap();
    let stdio_config = work.path().join("stdio").join("gateway.toml");
    std::fs::create_dir(stdio_config.parent().unwrap()).unwrap();
    std::fs::write(&stdio_config, &config).unwrap();
    let stdio = format!("stdio:{}:{}", bin(), stdio_config.display());
    let gw = Gateway::start(&config).await;

    let node = bin_of("node");
    let clients = [
        (node.as_path(), "script_client.mjs"),
        (python.as_path(), "script_client.py"),
    ];
    for (program, client) in clients {
        for target in [stdio.as_str(), gw.url.as_str()] {
            let args = [
                target,
                script.to_str().unwrap(),
                "filesystem:read_text_file",
                "memory:create_entities",
                "everything:get-sum",
            ];
            let seen = run_client(program, client, &args).await;
            let hits = json!(["note13.txt", "note23.txt", "note3.txt"]);
            assert_eq!(seen["result"]["hits"], hits, "{client} on {target}: {seen}");
            assert_eq!(seen["result"]["entities"], hits, "{client} on {target}: {seen}");
            assert_eq!(seen["result"]["sum"], "The sum of 3 and 39 is 42.", "{seen}");
            assert_eq!(seen["logs"], json!(["read 30 files"]), "{seen}");
            // A tool that asks its user mid-call is told nobody can answer inside a script.
            let asked = seen["result"]["asked"].as_str().unwrap_or_default();
            assert!(
                asked.contains("nobody can be asked mid-call") && asked.contains("script"),
                "{seen}"
            );
            assert_eq!(seen["calls"], 35, "{seen}");
        }
    }
}

/// The schema converters of three agent frameworks, run for real (offline)
/// on the gateway's `tools/list`: openai-agents makes both meta-tools
/// strict, pydantic-ai does not close `arguments` to `{}`, google-genai
/// neither crashes nor makes an empty OBJECT of it; and a call in the shape
/// a strict model sends (arguments as a JSON string, the unused field null)
/// runs. The list holds every tool of server-everything, the demo's App
/// tool and the archives' search, which closes its arguments with
/// `additionalProperties: false` (as the Index App tools do): google-genai,
/// converting the list at once, lost every tool to that keyword.
#[tokio::test]
#[ignore = "full tier: needs the Python SDKs and server-everything (scripts/setup)"]
async fn agent_frameworks_schema_converters_keep_the_meta_tools_usable() {
    let python = installed("tests/interop/.venv/bin/python", "the interop venv");
    let notes = tempfile::tempdir().unwrap();
    let archives = format!(
        "[archives]\nfolders = [{}]\ndb_path = {}\n\n",
        serde_json::to_string(&notes.path()).unwrap(),
        serde_json::to_string(&notes.path().join("search.db")).unwrap()
    );
    let gw = Gateway::start(&format!("{archives}{}", everything_config())).await;
    gw.cli(&["project", "set-exposure", "local", "both"]);
    let client = gw.client().await;
    // What the listing leaves out, discovery shows, and a call is held to.
    wait_for_tool(&client, "everything:get-sum").await;
    wait_for_tool(&client, "archives:searchLocalArchives").await;
    let found = discover(&client, json!("search the local archives")).await;
    let search = found
        .iter()
        .find(|r| r["toolKey"] == "archives:searchLocalArchives")
        .unwrap();
    assert_eq!(search["inputSchema"]["additionalProperties"], false, "{search}");
    let extra = json!({ "query": "aardvark", "unknown": 1 });
    let r = execute(&client, "archives:searchLocalArchives", extra).await;
    assert_eq!(error_code(&r), "TOOL_VALIDATION_ERROR", "{r:?}");

    let tools = client.list_all_tools().await.unwrap();
    let listed = |name: &str| {
        tools
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("{name}: {tools:?}"))
    };
    listed("everything__get-sum");
    listed("demo__echo");
    assert!(
        !serde_json::to_string(&listed("archives__searchLocalArchives").input_schema)
            .unwrap()
            .contains("additionalProperties"),
        "{tools:?}"
    );
    let listed = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(listed.path(), serde_json::to_string(&tools).unwrap()).unwrap();
    let seen = run_client(&python, "converters.py", &[listed.path().to_str().unwrap()]).await;
    assert_eq!(seen["errors"], json!([]), "{seen}");
    assert_eq!(seen["googleGenai"].as_object().unwrap().len(), tools.len());
    for tool in ["tool_discovery", "tool_execute"] {
        let agents = &seen["openaiAgents"][tool];
        assert_eq!(
            agents["strict"], true,
            "openai-agents, {tool}: {}",
            agents["strictError"]
        );
        assert!(!agents["schema"].to_string().contains("\"default\""), "{agents}");
        let entries = [
            ("openai-agents", agents),
            ("pydantic-ai openai", &seen["pydanticAi"][tool]["openai"]),
            ("pydantic-ai responses", &seen["pydanticAi"][tool]["openaiResponses"]),
            ("pydantic-ai google", &seen["pydanticAi"][tool]["google"]),
            ("google-genai", &seen["googleGenai"][tool]),
        ];
        for (who, entry) in entries {
            for spoiled in ["closedEmptyObjects", "emptyObjects", "untyped", "arraysWithoutItems"] {
                assert_eq!(
                    entry[spoiled],
                    json!([]),
                    "{who}, {tool}, {spoiled}: {}",
                    entry["schema"]
                );
            }
        }
    }
    let arguments = |entry: &serde_json::Value| entry["schema"]["properties"]["arguments"]["type"].clone();
    assert_eq!(
        arguments(&seen["openaiAgents"]["tool_execute"]),
        json!(["string", "null"])
    );
    assert_eq!(
        arguments(&seen["pydanticAi"]["tool_execute"]["openai"]),
        json!(["string", "null"])
    );
    assert_eq!(arguments(&seen["googleGenai"]["tool_execute"]), json!("STRING"));

    wait_for_tool(&client, "demo:calculate").await;
    let strict = json!({ "toolKey": "demo:calculate", "arguments": "{\"expression\": \"2+40\"}", "script": null });
    let r = call(&client, "tool_execute", strict).await;
    assert_eq!(text(&r), "2+40 = 42", "{r:?}");
    let scripted = json!({ "toolKey": null, "arguments": null, "script": "return 6 * 7" });
    let r = call(&client, "tool_execute", scripted).await;
    assert_eq!(r.structured_content.unwrap()["result"], 42);
}

/// smolagents, as an agent gets the gateway's tools from it
/// (`ToolCollection.from_mcp`, by mcpadapt): what its models send OpenAI
/// for each meta-tool is a schema OpenAI takes. It flattened `query`'s
/// `anyOf` into `["string", "array"]` without `items`, which OpenAI refuses
/// outright. A discovery of several queries and an execute then run.
#[tokio::test]
#[ignore = "full tier: needs smolagents (scripts/setup)"]
async fn smolagents_sends_the_meta_tools_as_openai_takes_them() {
    let python = installed("tests/interop/.venv-sdk1/bin/python", "the MCP SDK 1.x venv");
    let gw = Gateway::start(&format!("{ANONYMOUS}{}", chaos_server("demo", ""))).await;
    wait_for_tool(&gw.client().await, "demo:calculate").await;
    let args = [gw.url.as_str(), "demo:calculate", r#"{"expression": "2+40"}"#];
    let seen = run_client(&python, "smolagents_client.py", &args).await;
    for tool in ["tool_discovery", "tool_execute"] {
        let entry = &seen["tools"][tool];
        for spoiled in ["closedEmptyObjects", "emptyObjects", "untyped", "arraysWithoutItems"] {
            assert_eq!(entry[spoiled], json!([]), "{tool}, {spoiled}: {}", entry["schema"]);
        }
    }
    let query = &seen["tools"]["tool_discovery"]["schema"]["properties"]["query"];
    assert_eq!(query["items"], json!({ "type": "string" }), "{query}");
    assert!(
        seen["found"].as_array().unwrap().contains(&json!("demo:calculate")),
        "{seen}"
    );
    assert_eq!(seen["ran"], "2+40 = 42", "{seen}");
}

/// mcp-use looks for OAuth metadata before it connects to any HTTP server
/// (and logs "Failed to discover OAuth/OIDC metadata" when there is none).
/// A gateway that needs no token has none to give: the MCP authorization
/// spec asks for protected-resource metadata only of a server that takes
/// tokens, and the official SDKs look for it only after a 401. Metadata
/// naming an authorization server would send mcp-use into a browser sign-in
/// nobody needs; without it, mcp-use goes on without a token, and works.
#[tokio::test]
#[ignore = "full tier: needs mcp-use (scripts/setup)"]
async fn mcp_use_connects_to_a_gateway_that_needs_no_token() {
    let python = installed("tests/interop/.venv-sdk1/bin/python", "the MCP SDK 1.x venv");
    let gw = Gateway::start(&format!("{ANONYMOUS}{}", chaos_server("demo", ""))).await;
    wait_for_tool(&gw.client().await, "demo:calculate").await;
    let base = gw.url.trim_end_matches("/mcp");
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ] {
        let status = reqwest::get(format!("{base}{path}")).await.unwrap().status();
        assert_eq!(status, 404, "{path}");
    }
    let args = [gw.url.as_str(), "demo:calculate", r#"{"expression": "2+40"}"#];
    let seen = run_client(&python, "mcp_use_client.py", &args).await;
    let tools = seen["tools"].as_array().unwrap();
    assert_eq!(tools[..2], [json!("tool_discovery"), json!("tool_execute")], "{seen}");
    assert_eq!(seen["text"], "2+40 = 42", "{seen}");
    assert_eq!(seen["oauth"], false, "no sign-in, no token: {seen}");
}

/// A 2025 server that takes 4 s to start, on a gateway's first connection:
/// openai-agents starts the gateway over stdio and runs the server's tool at
/// once. The server refused the `server/discover` probe and was started
/// again for `initialize` (two starts, 10.4 s to the first answer here, past
/// openai-agents' 5 s timeout); the child that answered the probe now gets
/// `initialize` on the same pipe: one start.
#[tokio::test]
#[ignore = "full tier: needs the Python SDKs (scripts/setup)"]
async fn a_slow_legacy_server_is_started_once_for_the_first_call() {
    let python = installed("tests/interop/.venv/bin/python", "the interop venv");
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let config = dir.path().join("gateway.toml");
    let server = format!(
        "echo started >> '{}'; sleep 4; exec '{}' '{}' --legacy",
        starts.display(),
        python.display(),
        repo_path("tests/interop/corners_server.py").display()
    );
    let toml = format!(
        "{ANONYMOUS}[store]\npath = {}\n\n[[servers]]\nname = \"slow\"\ncommand = \"sh\"\nargs = [\"-c\", {}]\n",
        serde_json::to_string(&dir.path().join("gw.db")).unwrap(),
        serde_json::to_string(&server).unwrap()
    );
    std::fs::write(&config, toml).unwrap();
    // A generous timeout: what is asserted is the number of starts, not the time.
    let args = [bin(), config.to_str().unwrap(), "slow:chatty", "{}", "60"];
    let seen = run_client(&python, "agents_client.py", &args).await;
    assert_eq!(seen["text"], "done", "{seen}");
    assert_eq!(seen["isError"], false, "{seen}");
    let started = std::fs::read_to_string(&starts).unwrap();
    assert_eq!(started.lines().count(), 1, "started once: {seen}");
}

/// The README's MCP Inspector lines, run as written (in the Inspector's
/// CLI mode, which takes the same arguments as its web UI), each list the
/// two meta-tools. The Inspector has a `--config` of its own: the line
/// the README once showed, without `--`, is refused by it.
#[tokio::test]
#[ignore = "full tier: needs the MCP Inspector (scripts/setup)"]
async fn the_readmes_inspector_command_lines_reach_the_gateway() {
    let inspector = installed("tests/interop/node_modules/.bin/mcp-inspector", "the MCP Inspector");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.toml");
    std::fs::write(&config, format!("{ANONYMOUS}{}", chaos_server("demo", ""))).unwrap();
    // The Inspector needs Node.js 22; npm's `node` package puts it beside it.
    let path = format!(
        "{}:{}",
        inspector.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |args: Vec<String>| {
        let mut all = vec!["--cli".to_string(), "--method".into(), "tools/list".into()];
        all.extend(args);
        std::process::Command::new(&inspector)
            .env("PATH", &path)
            .args(&all)
            .output()
            .unwrap()
    };
    let readme = std::fs::read_to_string(repo_path("README.md")).unwrap();
    let lines: Vec<Vec<String>> = readme
        .lines()
        .filter_map(|l| l.strip_prefix("npx @modelcontextprotocol/inspector "))
        .map(|l| {
            l.replace("/path/to/mcp-gateway", bin())
                .replace("/path/to/gateway.toml", config.to_str().unwrap())
                .split_whitespace()
                .map(String::from)
                .collect()
        })
        .collect();
    assert_eq!(
        lines.len(),
        2,
        "the README shows two ways: after `--`, and by MCP_GATEWAY_CONFIG"
    );
    for line in lines {
        let out = run(line.clone());
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("\"tool_discovery\"") && stdout.contains("\"tool_execute\""),
            "{line:?}:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    let bare = run(vec![
        bin().into(),
        "serve".into(),
        "--config".into(),
        config.to_str().unwrap().into(),
    ]);
    let said = String::from_utf8_lossy(&bare.stdout) + String::from_utf8_lossy(&bare.stderr);
    assert!(
        !bare.status.success() && said.contains("--config cannot be combined"),
        "the Inspector takes a bare --config as its own: {said}"
    );
}
