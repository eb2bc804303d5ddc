//! `searchLocalArchives` end to end: `mcp-gateway archive index` over a copy
//! of the fixture archive (notes and saved pages that cite each other, with
//! typos, a binary file and a broken UTF-8 file), then searches through the
//! running gateway's `tool_execute`.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::*;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

const TOOL: &str = "archives:searchLocalArchives";

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A gateway over a private copy of the fixture archive, which lives as
/// long as the `TempDir`; the index is built by `archive index` (when
/// `index_first`), the server does not follow the folders itself.
async fn start(index_first: bool) -> (Gateway, Client, tempfile::TempDir) {
    start_with(index_first, "watch = false\n").await
}

async fn start_with(index_first: bool, archives: &str) -> (Gateway, Client, tempfile::TempDir) {
    open(index_first, archives, false).await
}

/// Like [`start`], the binary spawned: for a test that damages the
/// archive's files under the running server. Written over from this
/// process, a file the server's SQLite holds would lose the locks this
/// process has on it (POSIX drops them all at any close), and another
/// process could then truncate its shared memory under a mapping here.
async fn spawned(index_first: bool) -> (Gateway, Client, tempfile::TempDir) {
    open(index_first, "watch = false\n", true).await
}

async fn open(index_first: bool, archives: &str, spawn: bool) -> (Gateway, Client, tempfile::TempDir) {
    let copy = tempfile::tempdir().unwrap();
    let archive = copy.path();
    copy_dir(&repo_path("tests/fixtures/archive"), archive);
    let config = format!(
        "{ANONYMOUS}[archives]\nfolders = [\"{0}/research-archive\", \"{0}/url-archive\"]\ndb_path = \"{0}/data/search.db\"\n{archives}",
        archive.display()
    );
    let gw = if spawn {
        Gateway::spawn(&config).await
    } else {
        Gateway::start(&config).await
    };
    if index_first {
        index(&gw);
    }
    let client = gw.client().await;
    wait_for_tool(&client, TOOL).await;
    (gw, client, copy)
}

/// Runs `archive index --json`; returns the report.
fn index(gw: &Gateway) -> Value {
    let out = gw.cli(&["archive", "index", "--json"]);
    serde_json::from_slice(&out.stdout).unwrap()
}

async fn search(client: &Client, args: Value) -> Value {
    let r = execute(client, TOOL, args).await;
    assert_ne!(r.is_error, Some(true), "search failed: {}", text(&r));
    r.structured_content.expect("structuredContent")
}

fn titles(answer: &Value) -> Vec<String> {
    answer["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["document"]["title"].as_str().unwrap().to_string())
        .collect()
}

fn node_labels(answer: &Value) -> Vec<String> {
    answer["citationGraph"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["label"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn indexing_reports_what_it_did_and_skips_what_it_cannot_read() {
    let (gw, _client, _root) = start(false).await;
    let report = index(&gw);
    assert_eq!(report["added"], 29, "{report}");
    assert_eq!(report["ignored"], 1, "the PNG is not an archive file");
    let skipped: Vec<&str> = report["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        skipped,
        [
            "research-archive/2025-05-29/broken_encoding.md",
            "research-archive/assets/scan.txt"
        ]
    );
    assert!(report["skipped"][0]["reason"].as_str().unwrap().contains("UTF-8"));
    assert!(report["skipped"][1]["reason"].as_str().unwrap().contains("binary"));
    let again = index(&gw);
    assert_eq!(
        (again["added"].as_u64(), again["unchanged"].as_u64()),
        (Some(0), Some(29))
    );
}

#[tokio::test]
async fn exact_fuzzy_and_phrase_search_with_escaped_marked_highlights() {
    let (_gw, client, _root) = start(true).await;

    let wal = search(&client, json!({ "query": "write-ahead logging readers writers" })).await;
    let found = titles(&wal);
    assert_eq!(found[..2], ["Write-Ahead Logging", "SQLite in WAL mode"], "{found:?}");
    let top = &wal["results"][0];
    assert_eq!(top["document"]["path"], "url-archive/sqlite.org/wal.html");
    assert_eq!(top["document"]["source"], "https://www.sqlite.org/wal.html");
    assert_eq!(top["document"]["date"], "2024-06-01");
    assert_eq!(top["document"]["score"], 1.0);
    assert!(top["document"]["id"].as_str().unwrap().starts_with("doc-"));
    assert_eq!(top["highlights"][0]["field"], "title");
    assert_eq!(
        top["highlights"][0]["snippets"][0],
        "<mark>Write</mark>-<mark>Ahead</mark> <mark>Logging</mark>"
    );
    assert_eq!(
        wal["metadata"],
        json!({ "totalResults": found.len(), "query": "write-ahead logging readers writers", "fuzzy": true, "includeCitations": false, "citationDepth": 1, "limit": 10 })
    );
    assert!(wal.get("citationGraph").is_none());

    // A typo finds the document with fuzzy on, nothing with it off.
    assert_eq!(
        titles(&search(&client, json!({ "query": "sourdugh" })).await),
        ["Sourdough Starter Log"]
    );
    assert!(titles(&search(&client, json!({ "query": "sourdugh", "fuzzy": false })).await).is_empty());
    // A document's own typos are found from the right spelling, marked as they are written.
    let typos = search(&client, json!({ "query": "recurrent sequences" })).await;
    let notes = typos["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["document"]["title"] == "Quick notes from the reading group")
        .expect("the typo-laden note is found");
    let snippet = notes["highlights"][0]["snippets"][0].as_str().unwrap();
    assert!(
        snippet.contains("<mark>recurent</mark>") && snippet.contains("<mark>sequenses</mark>"),
        "{snippet}"
    );
    // Exact hits are not drowned by fuzzy ones.
    assert_eq!(
        titles(&search(&client, json!({ "query": "recurrent" })).await)[0],
        "Recurrent Neural Networks"
    );

    // Quotes make a phrase.
    let loose = titles(&search(&client, json!({ "query": "gradient boosting" })).await);
    assert!(
        loose.contains(&"Gradient Descent, Step by Step".to_string()),
        "{loose:?}"
    );
    let phrase = titles(&search(&client, json!({ "query": "\"gradient boosting\"" })).await);
    assert_eq!(phrase, ["Machine Learning Algorithms"]);

    // Stored text that looks like markup comes back escaped.
    let hostile = search(&client, json!({ "query": "alert script escaped" })).await;
    let all = hostile["results"][0]["highlights"].to_string();
    assert!(
        all.contains("&lt;<mark>script</mark>&gt;<mark>alert</mark>(&#39;x&#39;)"),
        "{all}"
    );
    assert!(!all.contains("<script"), "{all}");

    assert_eq!(
        titles(&search(&client, json!({ "query": "learning", "limit": 2 })).await).len(),
        2
    );
    assert!(titles(&search(&client, json!({ "query": "xyzzyplugh" })).await).is_empty());
}

/// Pages saved by the tools people use carry their address in the tool's
/// comment, not a canonical link: citations by URL to them resolve, and a
/// link inside a code block is no citation.
#[tokio::test]
async fn citations_by_url_reach_pages_saved_by_chrome_and_single_file() {
    let (_gw, client, _root) = start(true).await;
    let note = search(
        &client,
        json!({ "query": "\"reading log\"", "limit": 1, "includeCitations": true }),
    )
    .await;
    assert_eq!(titles(&note), ["Notes on saved pages: attention & vector search"]);
    let citing = note["results"][0]["citations"]["citing"].as_array().unwrap();
    let targets: Vec<(&str, bool)> = citing
        .iter()
        .map(|c| (c["targetUrl"].as_str().unwrap(), c["targetId"].is_string()))
        .collect();
    assert_eq!(
        targets,
        [
            ("https://blog.example.net/posts/attention-explained", true),
            ("https://docs.example.io/guides/vector-search", true)
        ],
        "both resolve to the saved pages; the code block's links are not citations"
    );

    for (query, source, date) in [
        (
            "self-attention softmax",
            "https://blog.example.net/posts/attention-explained",
            Value::Null,
        ),
        (
            "HNSW product quantization",
            "https://docs.example.io/guides/vector-search",
            json!("2024-03-14T10:00:00+01:00"),
        ),
    ] {
        let page = search(&client, json!({ "query": query, "limit": 1, "includeCitations": true })).await;
        let document = &page["results"][0]["document"];
        assert_eq!(document["source"], source, "{page}");
        assert_eq!(document["date"], date, "{page}");
        let cited = page["results"][0]["citations"]["cited"].as_array().unwrap();
        assert_eq!(cited.len(), 1, "{page}");
        assert_eq!(cited[0]["targetUrl"], source);
    }
}

#[tokio::test]
async fn citations_both_ways_and_the_graph_at_each_depth() {
    let (_gw, client, _root) = start(true).await;
    let args = |depth| json!({ "query": "Introduction to Machine Learning", "limit": 1, "includeCitations": true, "citationDepth": depth });
    let one = search(&client, args(1)).await;
    assert_eq!(titles(&one), ["Introduction to Machine Learning"]);
    let citing = one["results"][0]["citations"]["citing"].as_array().unwrap();
    let targets: Vec<(&str, f64)> = citing
        .iter()
        .map(|c| (c["targetUrl"].as_str().unwrap(), c["confidence"].as_f64().unwrap()))
        .collect();
    assert_eq!(
        targets,
        [
            ("https://example.com/ml-algorithms", 1.0),
            ("../2025-05-18/linear_algebra_refresher.md", 1.0),
            ("gradient_descent.md", 1.0)
        ]
    );
    assert!(citing.iter().all(|c| c["targetId"].is_string()));
    assert_eq!(
        citing[0]["context"],
        "For more information on ML algorithms, see [this resource](https://example.com/ml-algorithms)."
    );
    assert_eq!(one["results"][0]["citations"]["cited"], json!([]));

    // The algorithms page is cited exactly by the intro and loosely (http, trailing slash) by the meeting notes.
    let page = search(
        &client,
        json!({ "query": "\"random forests\"", "includeCitations": true }),
    )
    .await;
    let cited = page["results"][0]["citations"]["cited"].as_array().unwrap();
    let mut by: Vec<(String, f64)> = cited
        .iter()
        .map(|c| {
            (
                c["targetUrl"].as_str().unwrap().to_string(),
                c["confidence"].as_f64().unwrap(),
            )
        })
        .collect();
    by.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        by,
        [
            ("http://example.com/ml-algorithms/".to_string(), 0.8),
            ("https://example.com/ml-algorithms".to_string(), 1.0)
        ]
    );

    let labels1 = node_labels(&one);
    assert_eq!(labels1[0], "Introduction to Machine Learning");
    assert!(
        labels1.contains(&"Gradient Descent, Step by Step".to_string()),
        "{labels1:?}"
    );
    assert!(
        !labels1.contains(&"Backpropagation Explained".to_string()),
        "{labels1:?}"
    );
    assert_eq!(one["citationGraph"]["nodes"][0]["type"], "source");
    let edge = one["citationGraph"]["edges"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["to"] == citing[0]["targetId"])
        .expect("an edge to the algorithms page");
    assert_eq!(edge["from"], one["results"][0]["document"]["id"]);

    let labels2 = node_labels(&search(&client, args(2)).await);
    assert!(
        labels2.contains(&"Backpropagation Explained".to_string()),
        "{labels2:?}"
    );
    assert!(!labels2.contains(&"Learning representations by back-propagating errors (1986)".to_string()));
    let labels3 = node_labels(&search(&client, args(3)).await);
    assert!(
        labels3.contains(&"Learning representations by back-propagating errors (1986)".to_string()),
        "{labels3:?}"
    );
    assert!(!labels3.contains(&"Perceptrons (1969), a summary".to_string()));
}

#[tokio::test]
async fn reindexing_is_incremental_and_searches_never_see_half_an_index() {
    let (gw, client, root) = start(true).await;
    let notes = root.path().join("research-archive");
    let coffee = notes.join("2025-04-13/coffee_brewing.md");
    let mut text = std::fs::read_to_string(&coffee).unwrap();
    text.push_str("\nTried a zanzibar blend today.\n");
    std::fs::write(&coffee, text).unwrap();
    std::fs::remove_file(notes.join("2025-04-14/sourdough.md")).unwrap();
    std::fs::create_dir_all(notes.join("2025-05-30")).unwrap();
    std::fs::write(
        notes.join("2025-05-30/new.md"),
        "# Quokka field notes\n\nQuokkas live on Rottnest Island.\n",
    )
    .unwrap();
    // Touched without a change: read and hashed, not re-indexed.
    let wal = notes.join("2025-03-05/sqlite_wal.md");
    let same = std::fs::read(&wal).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(&wal, same).unwrap();

    let report = index(&gw);
    assert_eq!(
        (
            &report["added"],
            &report["updated"],
            &report["removed"],
            &report["unchanged"]
        ),
        (&json!(1), &json!(1), &json!(1), &json!(27)),
        "{report}"
    );
    let fresh = |q: &'static str| {
        let client = &client;
        async move { titles(&search(client, json!({ "query": q, "fuzzy": false })).await) }
    };
    eventually(Duration::from_secs(10), "the new state", || async {
        (fresh("zanzibar").await == ["Coffee Brewing Ratios"] && fresh("quokka").await == ["Quokka field notes"])
            .then_some(())
    })
    .await;
    assert!(fresh("sourdough").await.is_empty());

    // 400 new notes mention "zeppelin": while they are indexed, a search sees none or the full page.
    let bulk = notes.join("bulk");
    std::fs::create_dir_all(&bulk).unwrap();
    for i in 0..400 {
        std::fs::write(
            bulk.join(format!("z{i}.md")),
            format!(
                "# Airship {i}\n\nThe zeppelin {i} flew over the lake. {}\n",
                "filler words ".repeat(200)
            ),
        )
        .unwrap();
    }
    let indexer = std::process::Command::new(bin())
        .args(["archive", "index", "--config"])
        .arg(gw.config_path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut seen = std::collections::BTreeSet::new();
    let mut indexer = indexer;
    loop {
        let n = search(&client, json!({ "query": "zeppelin", "fuzzy": false, "limit": 50 })).await["metadata"]["totalResults"]
            .as_u64()
            .unwrap();
        seen.insert(n);
        if indexer.try_wait().unwrap().is_some() && n == 50 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        seen.iter().all(|n| *n == 0 || *n == 50),
        "a search saw a partial index: {seen:?}"
    );
}

/// By default the serving gateway builds a missing index at start and
/// follows the folders after: a new or edited file is found without running
/// `archive index`, and the answer says how fresh the index is.
#[tokio::test]
async fn the_index_follows_the_folders_while_serving() {
    let (_gw, client, root) = start_with(false, "").await;
    let raft = eventually(Duration::from_secs(30), "the index built at start", || async {
        let r = execute(&client, TOOL, json!({ "query": "raft leader election" })).await;
        let answer = r.structured_content.filter(|_| r.is_error != Some(true))?;
        (!titles(&answer).is_empty()).then_some(answer)
    })
    .await;
    assert_eq!(titles(&raft)[0], "Raft Consensus in One Page");
    assert_eq!(raft["index"]["followsFolders"], true, "{}", raft["index"]);
    assert!(
        raft["index"]["indexedAt"].as_str().is_some_and(|t| t.ends_with('Z')),
        "{}",
        raft["index"]
    );

    let note = root.path().join("research-archive/2025-06-01/axolotl.md");
    std::fs::create_dir_all(note.parent().unwrap()).unwrap();
    std::fs::write(
        &note,
        "# Axolotl husbandry\n\nAxolotls regenerate limbs in cool water.\n",
    )
    .unwrap();
    let found = eventually(Duration::from_secs(30), "the new note", || async {
        let answer = search(&client, json!({ "query": "axolotl regenerate", "fuzzy": false })).await;
        (titles(&answer).first().map(String::as_str) == Some("Axolotl husbandry")).then_some(answer)
    })
    .await;
    assert_eq!(
        found["results"][0]["document"]["path"],
        "research-archive/2025-06-01/axolotl.md"
    );

    std::fs::remove_file(&note).unwrap();
    eventually(Duration::from_secs(30), "the note gone", || async {
        let answer = search(&client, json!({ "query": "axolotl", "fuzzy": false })).await;
        titles(&answer).is_empty().then_some(())
    })
    .await;
    // The removal's trailing events may start one more pass; once it is done
    // the answer says the index follows the folders.
    eventually(Duration::from_secs(30), "the reindex settled", || async {
        let r = execute(&client, TOOL, json!({ "query": "raft" })).await;
        text(&r).contains("it follows the archive folders").then_some(())
    })
    .await;
}

#[tokio::test]
async fn arguments_are_validated_and_a_missing_index_is_explained() {
    let (gw, client, _root) = start(false).await;
    let r: CallToolResult = execute(&client, TOOL, json!({ "query": "x" })).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("run: mcp-gateway archive index"), "{}", text(&r));

    let r = execute(&client, TOOL, json!({ "query": "", "limit": 51, "citationDepth": 0 })).await;
    assert_eq!(r.is_error, Some(true));
    let t = text(&r);
    for key in ["query", "limit", "citationDepth"] {
        assert!(t.contains(key), "{key} not reported: {t}");
    }

    index(&gw);
    let answer = search(&client, json!({ "query": "raft leader election" })).await;
    assert_eq!(titles(&answer)[0], "Raft Consensus in One Page");
    let r = execute(&client, TOOL, json!({ "query": "raft" })).await;
    assert!(text(&r).starts_with("Found "), "{}", text(&r));
    assert!(
        text(&r).contains("research-archive/2025-03-07/raft_consensus.md"),
        "{}",
        text(&r)
    );
}

#[tokio::test]
async fn without_folders_the_archives_server_is_listed_as_not_configured() {
    let gw = Gateway::start(ANONYMOUS).await;
    let rows: Value = serde_json::from_slice(&gw.cli(&["servers", "--json"]).stdout).unwrap();
    let archives = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "archives")
        .expect("listed");
    assert_eq!(archives["status"], "unconfigured");
    assert!(archives["error"].as_str().unwrap().contains("[archives] folders"));
    let out = std::process::Command::new(bin())
        .args(["archive", "index", "--config"])
        .arg(gw.config_path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no archive folders"));
}

/// The log line of each pass of the follower.
const FOLLOW_PASS: &str = "archive index follows its folders";

/// A gateway following one folder, `notes`, prepared by `setup`; its index
/// lives in `data` beside it. Returns once the first pass is done.
async fn follow_one_folder(setup: impl FnOnce(&Path)) -> (Gateway, tempfile::TempDir) {
    let root = tempfile::tempdir().unwrap();
    let notes = root.path().join("notes");
    std::fs::create_dir_all(&notes).unwrap();
    setup(&notes);
    let gw = Gateway::spawn(&format!(
        "{ANONYMOUS}[archives]\nfolders = [\"{}\"]\ndb_path = \"{}\"\n",
        notes.display(),
        root.path().join("data/search.db").display()
    ))
    .await;
    gw.wait_log(FOLLOW_PASS, Duration::from_secs(30))
        .await
        .unwrap_or_else(|| panic!("no first index:\n{}", gw.log()));
    (gw, root)
}

/// An idle archive stays idle: the indexer's own walk of the folder, a
/// reader of its files and a change of their metadata are no change. (Each
/// pass's walk used to wake the watcher for the next, twice a second,
/// rewriting the index each time.) A real change is still followed.
#[tokio::test]
async fn an_unchanged_archive_is_not_reindexed_and_a_change_still_is() {
    let (gw, root) = follow_one_folder(|notes| {
        std::fs::write(notes.join("aardvark.md"), "# Aardvark\n\nAardvarks dig burrows.\n").unwrap();
    })
    .await;
    let passes = || gw.log().matches(FOLLOW_PASS).count();
    let data = root.path().join("data");
    let stamps = || {
        ["search.db", "search.tantivy/meta.json"]
            .map(|f| std::fs::metadata(data.join(f)).and_then(|m| m.modified()).ok())
    };
    let before = stamps();
    assert!(before.iter().all(Option::is_some), "{before:?}");

    let notes = root.path().join("notes");
    std::fs::read(notes.join("aardvark.md")).unwrap();
    let mode = std::fs::metadata(notes.join("aardvark.md")).unwrap().permissions();
    std::fs::set_permissions(notes.join("aardvark.md"), mode).unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(passes(), 1, "re-indexed while idle:\n{}", gw.log());
    // A pass that finds nothing changed writes nothing either.
    gw.cli(&["archive", "index"]);
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(stamps(), before, "the index was rewritten while nothing changed");
    assert_eq!(passes(), 1, "another indexer's walk woke the follower:\n{}", gw.log());

    std::fs::write(
        notes.join("bandicoot.md"),
        "# Bandicoot\n\nBandicoots forage at night.\n",
    )
    .unwrap();
    eventually(Duration::from_secs(30), "the new note indexed", || async {
        let log = gw.log();
        let second = log.lines().filter(|l| l.contains(FOLLOW_PASS)).nth(1)?;
        assert!(second.contains("added=1"), "{log}");
        Some(())
    })
    .await;
    assert_ne!(stamps(), before, "the change was committed");
}

/// Watches the gateway's inotify instances hold, from `/proc/<pid>/fdinfo`.
fn inotify_watches(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fdinfo"))
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
        .map(|info| info.lines().filter(|l| l.starts_with("inotify wd:")).count())
        .sum()
}

/// The indexer does not follow a symlink, and the watcher does not watch
/// through one: a link to /usr used to add a watch per folder under it.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_symlinked_folder_is_not_watched_through() {
    let (gw, _root) = follow_one_folder(|notes| {
        std::fs::write(notes.join("aardvark.md"), "# Aardvark\n").unwrap();
        std::fs::create_dir(notes.join("sub")).unwrap();
        std::os::unix::fs::symlink("/usr", notes.join("sub/usr")).unwrap();
    })
    .await;
    let watches = inotify_watches(gw.pid());
    assert!(watches < 50, "{watches} inotify watches");
}

/// `serve` does not report a missing archive folder as running: the server
/// fails with the folder in its error, and starts once the folder appears.
#[tokio::test]
async fn a_missing_archive_folder_fails_the_server_until_it_appears() {
    let root = tempfile::tempdir().unwrap();
    let folder = root.path().join("notes");
    let config = format!(
        "{ANONYMOUS}[archives]\nfolders = [\"{}\"]\ndb_path = \"{}/data/search.db\"\n",
        folder.display(),
        root.path().display()
    );
    let gw = Gateway::start(&config).await;
    let status = || async {
        let ready = gw.readyz().await;
        let servers = ready["servers"].as_array().unwrap().clone();
        let archives = servers.into_iter().find(|s| s["name"] == "archives").expect("listed");
        archives["status"].as_str().unwrap().to_string()
    };
    eventually(Duration::from_secs(10), "archives failed", || async {
        (status().await == "failed").then_some(())
    })
    .await;
    let missing = format!("archive folder '{}' does not exist", folder.display());
    gw.wait_server_error("archives", &missing, Duration::from_secs(5)).await;

    std::fs::create_dir(&folder).unwrap();
    eventually(Duration::from_secs(40), "archives running", || async {
        (status().await == "running").then_some(())
    })
    .await;
}

/// The gateway's log line of a failed `searchLocalArchives` call, which
/// must carry `message`, the error the caller got.
async fn failure_line(gw: &Gateway, message: &str) -> String {
    const SEARCH_FAILED: &str = "archive search failed";
    let line = gw
        .wait_log(SEARCH_FAILED, Duration::from_secs(5))
        .await
        .unwrap_or_else(|| panic!("no {SEARCH_FAILED:?} line:\n{}", gw.log()));
    assert!(line.contains(message), "the line lacks the message {message:?}: {line}");
    line
}

/// Issue 44: a failed search was logged without its message (the seed logs
/// `Error in searchLocalArchives tool: ${error.message}`). The message is in
/// the line; the caller's query is not.
#[tokio::test]
async fn a_failed_search_is_logged_with_its_message() {
    let (gw, client, _root) = start(false).await;
    let query = "quokka zebra unindexed";
    let r = execute(&client, TOOL, json!({ "query": query })).await;
    assert_eq!(r.is_error, Some(true), "{r:?}");
    let message = text(&r);
    assert!(message.contains("has not been indexed yet"), "{message}");
    let line = failure_line(&gw, &message).await;
    assert!(!line.contains(query), "the query was logged: {line}");

    // Arguments the schema lets through and the tool refuses: the problem is
    // in the line too (quoted, as a caller's string is), with their count.
    let r = execute(&client, TOOL, json!({ "query": "   " })).await;
    assert_eq!(r.is_error, Some(true), "{r:?}");
    let line = gw
        .wait_log("archive search failed: invalid arguments", Duration::from_secs(5))
        .await
        .unwrap_or_else(|| panic!("no invalid-arguments line:\n{}", gw.log()));
    assert!(
        line.contains("problems=1") && line.contains("query: a non-empty search query is required"),
        "{line}"
    );
}

/// Issue 44: a corrupt archive database fails the search, and the log line
/// says why (SQLite's cause), not only that it failed.
#[tokio::test]
async fn a_corrupt_archive_database_is_logged_with_its_cause() {
    let (gw, client, root) = spawned(true).await;
    let data = root.path().join("data");
    for stale in ["search.db-wal", "search.db-shm"] {
        let _ = std::fs::remove_file(data.join(stale));
    }
    std::fs::write(data.join("search.db"), vec![0x5a_u8; 8192]).unwrap();

    // The full-text index still answers; the citations need the database.
    let r = execute(&client, TOOL, json!({ "query": "raft", "includeCitations": true })).await;
    assert_eq!(r.is_error, Some(true), "{r:?}");
    let message = text(&r);
    assert!(
        message.starts_with("Failed to search local archives: archive database:"),
        "{message}"
    );
    failure_line(&gw, &message).await;
}
