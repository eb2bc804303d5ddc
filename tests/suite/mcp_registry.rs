//! `mcp-gateway add`: servers from the MCP Registry, looked up in a fake
//! registry that serves real `server.json` files (`fake_registry`), written
//! to the config of a running gateway, which picks them up and runs them.

use std::path::Path;
use std::process::{Output, Stdio};

use serde_json::json;
use tokio::io::AsyncWriteExt;

use crate::common::{ANONYMOUS, Gateway, bin, error_code, execute, text, wait_for_tool};
use crate::fake_registry::FakeRegistry;

/// Runs `mcp-gateway ARGS` with `stdin`, as an operator at a shell.
async fn run(config: &Path, env: &[(&str, &str)], args: &[&str], stdin: &str) -> Output {
    let mut child = tokio::process::Command::new(bin())
        .args(args)
        .arg("--config")
        .arg(config)
        .env_remove("MCP_GATEWAY_REGISTRY")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).await.unwrap();
    drop(input);
    child.wait_with_output().await.unwrap()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A `npx` that records how it was run (and whether the key reached it),
/// then runs the demo server: the registry's npm package, offline.
fn fake_npx(dir: &Path) -> String {
    let bin_dir = dir.join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let script = format!(
        "#!/bin/sh\necho \"$* key=${{BRAVE_API_KEY:-none}}\" >> '{}'\nexec '{}' demo-server\n",
        dir.join("npx.log").display(),
        bin()
    );
    let npx = bin_dir.join("npx");
    std::fs::write(&npx, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&npx, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_server_is_added_and_runs_with_each_projects_key() {
    let registry = FakeRegistry::start().await;
    let scratch = tempfile::tempdir().unwrap();
    let path = fake_npx(scratch.path());
    let gw = Gateway::spawn_with(ANONYMOUS, &[("PATH", &path)]).await;
    gw.cli(&["project", "create", "research"]);
    let config = gw.config_path();
    let env = [
        ("PATH", path.as_str()),
        ("MCP_GATEWAY_REGISTRY", registry.base.as_str()),
    ];

    let name = "io.github.brave/brave-search-mcp-server";
    let args = ["add", name, "--project", "research", "--set", "BRAVE_API_KEY=-"];
    let o = run(&config, &env, &args, "brave-test-key\n").await;
    assert!(o.status.success(), "{}", err(&o));
    let said = out(&o);
    for line in [
        "added 'brave-search-mcp-server' to ",
        ": npm package @brave/brave-search-mcp-server@2.1.3 (io.github.brave/brave-search-mcp-server 2.1.3)",
        "gateway.toml: ok (1 servers, 1 enabled)",
        "granted server 'brave-search-mcp-server' to project 'research'",
        "project 'research': env BRAVE_API_KEY set for 'brave-search-mcp-server'",
    ] {
        assert!(said.contains(line), "{line:?} in:\n{said}");
    }
    assert!(!said.contains("secret set --project"), "nothing left to name:\n{said}");
    let file = std::fs::read_to_string(&config).unwrap();
    assert!(
        file.contains("command = \"npx\"\nargs = [\"-y\", \"@brave/brave-search-mcp-server@2.1.3\"]\nshared = false\n"),
        "without the key it needs, the gateway starts no child of its own: {file}"
    );
    assert!(!file.contains("brave-test-key"), "the key stays out of the file");
    assert!(
        registry
            .seen()
            .contains(&"/v0.1/servers/io.github.brave%2Fbrave-search-mcp-server/versions/latest".to_string()),
        "the name goes percent-encoded, as the registry wants it: {:?}",
        registry.seen()
    );
    let listed = gw.cli(&["secret", "list", "--json"]);
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed[0]["name"], "BRAVE_API_KEY");
    assert_eq!(listed[0]["project"], "research");

    // The running gateway reloads the file and lists the server's tools
    // through the project's own child, which has its key.
    let token = gw.issue_token("research");
    let client = gw.client_with_token(&token).await.unwrap();
    wait_for_tool(&client, "brave-search-mcp-server:calculate").await;
    let r = execute(
        &client,
        "brave-search-mcp-server:calculate",
        json!({ "expression": "6*7" }),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    assert!(text(&r).contains("42"), "{r:?}");
    let runs = std::fs::read_to_string(scratch.path().join("npx.log")).unwrap();
    assert_eq!(
        runs.trim(),
        "-y @brave/brave-search-mcp-server@2.1.3 key=brave-test-key",
        "only the project's child ran"
    );

    // A project without the key sees none of the tools, and a call by key
    // gets a clear refusal.
    gw.cli(&["project", "create", "other"]);
    gw.cli(&["grant", "--project", "other", "--server", "brave-search-mcp-server"]);
    let other = gw.client_with_token(&gw.issue_token("other")).await.unwrap();
    let r = execute(
        &other,
        "brave-search-mcp-server:calculate",
        json!({ "expression": "1+1" }),
    )
    .await;
    assert_eq!(error_code(&r), "CREDENTIAL_ERROR");
    assert!(
        text(&r).contains("runs only with a project's own secrets (shared = false), and project 'other' has none"),
        "{r:?}"
    );

    // Each refusal is clear, and leaves the file and the store as they were.
    let secrets = gw.cli(&["secret", "list", "--json"]).stdout;
    let down = [("PATH", path.as_str()), ("MCP_GATEWAY_REGISTRY", "http://127.0.0.1:9")];
    // (arguments, whether the registry is down, what the error says)
    let cases: [(&[&str], bool, &str); 6] = [
        (
            &["add", name],
            false,
            "already has a server named 'brave-search-mcp-server'; choose another with --as NAME",
        ),
        (
            &["add", "brave-search"],
            false,
            "no server named 'brave-search' in the MCP Registry at http://127.0.0.1:",
        ),
        (
            &["add", "io.github.brave/brave-search-mcp-server@9.9.9", "--as", "brave2"],
            false,
            "io.github.brave/brave-search-mcp-server has no version '9.9.9'; its versions: 2.1.3",
        ),
        (
            &["add", "io.github.klarlabs-studio/coverctl"],
            false,
            "io.github.klarlabs-studio/coverctl offers an mcpb package; this gateway runs npm (npx), pypi (uvx) and oci (docker) packages over stdio, and streamable-http remotes",
        ),
        (
            &["add", "com.apify/apify-mcp-server", "--from", "npm"],
            false,
            "com.apify/apify-mcp-server has no npm package that runs over stdio; it offers a streamable-http remote",
        ),
        (
            &["add", name, "--as", "brave2"],
            true,
            "cannot reach the MCP Registry at http://127.0.0.1:9",
        ),
    ];
    for (args, down_now, says) in cases {
        let env: &[(&str, &str)] = if down_now { &down } else { &env };
        let o = run(&config, env, args, "").await;
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", err(&o));
        assert!(err(&o).contains(says), "{args:?}: {says:?} in {}", err(&o));
        assert_eq!(
            std::fs::read_to_string(&config).unwrap(),
            file,
            "{args:?} wrote nothing"
        );
    }
    let o = run(&config, &env, &["add", "brave-search"], "").await;
    assert!(
        err(&o).contains("; names like it: io.github.brave/brave-search-mcp-server"),
        "{}",
        err(&o)
    );
    registry.fail(true);
    let o = run(&config, &env, &["add", name, "--as", "brave2"], "").await;
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains("answered 500: Internal Server Error: Failed to get server details"),
        "{}",
        err(&o)
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), file);
    assert_eq!(gw.cli(&["secret", "list", "--json"]).stdout, secrets);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remotes_secrets_are_named_and_a_dry_run_writes_nothing() {
    let registry = FakeRegistry::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.toml");
    let env = [("MCP_GATEWAY_REGISTRY", registry.base.as_str())];

    // No file yet: it starts from the shipped default, demo server and all.
    let o = run(
        &config,
        &env,
        &["add", "com.apify/apify-mcp-server", "--as", "apify"],
        "",
    )
    .await;
    assert!(o.status.success(), "{}", err(&o));
    let said = out(&o);
    assert!(said.contains("streamable-http remote https://mcp.apify.com/"), "{said}");
    assert!(
        said.contains("mcp-gateway secret set --project PROJECT --server apify --header Authorization=-"),
        "named, with the command that sets it: {said}"
    );
    let file = std::fs::read_to_string(&config).unwrap();
    assert!(file.contains("name = \"demo\""), "{file}");
    assert!(
        file.contains("name = \"apify\"\ntitle = \"com.apify/apify-mcp-server\""),
        "{file}"
    );
    assert!(file.contains("url = \"https://mcp.apify.com/\""), "{file}");
    assert!(
        file.contains("# Each project sets its own header Authorization"),
        "{file}"
    );
    let check = run(&config, &[], &["check"], "").await;
    assert!(check.status.success(), "{}", err(&check));

    // A secret is a project's: given without one, it is refused, not written.
    let o = run(
        &config,
        &env,
        &["add", "io.github.hashicorp/terraform-mcp-server", "--set", "token=t0k"],
        "",
    )
    .await;
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("--set token is a secret"), "{}", err(&o));
    let o = run(
        &config,
        &env,
        &["add", "io.github.hashicorp/terraform-mcp-server", "--dry-run"],
        "",
    )
    .await;
    assert!(o.status.success(), "{}", err(&o));
    assert!(
        out(&o).contains(r#""-e", "TFE_ADDRESS=https://app.terraform.io", "-e", "TFE_TOKEN""#),
        "{}",
        out(&o)
    );
    assert!(out(&o).contains("env TFE_TOKEN (optional)"), "{}", out(&o));
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        file,
        "a dry run writes nothing"
    );
}

/// On a terminal the key is asked for, and what is typed is never echoed.
/// `script` gives `add` a real terminal, as an operator's shell does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_is_asked_for_on_a_terminal_and_never_shown() {
    use tokio::io::AsyncReadExt;
    let registry = FakeRegistry::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.toml");
    std::fs::write(&config, crate::common::chaos_server("demo", "")).unwrap();
    let created = run(&config, &[], &["project", "create", "research"], "").await;
    assert!(created.status.success(), "{}", err(&created));

    let command = format!(
        "'{}' add io.github.brave/brave-search-mcp-server --as brave --project research --config '{}'",
        bin(),
        config.display()
    );
    let mut child = tokio::process::Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .env("MCP_GATEWAY_REGISTRY", &registry.base)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script (util-linux) runs");
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut chunk = [0u8; 4096];
    // Type only once asked: typed earlier, the terminal would still echo it.
    while !String::from_utf8_lossy(&seen).contains("empty to skip: ") {
        let n = tokio::time::timeout(std::time::Duration::from_secs(20), stdout.read(&mut chunk))
            .await
            .expect("the key is asked for")
            .unwrap();
        assert!(n > 0, "ended before asking: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&chunk[..n]);
    }
    // The prompt is written just before echo goes off: a person reads it
    // first, and a test typing within microseconds would be echoed.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"typed-brave-key\r").await.unwrap();
    stdout.read_to_end(&mut seen).await.unwrap();
    let status = child.wait().await.unwrap();
    drop(stdin);
    let shown = String::from_utf8_lossy(&seen);
    assert!(status.success(), "{shown}");
    assert!(
        shown.contains("BRAVE_API_KEY (Your API key for the service), empty to skip: "),
        "{shown}"
    );
    assert!(
        shown.contains("project 'research': env BRAVE_API_KEY set for 'brave'"),
        "{shown}"
    );
    assert!(!shown.contains("typed-brave-key"), "never echoed: {shown}");
    let listed = run(&config, &[], &["secret", "list", "--json"], "").await;
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed[0]["name"], "BRAVE_API_KEY");
}

/// A document with `PROBE_KEY` (secret), `PROBE_MODE` (a plain default)
/// and `PLAIN_KEY` (required, not marked secret), run with npx.
fn probe() -> serde_json::Value {
    json!({
        "name": "io.github.x/probe", "version": "1.0.0", "title": "Probe", "description": "A probe.",
        "packages": [{ "registryType": "npm", "registryBaseUrl": "https://registry.npmjs.org",
            "identifier": "@x/probe", "version": "1.0.0",
            "environmentVariables": [
                { "name": "PROBE_KEY", "isSecret": true },
                { "name": "PROBE_MODE", "default": "fast" },
                { "name": "PLAIN_KEY", "isRequired": true } ] }]
    })
}

/// `text` as `gateway.toml` tables, to compare files by what they say.
fn tables(text: &str) -> toml::Table {
    text.parse().unwrap()
}

/// A registry document is data: whatever its strings hold, `add` appends
/// one `[[servers]]` entry and changes nothing else, or refuses and writes
/// nothing; and what it shows of the registry's text is escaped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_document_adds_one_server_or_nothing() {
    let registry = FakeRegistry::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.toml");
    let before = crate::common::chaos_server("demo", "");
    std::fs::write(&config, &before).unwrap();
    let env = [("MCP_GATEWAY_REGISTRY", registry.base.as_str())];

    // Each a second server, screening off, every tool hidden, or the screen
    // cleared, in one field that `add` writes.
    let server = "\n[[servers]]\nname = \"pwned\"\ncommand = \"sh\"\n#";
    let screening = "\n[security]\nsecrets = \"off\"\n#";
    let hidden = "\n[[rules]]\npattern = [\"*\"]\nenabled = false\n#";
    let clear = "\u{1b}[2J\u{1b}[H";
    let fields = [
        ("/name", format!("io.github.x/probe{server}")),
        ("/version", format!("1.0.0{server}")),
        ("/version", format!("1.0.0{screening}")),
        ("/packages/0/identifier", format!("@x/probe{hidden}")),
        ("/packages/0/version", format!("1.0.0{screening}")),
        (
            "/packages/0/registryBaseUrl",
            format!("https://npm.example.com/{hidden}"),
        ),
        ("/packages/0/environmentVariables/0/name", format!("PROBE_KEY{server}")),
        ("/packages/0/environmentVariables/1/default", format!("fast{clear}")),
        ("/title", format!("Probe{clear}")),
        ("/description", format!("A probe.{clear}")),
    ];
    for (n, (field, hostile)) in fields.iter().enumerate() {
        let mut doc = probe();
        *doc.pointer_mut(field).unwrap() = json!(hostile);
        let name = format!("io.github.x/probe-{n}");
        registry.publish(&name, "1.0.0", doc);
        let args = ["add", &name, "--as", "probe", "--set", "PLAIN_KEY=eu"];
        let o = run(&config, &env, &args, "").await;
        assert_eq!(o.status.code(), Some(2), "{field}: {}{}", out(&o), err(&o));
        assert!(
            err(&o).contains("holds a control character; nothing was written"),
            "{field}: {}",
            err(&o)
        );
        assert!(
            err(&o).contains("\\n") || err(&o).contains("\\u{1b}"),
            "{field}: {}",
            err(&o)
        );
        assert!(!err(&o).contains('\u{1b}'), "{field}: escape codes are shown, not sent");
        assert_eq!(std::fs::read_to_string(&config).unwrap(), before, "{field}");
    }

    // Whitespace in a description is only spacing, and `${VAR}` in it is
    // text, not the gateway's environment: added, as one entry.
    let mut doc = probe();
    doc["description"] = json!(format!("Reads ${{PATH}} and costs $5.{screening}{hidden}"));
    registry.publish("io.github.x/spaced", "1.0.0", doc);
    let args = ["add", "io.github.x/spaced", "--as", "spaced", "--set", "PLAIN_KEY=eu"];
    let o = run(&config, &env, &args, "").await;
    assert!(o.status.success(), "{}", err(&o));
    let after = std::fs::read_to_string(&config).unwrap();
    let (old, mut new) = (tables(&before), tables(&after));
    let added = new["servers"].as_array_mut().unwrap().pop().unwrap();
    assert_eq!(new, old, "nothing but one [[servers]] entry: {after}");
    assert_eq!(added["name"].as_str(), Some("spaced"));
    let loaded = mcp_gateway::config::Config::parse(&after, "gateway.toml", dir.path()).unwrap();
    let spaced = loaded.servers.iter().find(|s| s.name == "spaced").unwrap();
    assert_eq!(
        spaced.description.as_deref(),
        Some(
            "Reads ${PATH} and costs $5. [security] secrets = \"off\" # [[rules]] pattern = [\"*\"] enabled = false #"
        ),
        "{after}"
    );

    // The registry's versions and names, shown in a refusal, are escaped.
    let mut doc = probe();
    doc["version"] = json!(format!("6.6.6{clear}\nforged"));
    registry.publish("io.github.x/versions", &format!("6.6.6{clear}\nforged"), doc);
    let mut doc = probe();
    doc["name"] = json!(format!("io.github.x/lookalike{clear}\nforged"));
    registry.publish("io.github.x/lookalike", "1.0.0", doc);
    for (args, says) in [
        (
            ["add", "io.github.x/versions@9.9.9"],
            "its versions: 6.6.6\\u{1b}[2J\\u{1b}[H\\nforged",
        ),
        (
            ["add", "lookalike"],
            "names like it: io.github.x/lookalike\\u{1b}[2J\\u{1b}[H\\nforged",
        ),
    ] {
        let o = run(&config, &env, &args, "").await;
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(err(&o).contains(says), "{args:?}: {says:?} in {}", err(&o));
        assert!(!err(&o).contains('\u{1b}'), "{args:?}");
    }
    assert_eq!(std::fs::read_to_string(&config).unwrap(), after);
}

/// A key piped in, or one the credential scanner knows, is a project's
/// secret even where the document does not mark it `isSecret`: stored for
/// the project, never written to the file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_piped_or_recognised_key_is_sealed_not_written() {
    let registry = FakeRegistry::start().await;
    registry.publish("io.github.x/probe", "1.0.0", probe());
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.toml");
    std::fs::write(&config, crate::common::chaos_server("demo", "")).unwrap();
    let created = run(&config, &[], &["project", "create", "research"], "").await;
    assert!(created.status.success(), "{}", err(&created));
    let env = [("MCP_GATEWAY_REGISTRY", registry.base.as_str())];
    let token = format!("ghp_{}", "a1B2c3D4e5".repeat(4));

    let before = std::fs::read_to_string(&config).unwrap();
    let o = run(
        &config,
        &env,
        &["add", "io.github.x/probe", "--as", "nowhere", "--set", "PLAIN_KEY=-"],
        "piped-key\n",
    )
    .await;
    assert_eq!(o.status.code(), Some(2), "{}", out(&o));
    assert!(err(&o).contains("--set PLAIN_KEY is a secret"), "{}", err(&o));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);

    for (server, given, stdin) in [
        ("piped", "PLAIN_KEY=-", "piped-key\n"),
        ("scanned", &*format!("PLAIN_KEY={token}"), ""),
    ] {
        let args = [
            "add",
            "io.github.x/probe",
            "--as",
            server,
            "--project",
            "research",
            "--set",
            given,
            "--set",
            "PROBE_MODE=slow",
        ];
        let o = run(&config, &env, &args, stdin).await;
        assert!(o.status.success(), "{server}: {}", err(&o));
        assert!(
            out(&o).contains(&format!("project 'research': env PLAIN_KEY set for '{server}'")),
            "{server}: {}",
            out(&o)
        );
    }
    let file = std::fs::read_to_string(&config).unwrap();
    assert!(!file.contains("piped-key") && !file.contains(&token), "{file}");
    assert!(
        file.contains("PROBE_MODE = \"slow\""),
        "a plain value is still written: {file}"
    );
    let listed = run(&config, &[], &["secret", "list", "--json"], "").await;
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let held: Vec<_> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["server"].as_str().unwrap(), s["name"].as_str().unwrap()))
        .collect();
    assert_eq!(held, [("piped", "PLAIN_KEY"), ("scanned", "PLAIN_KEY")]);
}

/// The fake refuses what registry v1.7.0 refuses, in its words
/// (tests/registry/SOURCES.md): a fake that took everything would hide
/// what `add` does with a refusal.
#[tokio::test]
async fn the_fake_registry_refuses_as_the_real_one_does() {
    let registry = FakeRegistry::start().await;
    let get = |path: &str| {
        let url = format!("{}{path}", registry.base);
        async move {
            let r = reqwest::get(url).await.unwrap();
            let kind = r.headers()["content-type"].to_str().unwrap().to_string();
            (r.status().as_u16(), kind, r.text().await.unwrap())
        }
    };
    let problem = "application/problem+json";
    let cases = [
        (
            "/v0.1/servers/io.github.nobody%2Fnothing/versions/latest",
            404,
            r#"{"detail":"Server not found","status":404,"title":"Not Found"}"#,
        ),
        (
            "/v0.1/servers/io.github.brave%2Fbrave-search-mcp-server/versions/9.9.9",
            404,
            r#"{"detail":"Server not found","status":404,"title":"Not Found"}"#,
        ),
        (
            "/v0.1/servers?limit=0",
            422,
            r#"{"detail":"validation failed","errors":[{"location":"query.limit","message":"expected number >= 1","value":0}],"status":422,"title":"Unprocessable Entity"}"#,
        ),
        (
            "/v0.1/servers?limit=101",
            422,
            r#"{"detail":"validation failed","errors":[{"location":"query.limit","message":"expected number <= 100","value":101}],"status":422,"title":"Unprocessable Entity"}"#,
        ),
        (
            "/v0.1/servers?limit=abc",
            422,
            r#"{"detail":"validation failed","errors":[{"location":"query.limit","message":"invalid integer","value":"abc"}],"status":422,"title":"Unprocessable Entity"}"#,
        ),
        (
            "/v0.1/servers/a%25zz/versions",
            400,
            r#"{"detail":"Invalid server name encoding","errors":[{"message":"invalid URL escape \"%zz\""}],"status":400,"title":"Bad Request"}"#,
        ),
        (
            "/v0.1/servers/io.github.brave/brave-search-mcp-server/versions/latest",
            404,
            r#"{"detail":"Endpoint not found. See /docs for the API documentation.","status":404,"title":"Not Found"}"#,
        ),
        (
            "/servers",
            404,
            r#"{"detail":"Endpoint not found. Did you mean '/v0.1/servers' or '/v0/servers'? See /docs for the API documentation.","status":404,"title":"Not Found"}"#,
        ),
    ];
    for (path, status, body) in cases {
        let (got, kind, text) = get(path).await;
        assert_eq!((got, kind.as_str()), (status, problem), "{path}: {text}");
        let text: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(text, serde_json::from_str::<serde_json::Value>(body).unwrap(), "{path}");
    }
    // v0 serves what v0.1 does; an entry carries the official _meta.
    let (status, _, text) = get("/v0/servers/com.apify%2Fapify-mcp-server/versions/latest").await;
    assert_eq!(status, 200, "{text}");
    let entry: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(entry["server"]["version"], "0.15.2");
    let official = &entry["_meta"]["io.modelcontextprotocol.registry/official"];
    assert_eq!(
        (official["status"].as_str(), official["isLatest"].as_bool()),
        (Some("active"), Some(true))
    );
    let (_, _, text) = get("/v0.1/servers?search=BRAVE&limit=1").await;
    let page: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        page["servers"][0]["server"]["name"],
        "io.github.brave/brave-search-mcp-server"
    );
    assert_eq!(page["metadata"]["count"], 1);
    assert_eq!(
        page["metadata"]["nextCursor"], "io.github.brave/brave-search-mcp-server:2.1.3",
        "a full page has a cursor"
    );
}
