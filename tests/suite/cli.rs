//! The command line, run as a user would: check, import, servers, search, call, serve.

use crate::common;

use std::io::{BufRead, Write};
use std::process::{Command, Output, Stdio};

use common::{ANONYMOUS, bin, chaos_server, repo_path};

fn run(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .current_dir(dir)
        .env_remove("MCP_GATEWAY_CONFIG")
        .output()
        .expect("the binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn the_shipped_config_checks_clean() {
    let o = run(&repo_path("."), &["check", "--config", "gateway.toml"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("gateway.toml: ok"), "{}", stdout(&o));
}

#[test]
fn a_typo_is_reported_with_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("gateway.toml"),
        "# servers\n\n[[servers]]\nname = \"fs\"\ncomand = \"x\"\n",
    )
    .unwrap();
    let o = run(dir.path(), &["check"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("gateway.toml"), "{err}");
    assert!(err.contains("line 5"), "{err}");
    assert!(
        err.contains("unknown field `comand`") && err.contains("`command`"),
        "says what was expected: {err}"
    );

    // `serve` refuses the same file at once instead of starting half a gateway.
    let o = run(dir.path(), &["serve"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("unknown field `comand`"));
}

#[test]
fn a_rule_violation_is_reported_with_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let text =
        "[[servers]]\nname = \"a\"\ncommand = \"x\"\n\n[[servers]]\nname = \"b:c\"\nurl = \"http://127.0.0.1:1/mcp\"\n";
    std::fs::write(dir.path().join("gw.toml"), text).unwrap();
    let o = run(dir.path(), &["check", "--config", "gw.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("gw.toml:6: servers[1].name: server name 'b:c' may not contain ':'"),
        "{}",
        stderr(&o)
    );

    let o = run(dir.path(), &["check", "--config", "missing.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot read missing.toml"), "{}", stderr(&o));
}

#[test]
fn a_missing_archive_folder_fails_check_with_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("notes")).unwrap();
    let text = "[http]\nallowed_hosts = [\"localhost\"]\n\n[archives]\nfolders = [\"notes\", \"nowhere\"]\n";
    std::fs::write(dir.path().join("gw.toml"), text).unwrap();
    let o = run(dir.path(), &["check", "--config", "gw.toml"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("gw.toml:4: archives.folders[1]: archive folder './nowhere' does not exist; create it"),
        "{}",
        stderr(&o)
    );

    std::fs::create_dir(dir.path().join("nowhere")).unwrap();
    let o = run(dir.path(), &["check", "--config", "gw.toml"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("built-in 'archives': configured"), "{}", stdout(&o));
}

#[test]
fn import_turns_mcp_servers_json_into_a_config_that_checks() {
    let dir = tempfile::tempdir().unwrap();
    let json = r#"{"mcpServers": {
        "demo": {"command": "DEMO_BIN", "args": ["demo-server"]},
        "remote": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${TOKEN:-none}"}}
    }}"#
    .replace("DEMO_BIN", bin());
    std::fs::write(dir.path().join("claude_desktop_config.json"), &json).unwrap();
    let o = run(dir.path(), &["import", "claude_desktop_config.json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let toml = stdout(&o);
    assert!(
        toml.contains("[[servers]]") && toml.contains("name = \"remote\""),
        "{toml}"
    );
    std::fs::write(dir.path().join("gateway.toml"), &toml).unwrap();
    let o = run(dir.path(), &["check"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("2 servers"), "{}", stdout(&o));

    // The JSON file also works as a config as it is.
    let o = run(
        dir.path(),
        &["project", "create", "p", "--config", "claude_desktop_config.json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(
        dir.path(),
        &[
            "grant",
            "--project",
            "p",
            "--server",
            "demo",
            "--config",
            "claude_desktop_config.json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(
        dir.path(),
        &[
            "call",
            "--config",
            "claude_desktop_config.json",
            "--project",
            "p",
            "demo:calculate",
            r#"{"expression": "6*7"}"#,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("42"), "{}", stdout(&o));
}

#[test]
fn mcp_servers_keys_with_spaces_become_server_names_with_their_title_kept() {
    let dir = tempfile::tempdir().unwrap();
    // As in a public benchmark's Claude Desktop config.
    let json = r#"{"mcpServers": {"Ant Design Components": {"command": "DEMO_BIN", "args": ["demo-server"]}}}"#
        .replace("DEMO_BIN", bin());
    std::fs::write(dir.path().join("claude.json"), &json).unwrap();

    let o = run(dir.path(), &["check", "--config", "claude.json"]);
    assert!(o.status.success(), "the file is accepted as it is: {}", stderr(&o));
    let o = run(dir.path(), &["servers", "--json", "--config", "claude.json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let servers: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ant = servers
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "ant-design-components")
        .unwrap_or_else(|| panic!("{servers}"));
    assert_eq!(ant["title"], "Ant Design Components");
    assert_eq!(ant["status"], "running", "{ant}");

    // The title is searchable.
    for args in [
        &["project", "create", "p"][..],
        &["grant", "--project", "p", "--server", "ant-design-components"],
    ] {
        let o = run(dir.path(), &[args, &["--config", "claude.json"]].concat());
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    }
    let o = run(
        dir.path(),
        &[
            "search",
            "ant design components",
            "-n",
            "3",
            "--project",
            "p",
            "--config",
            "claude.json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("ant-design-components:"), "{}", stdout(&o));

    // import says what it renamed, and prints TOML that check accepts.
    let o = run(dir.path(), &["import", "claude.json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("renamed 'Ant Design Components' to 'ant-design-components'"),
        "{}",
        stderr(&o)
    );
    std::fs::write(dir.path().join("gateway.toml"), stdout(&o)).unwrap();
    let o = run(dir.path(), &["check"]);
    assert!(o.status.success(), "{}", stderr(&o));

    // A legacy SSE server is refused the same way by import and --config,
    // never turned quietly into a streamable HTTP one that check passes.
    let sse = r#"{"mcpServers": {"old": {"type": "sse", "url": "http://127.0.0.1:9/sse"}}}"#;
    std::fs::write(dir.path().join("sse.json"), sse).unwrap();
    for args in [&["import", "sse.json"][..], &["check", "--config", "sse.json"]] {
        let o = run(dir.path(), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stdout(&o));
        assert!(
            stderr(&o).contains("legacy SSE transport is not supported"),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(stdout(&o).is_empty(), "{args:?}: {}", stdout(&o));
    }

    // Only a real collision is refused, naming both keys.
    let clash = r#"{"mcpServers": {"My Server": {"command": "a"}, "my-server": {"command": "b"}}}"#;
    std::fs::write(dir.path().join("clash.json"), clash).unwrap();
    let o = run(dir.path(), &["check", "--config", "clash.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("'My Server' and 'my-server'"), "{}", stderr(&o));
}

#[test]
fn the_embedded_default_serves_something_real_with_no_config_file() {
    let dir = tempfile::tempdir().unwrap(); // no gateway.toml here
    let o = run(dir.path(), &["search", "convert celsius to fahrenheit", "-n", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o)
            .lines()
            .next()
            .unwrap_or("")
            .contains("demo:convert_temperature"),
        "{}",
        stdout(&o)
    );

    let o = run(
        dir.path(),
        &[
            "call",
            "demo:convert_temperature",
            r#"{"value": 100, "from": "C", "to": "F"}"#,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("212"), "the answer's text: {}", stdout(&o));
    let o = run(
        dir.path(),
        &[
            "call",
            "demo:convert_temperature",
            r#"{"value": 100, "from": "C", "to": "F"}"#,
            "--json",
        ],
    );
    let result: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(result["structuredContent"]["value"], 212.0);

    let o = run(dir.path(), &["call", "demo:nope"]);
    assert_eq!(o.status.code(), Some(1), "a failed call exits 1");
    assert!(
        stdout(&o).starts_with("TOOL_NOT_FOUND: unknown toolKey 'demo:nope'"),
        "{}",
        stdout(&o)
    );
}

/// Issue #75: `check --json` says what is wrong as fields a script reads,
/// and `import --json` names what it renamed.
#[test]
fn check_and_import_speak_json() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("gw.toml"),
        "[[servers]]\nname = \"a\"\ncommnd = \"x\"\n",
    )
    .unwrap();
    let o = run(dir.path(), &["check", "--config", "gw.toml", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let said: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(said["valid"], false);
    assert!(said["error"].as_str().unwrap().contains("commnd"), "{said}");

    std::fs::write(
        dir.path().join("gw.toml"),
        "[[rules]]\npattern = [\"*\"]\nserver = \"gone\"\n",
    )
    .unwrap();
    let o = run(dir.path(), &["check", "--config", "gw.toml", "--json"]);
    let said: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (said["line"].as_u64(), said["key"].as_str()),
        (Some(2), Some("rules[0].server")),
        "{said}"
    );

    std::fs::write(
        dir.path().join("gw.toml"),
        format!("{ANONYMOUS}{}", chaos_server("red", "")),
    )
    .unwrap();
    let o = run(dir.path(), &["check", "--config", "gw.toml", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let said: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (said["valid"].as_bool(), said["servers"].as_u64()),
        (Some(true), Some(1)),
        "{said}"
    );

    std::fs::write(
        dir.path().join("claude.json"),
        r#"{"mcpServers": {"My Notes": {"command": "notes-mcp"}}}"#,
    )
    .unwrap();
    let o = run(dir.path(), &["import", "claude.json", "--json"]);
    let said: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(said["renamed"][0]["from"], "My Notes");
    let name = said["renamed"][0]["to"].as_str().unwrap();
    assert!(
        said["toml"].as_str().unwrap().contains(&format!("name = \"{name}\"")),
        "{said}"
    );
}

/// `call` runs a tool as `tool_execute` does, audit row included: each call
/// an operator makes from the command line is in the log as a model's is.
#[test]
fn a_call_from_the_command_line_is_audited_as_tool_execute_is() {
    let dir = tempfile::tempdir().unwrap();
    let config = format!("{ANONYMOUS}{}", chaos_server("demo", ""));
    std::fs::write(dir.path().join("gateway.toml"), config).unwrap();
    let o = run(dir.path(), &["call", "demo:calculate", r#"{"expression": "6*7"}"#]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(dir.path(), &["call", "demo:nope"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));

    let o = run(dir.path(), &["audit", "tail", "-n", "5", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rows: Vec<(&str, &str, &str)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let field = |name: &str| r[name].as_str().unwrap_or("");
            (field("metaTool"), field("toolKey"), field("outcome"))
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("tool_execute", "demo:calculate", "ok"),
            ("tool_execute", "demo:nope", "denied")
        ],
        "one row per call, as a model's"
    );
}

#[test]
fn servers_shows_status_tool_counts_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    // A rule disables one of alpha's tools (issue #72, 7: `enabledCount`).
    let config = format!(
        "{ANONYMOUS}{}[[servers]]\nname = \"broken\"\ncommand = \"/no/such/binary\"\n\n[[servers]]\nname = \"off\"\ncommand = \"x\"\nenabled = false\n\n[[rules]]\npattern = [\"crash\"]\nenabled = false\n",
        chaos_server("alpha", "")
    );
    std::fs::write(dir.path().join("gateway.toml"), config).unwrap();
    let o = run(dir.path(), &["servers", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(rows[0]["status"], "running");
    assert_eq!(rows[0]["tools"], 22);
    assert_eq!(rows[0]["enabledCount"], 21, "{rows}");
    assert_eq!(rows[1]["status"], "failed");
    assert!(rows[1]["error"].as_str().unwrap().contains("/no/such/binary"));
    assert_eq!(rows[2]["status"], "stopped");

    let o = run(dir.path(), &["servers"]);
    let table = stdout(&o);
    assert!(table.lines().next().unwrap().starts_with("SERVER"), "{table}");
    assert!(table.contains("alpha") && table.contains("running"), "{table}");
    assert!(table.contains("21/22"), "{table}");
}

#[test]
fn json_logs_on_request() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("gateway.toml"),
        format!("{ANONYMOUS}{}", chaos_server("alpha", "")),
    )
    .unwrap();
    let mut child = Command::new(bin())
        .args(["serve", "--log-format", "json"])
        .env("RUST_LOG", "info")
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // A garbage line on stdio gets a JSON-RPC parse error, then a real request an answer.
    writeln!(stdin, "{{garbage").unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":7,"method":"ping"}}"#).unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    let mut second = String::new();
    out.read_line(&mut second).unwrap();
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    // JSON-RPC does not order answers: the ping may overtake the parse error.
    let mut answers: Vec<serde_json::Value> = [&first, &second]
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .to_vec();
    answers.sort_by_key(|a| a["id"].is_null());
    let (pong, parse_error) = (&answers[0], &answers[1]);
    assert_eq!(pong["id"], 7, "{first}{second}");
    assert_eq!(pong["result"], serde_json::json!({}), "{first}{second}");
    assert_eq!(parse_error["error"]["code"], -32700, "{first}{second}");
    assert!(parse_error["id"].is_null(), "{first}{second}");
    let logs = stderr(&o);
    assert!(!logs.is_empty());
    for line in logs.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert!(v["level"].is_string(), "{line}");
    }
}

/// A client of `mcp-gateway serve` on its stdin and stdout, in raw JSON-RPC lines.
struct StdioSession {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    out: std::io::BufReader<std::process::ChildStdout>,
}

impl StdioSession {
    /// Runs `serve` as `command` sets it up (folder, environment, stderr)
    /// and opens a session: `initialize`, then `notifications/initialized`.
    fn open(mut command: Command) -> Self {
        let mut child = command
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut session = Self { child, stdin, out };
        session.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#);
        session.answer("0");
        session.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        session
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
    }

    /// The line answering request `id` (as JSON writes it: `1`, `"big"`);
    /// notifications (list_changed) may come first.
    fn answer(&mut self, id: &str) -> String {
        let mut line = String::new();
        while !line.contains(&format!(r#""id":{id}"#)) {
            line.clear();
            assert!(self.out.read_line(&mut line).unwrap() > 0, "stdout closed");
        }
        line
    }

    /// Closes stdin, which ends the gateway; what it left.
    fn close(self) -> Output {
        drop(self.stdin);
        self.child.wait_with_output().unwrap()
    }
}

/// A `tool_execute` of alpha's `calculate` as request `id`.
fn calculate(id: &str, expression: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"tool_execute","arguments":{{"toolKey":"alpha:calculate","arguments":{{"expression":"{expression}"}}}}}}}}"#
    )
}

/// The gateway's peak memory (VmHWM), in KiB.
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// A stdio client's line is bounded as an HTTP body is: a 192 MiB request
/// gets its error by id, and the gateway never holds it (its peak memory
/// grows by a third of the line at most, most of that the gateway's own
/// start settling); the session goes on.
#[test]
fn a_stdio_line_past_the_limit_gets_its_error_and_is_never_held() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("gateway.toml"),
        format!("{ANONYMOUS}{}", chaos_server("alpha", "")),
    )
    .unwrap();
    let mut command = Command::new(bin());
    command.current_dir(dir.path()).stderr(Stdio::null());
    let mut session = StdioSession::open(command);
    session.send(&calculate("1", "1+2"));
    let line = session.answer("1");
    assert!(line.contains("1+2 = 3"), "{line}");
    let before = peak_kib(session.child.id());

    let big = calculate(r#""big""#, &"9".repeat(192 << 20));
    session.send(&big);
    session.send(&calculate("2", "2+3"));
    let line = session.answer(r#""big""#);
    let refusal: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(refusal["error"]["code"], -32600, "{line}");
    let says = refusal["error"]["message"].as_str().unwrap();
    assert!(
        says.contains(&format!("{} bytes", big.len())) && says.contains("4 MiB"),
        "{says}"
    );
    let line = session.answer("2");
    assert!(line.contains("2+3 = 5"), "{line}");
    let grew = peak_kib(session.child.id()).saturating_sub(before);
    assert!(grew < 64 << 10, "the peak grew by {grew} KiB for a 192 MiB line");
    assert!(session.close().status.success());
}

/// A client that starts the gateway over stdio may show its stderr to the
/// user: a line per call is noise there, so stdio alone logs warnings only,
/// unless RUST_LOG asks for more.
#[test]
fn stdio_alone_logs_only_warnings_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("gateway.toml"),
        format!("{ANONYMOUS}{}", chaos_server("alpha", "")),
    )
    .unwrap();
    let session = |rust_log: Option<&str>| {
        let mut command = Command::new(bin());
        command
            .current_dir(dir.path())
            .env_remove("RUST_LOG")
            .stderr(Stdio::piped());
        if let Some(level) = rust_log {
            command.env("RUST_LOG", level);
        }
        let mut session = StdioSession::open(command);
        session.send(&calculate("1", "1+2"));
        let line = session.answer("1");
        assert!(line.contains("1+2 = 3"), "{line}");
        stderr(&session.close())
    };
    let quiet = session(None);
    assert!(!quiet.contains(" INFO "), "{quiet}");
    let asked = session(Some("info"));
    assert!(asked.contains(" INFO ") && asked.contains("tool_execute"), "{asked}");
}

#[test]
fn a_corrupt_store_stops_the_gateway_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("gateway.toml"),
        format!("{ANONYMOUS}{}", chaos_server("alpha", "")),
    )
    .unwrap();
    std::fs::write(dir.path().join("mcp-gateway.db"), vec![b'#'; 4096]).unwrap();
    let o = run(dir.path(), &["serve"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("mcp-gateway.db") && err.contains("not a SQLite database"),
        "{err}"
    );
}

#[test]
fn help_teaches() {
    let o = run(&repo_path("."), &["--help"]);
    let help = stdout(&o);
    for needle in ["tool_discovery", "serve --http", "Examples:", "MCP_GATEWAY_CONFIG"] {
        assert!(help.contains(needle), "--help lacks {needle}:\n{help}");
    }
    for sub in ["serve", "check", "import", "servers", "search", "call"] {
        let o = run(&repo_path("."), &[sub, "--help"]);
        assert!(o.status.success(), "{sub} --help");
        assert!(stdout(&o).contains("--config"), "{sub} --help shows --config");
    }
}

/// Every key of a `--json` answer, outside tool-defined schemas.
fn keys(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                out.push(k.clone());
                if !matches!(k.as_str(), "inputSchema" | "outputSchema") {
                    keys(v, out);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| keys(v, out)),
        _ => {}
    }
}

#[test]
fn every_json_output_uses_camel_case_keys() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("gateway.toml"),
        format!("{ANONYMOUS}{}", chaos_server("red", "")),
    )
    .unwrap();
    let ok = |args: &[&str]| {
        let o = run(dir.path(), args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        o
    };
    std::fs::write(
        dir.path().join("claude.json"),
        r#"{"mcpServers": {"My Notes": {"command": "notes-mcp"}}}"#,
    )
    .unwrap();
    ok(&["project", "create", "alpha"]);
    ok(&["grant", "--project", "alpha", "--server", "red"]);
    ok(&["search", "echo", "--json"]);
    let outputs = [
        vec!["token", "issue", "--project", "alpha", "--json"],
        vec!["token", "list", "--json"],
        vec!["project", "list", "--json"],
        vec!["project", "show", "alpha", "--json"],
        vec![
            "grant",
            "--project",
            "alpha",
            "--server",
            "red",
            "--tool",
            "echo",
            "--json",
        ],
        // `audit tail --json` is checked where calls have been made (tests/suite/projects.rs).
        vec!["servers", "--json"],
        vec!["search", "echo the arguments", "--json"],
        vec!["check", "--json"],
        vec!["import", "claude.json", "--json"],
        vec!["call", "red:word_count", r#"{"text": "a b"}"#, "--json"],
    ];
    for args in outputs {
        let o = ok(&args);
        let value: serde_json::Value =
            serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {}", stdout(&o)));
        let mut found = Vec::new();
        keys(&value, &mut found);
        assert!(!found.is_empty(), "{args:?} printed no keys");
        let camel = |k: &str| k.chars().next().is_some_and(|c| c.is_ascii_lowercase()) && !k.contains(['_', '-', ' ']);
        let bad: Vec<&String> = found.iter().filter(|k| !camel(k)).collect();
        assert!(bad.is_empty(), "{args:?}: keys not in camelCase: {bad:?}");
    }
}

#[test]
fn relevance_prints_with_three_decimals() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("gateway.toml"),
        format!("{ANONYMOUS}{}", chaos_server("red", "")),
    )
    .unwrap();
    let o = run(dir.path(), &["search", "count the words of a text", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let value: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let results = value["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for r in results {
        let printed = r["relevance"].to_string();
        let decimals = printed.split_once('.').map_or(0, |(_, d)| d.len());
        assert!(decimals <= 3, "relevance printed as {printed}");
    }
}

#[test]
fn a_database_url_in_mcp_gateway_db_is_refused_not_made_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("gateway.toml"), ANONYMOUS).unwrap();
    let run = |command: &[&str], url: &str| {
        Command::new(bin())
            .args(command)
            .current_dir(dir.path())
            .env_remove("MCP_GATEWAY_CONFIG")
            .env("MCP_GATEWAY_DB", url)
            .output()
            .unwrap()
    };
    for command in [&["check"][..], &["project", "list"]] {
        let o = run(command, "mysql://gw:hunter2@db.example.com/gw");
        assert_eq!(o.status.code(), Some(2), "{command:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains("MCP_GATEWAY_DB") && err.contains("mysql URL"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
    }
    assert!(!dir.path().join("mysql:").exists(), "no folder named after the URL");
    // A PostgreSQL store that does not answer: said at once, without the password.
    let o = run(&["project", "list"], "postgres://gw:hunter2@127.0.0.1:9/gw");
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("cannot open the store postgres://gw:***@127.0.0.1:9/gw"),
        "{err}"
    );
    assert!(!err.contains("hunter2"), "{err}");
}

#[test]
fn eval_replay_says_which_replay_runs_and_scores_both_splits() {
    let dir = tempfile::tempdir().unwrap();
    // BM25 only (no model): four replays, seconds each.
    std::fs::write(dir.path().join("gateway.toml"), "[search.semantic]\nenabled = false\n").unwrap();
    let data = repo_path("benches/data");
    let o = run(dir.path(), &["eval", "--replay", "--data", data.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let progress: Vec<String> = stderr(&o).lines().map(str::to_owned).collect();
    assert_eq!(
        progress,
        [
            "replay 1/4: holdout, bm25 terms",
            "replay 2/4: holdout, bm25 terms, a failing execute after each call",
            "replay 3/4: servers 1/2, bm25 terms",
            "replay 4/4: servers 2/2, bm25 terms",
        ]
    );
    let table = stdout(&o);
    for split in ["holdout ", "servers (pooled over 2) "] {
        assert!(
            table.lines().any(|l| l.starts_with(split) && l.contains(" 1000 ")),
            "no 1,000-call row for {split:?}:\n{table}"
        );
    }
}
