//! Tests of `config`.

use super::*;

fn parse(text: &str) -> Result<Config, Error> {
    Config::parse(text, "test.toml", Path::new("/etc/gw"))
}

/// Each (text, line, key, words of the message) must be refused just so.
fn assert_invalid(cases: &[(&str, usize, &str, &str)]) {
    for &(text, line, key, needle) in cases {
        match parse(text) {
            Err(Error::Invalid {
                line: l,
                key: k,
                message,
                ..
            }) => {
                assert_eq!((l, k.as_str()), (line, key), "{text}");
                assert!(message.contains(needle), "{message}");
            }
            other => panic!("{text}: expected Invalid, got {other:?}"),
        }
    }
}

/// Issue #75: a removed server's every reference is named at once.
#[test]
fn every_reference_to_a_missing_server_is_named_at_once() {
    let text = "[[servers]]\nname = \"a\"\ncommand = \"x\"\n\n\
        [[rules]]\npattern = [\"*\"]\nserver = \"gl\"\n\n\
        [[overrides]]\ntool = \"gl:search\"\nhidden = true\n\n\
        [[limits]]\nserver = \"gl\"\nper_minute = 3\n";
    let cases = [(
        text,
        6,
        "rules[0].server",
        "3 times: line 6 rules[0].server ('gl'), line 10 overrides[0].tool ('gl'), line 14 limits[0].server ('gl')",
    )];
    assert_invalid(&cases);
}

#[test]
fn only_settings_read_at_start_need_a_restart() {
    let base = "[[servers]]\nname = \"a\"\ncommand = \"x\"\n";
    let old = parse(base).unwrap();
    let servers_and_rules =
        format!("{base}[[servers]]\nname = \"b\"\ncommand = \"y\"\n[[rules]]\npattern = [\"*\"]\ntags = [\"t\"]\n");
    assert!(old.needs_restart(&parse(&servers_and_rules).unwrap()).is_empty());
    let moved =
        format!("[store]\npath = \"other.db\"\n[auth]\nallow_anonymous = true\nanonymous_project = \"p\"\n{base}");
    assert_eq!(
        old.needs_restart(&parse(&moved).unwrap()),
        ["[store]"],
        "who gets in follows the file at once"
    );
}

#[test]
fn embedded_default_is_valid() {
    let config = Config::load(None).expect("the shipped gateway.toml parses");
    assert!(config.enabled_servers().count() >= 1);
    assert_eq!(config.startup_wait, DEFAULT_STARTUP_WAIT);
    let off = parse("[startup]\nwait_ms = 0\n").unwrap();
    assert_eq!(off.startup_wait, Duration::ZERO);
}

#[test]
fn stdio_and_http_servers() {
    let c = parse(
        r#"
[[servers]]
name = "fs"
command = "./bin/fs"
args = ["--root", "/tmp"]
cwd = "work"
timeout_ms = 1500

[[servers]]
name = "remote"
url = "https://example.com/mcp"
headers = { Authorization = "Bearer x" }
enabled = false
tools_ttl_ms = 60000
"#,
    )
    .unwrap();
    assert_eq!(
        c.servers.len(),
        4,
        "two configured, then the built-ins index and archives"
    );
    assert_eq!(
        c.servers[2].unconfigured().as_deref(),
        Some("not configured: set [index] protocol_api_url (or PROTOCOL_API_URL)")
    );
    assert_eq!(c.servers[0].timeout, Duration::from_millis(1500));
    assert_eq!(
        c.servers[0].transport,
        Transport::Stdio {
            command: "/etc/gw/./bin/fs".into(),
            args: vec!["--root".into(), "/tmp".into()],
            env: BTreeMap::new(),
            env_passthrough: Vec::new(),
            cwd: Some(PathBuf::from("/etc/gw/work")),
        }
    );
    assert!(!c.servers[1].enabled);
    assert_eq!(c.enabled_servers().count(), 1, "the built-in index is not configured");
    // Every server is listed again within a bound, a child process too.
    assert_eq!(c.servers[0].tools_ttl, Duration::from_secs(300));
    assert_eq!(c.servers[1].tools_ttl, Duration::from_secs(60));
}

#[test]
fn env_passthrough_takes_variable_names_but_never_the_gateways_own() {
    let c = parse("[[servers]]\nname = \"a\"\ncommand = \"x\"\nenv_passthrough = [\"PGPASSWORD\", \"_X1\"]\n").unwrap();
    assert!(
        matches!(&c.servers[0].transport, Transport::Stdio { env_passthrough, .. } if env_passthrough == &["PGPASSWORD", "_X1"])
    );
    let server = "\n\n[[servers]]\nname = \"a\"\ncommand = \"x\"\n";
    assert_invalid(&[
        (
            &format!("{server}env_passthrough = [\"HOME\", \"MCP_GATEWAY_SECRET_KEY\"]\n"),
            4,
            "servers[0].env_passthrough[1]",
            "'MCP_GATEWAY_SECRET_KEY' is the gateway's own variable and never passes to a server",
        ),
        (
            &format!("{server}env_passthrough = [\"RUST_LOG\"]\n"),
            4,
            "servers[0].env_passthrough[0]",
            "'RUST_LOG' is the gateway's own variable",
        ),
        (
            &format!("{server}env_passthrough = [\"A-B\"]\n"),
            4,
            "servers[0].env_passthrough[0]",
            "'A-B' is not an environment variable name",
        ),
        (
            "[[servers]]\nname = \"r\"\nurl = \"http://h/mcp\"\nenv_passthrough = [\"X\"]\n",
            2,
            "servers[0].url",
            "`env_passthrough`",
        ),
    ]);
}

#[test]
fn the_index_section_is_checked_and_its_name_reserved() {
    let e = parse(
        "[index]
protocol_api_url = \"http://127.0.0.1:9/api\"
vibecheck_concurency = 3
",
    )
    .unwrap_err();
    let message = e.to_string();
    assert!(
        message.contains("line 3") && message.contains("vibecheck_concurency"),
        "{message}"
    );
    let e = parse(
        "[index]
vibecheck_concurrency = 9
",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains(":1: index.vibecheck_concurrency: 9 is out of range 1..=5"),
        "{e}"
    );
    let e = parse(
        "[[servers]]
name = \"index\"
command = \"x\"
",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("servers[0].name") && e.contains("is a built-in server; configure it under [index]"),
        "{e}"
    );
    let off = parse(
        "[index]
enabled = false
[archives]
enabled = false
",
    )
    .unwrap();
    assert!(off.servers.is_empty());
}

#[test]
fn unknown_key_names_line_and_key() {
    let err = parse("[[servers]]\nname = \"a\"\ncommand = \"x\"\ntimeout = 5\n").unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("test.toml: "), "{msg}");
    assert!(msg.contains("line 4"), "{msg}");
    assert!(msg.contains("unknown field `timeout`"), "{msg}");
    assert!(msg.contains("timeout_ms"), "should list what was expected: {msg}");
}

#[test]
fn rule_violations_name_line_and_key() {
    let cases = [
        (
            "[[servers]]\nname = \"a:b\"\ncommand = \"x\"\n",
            2,
            "servers[0].name",
            "may not contain ':'",
        ),
        (
            "[[servers]]\nname = \"a\"\n",
            2,
            "servers[0].command",
            "missing `command`",
        ),
        (
            "[[servers]]\nname = \"a\"\ncommand = \"x\"\n\n[[servers]]\nname = \"a\"\ncommand = \"y\"\n",
            6,
            "servers[1].name",
            "duplicate server name",
        ),
        (
            "[[servers]]\nname = \"a\"\ncommand = \"x\"\nurl = \"http://h/mcp\"\n",
            2,
            "servers[0].url",
            "both `command` and `url`",
        ),
        (
            "[[servers]]\nname = \"a\"\nurl = \"ftp://h\"\n",
            2,
            "servers[0].url",
            "not an http",
        ),
        (
            "[[servers]]\nname = \"a\"\ncommand = \"x\"\ntimeout_ms = 0\n",
            2,
            "servers[0].timeout_ms",
            "at least 1",
        ),
        (
            "[[servers]]\nname = \"a\"\ncommand = \"x\"\nstateless_instances = 0\n",
            2,
            "servers[0].stateless_instances",
            "at least 1",
        ),
        (
            "[[servers]]\nname = \"a\"\ncommand = \"x\"\nstateless_instances = 65\n",
            2,
            "servers[0].stateless_instances",
            "at most 64",
        ),
        (
            "[[servers]]\nname = \"a\"\nurl = \"http://h/mcp\"\nstateless_instances = 2\n",
            2,
            "servers[0].stateless_instances",
            "only applies to `command` servers",
        ),
    ];
    assert_invalid(&cases);
}

#[test]
fn mcp_servers_tables_are_accepted() {
    let c = parse(
        r#"
[mcpServers.everything]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-everything"]

[mcpServers.remote]
type = "http"
url = "http://127.0.0.1:9/mcp"
"#,
    )
    .unwrap();
    let names: Vec<_> = c.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["everything", "remote", "index", "archives"]);
    assert!(matches!(c.servers[1].transport, Transport::Http { .. }));
}

#[test]
fn a_database_url_of_another_engine_is_refused_not_taken_for_a_folder() {
    let raw = "[store]\npath = \"mysql://root@localhost/gw\"\n";
    let err = Config::parse(raw, "g.toml", Path::new("/tmp")).unwrap_err().to_string();
    assert!(err.contains("store.path") && err.contains("mysql URL"), "{err}");
}

#[test]
fn rules_auth_and_store_are_validated() {
    let ok = parse(
        "[auth]\nallow_anonymous = true\nanonymous_project = \"local\"\n[store]\npath = \"data/gw.db\"\n\n[[servers]]\nname = \"fs\"\ncommand = \"x\"\n\n[[rules]]\npattern = [\"*delete*\"]\nserver = \"fs\"\nenabled = false\n",
    )
    .unwrap();
    assert_eq!(ok.anonymous_project.as_deref(), Some("local"));
    assert!(!ok.rules.verdict("fs", "delete_file", &[]).enabled);
    if std::env::var_os(DB_ENV).is_none() {
        assert_eq!(ok.store, StoreLocation::File("/etc/gw/data/gw.db".into()));
    }

    let cases = [
        (
            "[[servers]]\nname = \"a\"\ncommand = \"x\"\n\n[[rules]]\npattern = [\"ok\", \"/(/\"]\n",
            6,
            "rules[0].pattern[1]",
            "invalid regex",
        ),
        (
            "[[servers]]\nname = \"a\"\ncommand = \"x\"\n\n[[rules]]\npattern = [\"*\"]\nserver = \"b\"\n",
            6,
            "rules[0].server",
            "no server named 'b'",
        ),
        (
            "[auth]\nallow_anonymous = true\n",
            1,
            "auth.anonymous_project",
            "needs anonymous_project",
        ),
    ];
    assert_invalid(&cases);
}

#[test]
fn missing_env_var_is_reported_with_its_key() {
    let err =
        parse("[[servers]]\nname = \"a\"\nurl = \"http://h/mcp\"\nheaders = { X = \"${MCP_GW_SURELY_UNSET_VAR}\" }\n")
            .unwrap_err();
    assert!(err.to_string().contains("servers[0].headers.X"), "{err}");
    assert!(err.to_string().contains("MCP_GW_SURELY_UNSET_VAR"), "{err}");
}
