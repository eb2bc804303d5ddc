//! Code mode against tool-by-tool calls, on realistic multi-step tasks over
//! real servers from npm (`@modelcontextprotocol/server-filesystem`,
//! `server-memory`; `scripts/setup` installs them) and the demo server:
//!
//! - `find_files`: which of 30 files mention a name (1 listing + 30 reads);
//! - `commits_to_memory`: the repository's 10 newest commits, from a file, as
//!   entities in the memory server (1 read + 1 create);
//! - `sum_structured`: a field summed across 50 structured results (50 calls).
//!
//! First it prints, per task: model round trips and bytes returned to the
//! model (each result as JSON, as the client receives it), bytes the model
//! sends (arguments or the script), and the gateway's CPU per task (from
//! /proc, over 10 runs). Then criterion measures each path's wall time, a
//! trivial script through the gateway against a plain call, and the
//! sandbox alone (a runtime made, `return 1` run, torn down).
//! Run: `cargo bench --bench code_mode`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_gateway::sandbox::{self, Call, Gone, Host};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

mod common;

type Client = RunningService<RoleClient, ()>;

/// The name three of the 30 files mention.
const NAME: &str = "Ada Lovelace";

fn npm_bin(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/interop/node_modules/.bin")
        .join(name);
    assert!(path.exists(), "{} is missing; run scripts/setup", path.display());
    path
}

/// What one approach to a task cost the model.
#[derive(Default)]
struct Cost {
    round_trips: usize,
    returned: usize,
    sent: usize,
}

/// One tool_execute as a model makes it; its result and what it cost.
async fn execute(client: &Client, args: Value, cost: &mut Cost) -> CallToolResult {
    cost.round_trips += 1;
    cost.sent += args.to_string().len();
    let params = CallToolRequestParams::new("tool_execute").with_arguments(args.as_object().unwrap().clone());
    let r = client.call_tool(params).await.unwrap();
    cost.returned += serde_json::to_string(&r).unwrap().len();
    assert_ne!(r.is_error, Some(true), "{r:?}");
    r
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

async fn call(client: &Client, key: &str, arguments: Value, cost: &mut Cost) -> CallToolResult {
    execute(client, json!({ "toolKey": key, "arguments": arguments }), cost).await
}

async fn script(client: &Client, body: &str, cost: &mut Cost) -> Value {
    let r = execute(client, json!({ "script": body }), cost).await;
    r.structured_content.unwrap()["result"].clone()
}

/// The three tasks, each done tool by tool (as a model calls them, one
/// round trip per call) and as one script. `run` makes entity names unique.
struct Tasks {
    files: PathBuf,
    commits: PathBuf,
}

impl Tasks {
    async fn find_files_by_tool(&self, c: &Client, cost: &mut Cost) -> Vec<String> {
        let dir = self.files.display().to_string();
        let listing = call(c, "filesystem:list_directory", json!({ "path": dir }), cost).await;
        let mut hits = Vec::new();
        for line in text(&listing).lines() {
            let Some(name) = line.strip_prefix("[FILE] ") else {
                continue;
            };
            let file = call(
                c,
                "filesystem:read_text_file",
                json!({ "path": format!("{dir}/{name}") }),
                cost,
            )
            .await;
            if text(&file).contains(NAME) {
                hits.push(name.to_string());
            }
        }
        hits.sort();
        hits
    }

    fn find_files_script(&self) -> String {
        format!(
            r#"const dir = "{}";
const listing = await tools.call("filesystem:list_directory", {{ path: dir }});
const names = listing.text.split("\n").filter((l) => l.startsWith("[FILE] ")).map((l) => l.slice(7));
const files = await Promise.all(names.map(async (name) =>
  ({{ name, text: (await tools.call("filesystem:read_text_file", {{ path: `${{dir}}/${{name}}` }})).text }})));
return files.filter((f) => f.text.includes("{NAME}")).map((f) => f.name).sort();"#,
            self.files.display()
        )
    }

    async fn commits_by_tool(&self, c: &Client, run: &str, cost: &mut Cost) -> usize {
        let path = self.commits.display().to_string();
        let file = call(c, "filesystem:read_text_file", json!({ "path": path }), cost).await;
        let entities: Vec<Value> = text(&file).lines().map(|line| entity(run, line)).collect();
        let n = entities.len();
        call(c, "memory:create_entities", json!({ "entities": entities }), cost).await;
        n
    }

    fn commits_script(&self, run: &str) -> String {
        format!(
            r#"const file = await tools.call("filesystem:read_text_file", {{ path: "{}" }});
const entities = file.text.split("\n").filter((l) => l).map((line) => {{
  const [hash, author, date, subject] = line.split("\t");
  return {{ name: `{run}-${{hash.slice(0, 10)}}`, entityType: "commit", observations: [`${{author}} ${{date}}`, subject] }};
}});
const r = await tools.call("memory:create_entities", {{ entities }});
return {{ created: r.structuredContent.entities.length }};"#,
            self.commits.display()
        )
    }

    async fn sum_by_tool(&self, c: &Client, cost: &mut Cost) -> f64 {
        let mut sum = 0.0;
        for i in 1..=50 {
            let r = call(c, "demo:calculate", json!({ "expression": format!("{i} * 3") }), cost).await;
            sum += r.structured_content.unwrap()["result"].as_f64().unwrap();
        }
        sum
    }

    fn sum_script(&self) -> String {
        r#"const rs = await Promise.all(Array.from({ length: 50 }, (_, i) =>
  tools.call("demo:calculate", { expression: `${i + 1} * 3` })));
return rs.reduce((s, r) => s + r.structuredContent.result, 0);"#
            .into()
    }
}

/// A commit line (`hash\tauthor\tdate\tsubject`) as a memory entity.
fn entity(run: &str, line: &str) -> Value {
    let f: Vec<&str> = line.split('\t').collect();
    json!({ "name": format!("{run}-{}", &f[0][..10]), "entityType": "commit", "observations": [format!("{} {}", f[1], f[2]), f[3]] })
}

/// The gateway's user + system CPU so far, from /proc (clock ticks of 10 ms).
fn cpu(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat.rsplit_once(')').unwrap().1.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

/// Answers nothing: the trivial script makes no call.
struct NoHost;

impl Host for NoHost {
    fn start(&mut self, _: u64, _: Call) {}
    fn next(&mut self, _: Duration) -> Result<Option<sandbox::Answer>, Gone> {
        Err(Gone)
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let work = tempfile::tempdir().unwrap();
    let files = work.path().join("files");
    std::fs::create_dir(&files).unwrap();
    // Thirty notes of a realistic size (~1.5 KB); three mention the name.
    let filler = "The meeting covered the quarterly plan, the hiring pipeline and the budget for the \
                  analytical engine project; actions were assigned and dates agreed. ";
    for i in 1..=30 {
        let who = if i % 10 == 3 { NAME } else { "the team" };
        let body = format!("Notes {i}: met {who}.\n{}", filler.repeat(10));
        std::fs::write(files.join(format!("note{i:02}.txt")), body).unwrap();
    }
    let commits = work.path().join("commits.tsv");
    let log = std::process::Command::new("git")
        .args(["log", "-10", "--format=%H%x09%an%x09%ad%x09%s", "--date=short"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    std::fs::write(&commits, &log.stdout).unwrap();
    let config = work.path().join("gateway.toml");
    std::fs::write(
        &config,
        format!(
            "[auth]\nallow_anonymous = true\nanonymous_project = \"bench\"\n[store]\npath = \"{}\"\n\n\
             [[servers]]\nname = \"filesystem\"\ncommand = \"{}\"\nargs = [\"{}\", \"{}\"]\n\n\
             [[servers]]\nname = \"memory\"\ncommand = \"{}\"\nenv = {{ MEMORY_FILE_PATH = \"{}\" }}\n\n\
             [[servers]]\nname = \"demo\"\ncommand = \"{bin}\"\nargs = [\"demo-server\"]\n",
            work.path().join("bench.db").display(),
            npm_bin("mcp-server-filesystem").display(),
            files.display(),
            work.path().display(),
            npm_bin("mcp-server-memory").display(),
            work.path().join("memory.jsonl").display(),
            bin = common::bin(),
        ),
    )
    .unwrap();
    let tasks = Tasks { files, commits };
    let (client, child) = rt.block_on(async {
        let (url, child) =
            common::spawn(&["serve", "--config", config.to_str().unwrap(), "--http", "127.0.0.1:0"]).await;
        let client = ().serve(StreamableHttpClientTransport::from_uri(url)).await.unwrap();
        // Every server's tools in the catalog before anything is measured.
        for key in ["filesystem:read_text_file", "memory:create_entities", "demo:calculate"] {
            for tries in 0.. {
                let args = json!({ "query": key.split(':').nth(1).unwrap().replace('_', " "), "maxResults": 50 });
                let params =
                    CallToolRequestParams::new("tool_discovery").with_arguments(args.as_object().unwrap().clone());
                let found = client.call_tool(params).await.unwrap().structured_content.unwrap();
                if found["results"].as_array().unwrap().iter().any(|r| r["toolKey"] == key) {
                    break;
                }
                assert!(tries < 200, "{key} never appeared");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        (client, child)
    });
    let pid = child.id().unwrap();

    // Round trips, bytes and CPU, with the answers checked equal.
    println!(
        "\n| task | approach | round trips | bytes to the model | bytes from the model | gateway CPU per task | wall time |"
    );
    println!("|---|---|---|---|---|---|---|");
    let runs = 10;
    rt.block_on(async {
        let row = |task: &str, how: &str, cost: &Cost, cpu: Duration, wall: Duration| {
            println!(
                "| {task} | {how} | {} | {} | {} | {:.1} ms | {:.1} ms |",
                cost.round_trips,
                cost.returned,
                cost.sent,
                cpu.as_secs_f64() * 1000.0 / f64::from(runs),
                wall.as_secs_f64() * 1000.0 / f64::from(runs)
            );
        };
        macro_rules! measure {
            ($task:expr, $how:expr, |$cost:ident, $i:ident| $body:expr) => {{
                let (before, started) = (cpu(pid), Instant::now());
                let mut first = Cost::default();
                let mut answer = Value::Null;
                for $i in 0..runs {
                    let mut $cost = Cost::default();
                    let a = $body;
                    if $i == 0 {
                        (first, answer) = ($cost, json!(a));
                    }
                }
                row($task, $how, &first, cpu(pid) - before, started.elapsed());
                answer
            }};
        }
        let by_tool = measure!("find_files", "tool by tool", |cost, _i| tasks
            .find_files_by_tool(&client, &mut cost)
            .await);
        let body = tasks.find_files_script();
        let by_script = measure!("find_files", "one script", |cost, _i| script(&client, &body, &mut cost)
            .await);
        assert_eq!(by_tool, by_script);
        let by_tool = measure!("commits_to_memory", "tool by tool", |cost, i| {
            tasks.commits_by_tool(&client, &format!("t{i}"), &mut cost).await
        });
        let by_script = measure!("commits_to_memory", "one script", |cost, i| {
            script(&client, &tasks.commits_script(&format!("s{i}")), &mut cost).await["created"].clone()
        });
        assert_eq!(by_tool, by_script);
        let by_tool = measure!("sum_structured", "tool by tool", |cost, _i| tasks
            .sum_by_tool(&client, &mut cost)
            .await);
        let body = tasks.sum_script();
        let by_script = measure!("sum_structured", "one script", |cost, _i| script(
            &client, &body, &mut cost
        )
        .await);
        assert_eq!(by_tool.as_f64(), by_script.as_f64());
    });

    let mut g = c.benchmark_group("code_mode");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    g.bench_function("find_files/tool_by_tool", |b| {
        b.to_async(&rt)
            .iter(|| async { tasks.find_files_by_tool(&client, &mut Cost::default()).await });
    });
    let body = tasks.find_files_script();
    g.bench_function("find_files/script", |b| {
        b.to_async(&rt)
            .iter(|| async { script(&client, &body, &mut Cost::default()).await });
    });
    let body = tasks.sum_script();
    g.bench_function("sum_structured/tool_by_tool", |b| {
        b.to_async(&rt)
            .iter(|| async { tasks.sum_by_tool(&client, &mut Cost::default()).await });
    });
    g.bench_function("sum_structured/script", |b| {
        b.to_async(&rt)
            .iter(|| async { script(&client, &body, &mut Cost::default()).await });
    });
    g.finish();

    // The script's own cost: a trivial script against a plain call, both one round trip.
    let mut g = c.benchmark_group("code_mode_overhead");
    g.measurement_time(Duration::from_secs(5));
    g.bench_function("plain_tool_execute", |b| {
        b.to_async(&rt).iter(|| async {
            call(
                &client,
                "demo:calculate",
                json!({ "expression": "6*7" }),
                &mut Cost::default(),
            )
            .await
        });
    });
    g.bench_function("script_one_call", |b| {
        b.to_async(&rt).iter(|| async {
            script(
                &client,
                "return (await tools.call('demo:calculate', { expression: '6*7' })).structuredContent;",
                &mut Cost::default(),
            )
            .await
        });
    });
    g.bench_function("script_return_1", |b| {
        b.to_async(&rt)
            .iter(|| async { script(&client, "return 1;", &mut Cost::default()).await });
    });
    // The sandbox alone: a runtime with its limits, the prelude, `return 1`, teardown.
    let limits = sandbox::Limits {
        memory_bytes: 64 << 20,
        cpu: Duration::from_secs(2),
        wall: Duration::from_secs(120),
        stack_bytes: 512 << 10,
        max_calls: 200,
        parallel: 8,
        max_output_bytes: 256 << 10,
    };
    let cancel = Arc::new(AtomicBool::new(false));
    g.bench_function("sandbox_start_and_return_1", |b| {
        b.iter(|| sandbox::run("return 1;", &limits, &mut NoHost, &cancel));
    });
    g.finish();
    drop(child);
}

criterion_group!(benches, bench);
criterion_main!(benches);
