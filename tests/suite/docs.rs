//! The README and the book (`docs/src/`, built by `scripts/book`), checked as
//! a reader meets them: every relative link and image leads to a file, every
//! `#anchor` to a heading of its page, every page is in the book's
//! SUMMARY.md, and every ```toml example is a gateway.toml that
//! `mcp-gateway check` accepts, so an example cannot rot. A block fenced as
//! ```toml,ignore is not run (none is: an example stands alone, or is made to).

use crate::common;

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::Command;

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

use common::{bin, repo_path};

/// The README is the front door (what it is, the two commands, clients, a
/// tour, links); the reference lives in the book.
const README_MAX_LINES: usize = 250;

/// README.md and every page of the book, as (path, text).
fn pages() -> Vec<(PathBuf, String)> {
    let mut paths = vec![repo_path("README.md")];
    let mut book: Vec<PathBuf> = std::fs::read_dir(repo_path("docs/src"))
        .expect("docs/src is there")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    book.sort();
    paths.extend(book);
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, text)
        })
        .collect()
}

fn parser(text: &str) -> impl Iterator<Item = (Event<'_>, Range<usize>)> {
    Parser::new_ext(text, Options::ENABLE_TABLES).into_offset_iter()
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

/// A heading's id as mdBook makes it (GitHub makes the same for these
/// headings): lower case, whitespace to '-', only letters, digits, '-' and
/// '_' kept, so "Errors from `tool_execute`" is `errors-from-tool_execute`.
fn slug(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| match c {
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
            c if c.is_whitespace() => Some('-'),
            _ => None,
        })
        .collect()
}

/// The ids of a page's headings; a repeated one gets "-1", "-2"… as in mdBook.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut heading: Option<String> = None;
    for (event, _) in parser(text) {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let id = slug(heading.take().unwrap_or_default().trim());
                let n = seen.entry(id.clone()).or_insert(0);
                ids.insert(if *n == 0 { id } else { format!("{id}-{n}") });
                *n += 1;
            }
            _ => {}
        }
    }
    ids
}

/// The page's links and images that stay in the repository: (destination, line).
fn relative_links(text: &str) -> Vec<(String, usize)> {
    parser(text)
        .filter_map(|(event, range)| match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => Some((dest_url, range)),
            _ => None,
        })
        .filter(|(dest, _)| !dest.contains("://") && !dest.starts_with("mailto:"))
        .map(|(dest, range)| (dest.to_string(), line_of(text, range.start)))
        .collect()
}

/// Every link and image of `page` that leads nowhere, as "file:line: why".
fn broken_links(page: &Path, text: &str) -> Vec<String> {
    let dir = page.parent().expect("a page is in a directory");
    let mut broken = Vec::new();
    for (dest, line) in relative_links(text) {
        let (file, anchor) = match dest.split_once('#') {
            Some((file, anchor)) => (file, Some(anchor)),
            None => (dest.as_str(), None),
        };
        let target = if file.is_empty() {
            page.to_path_buf()
        } else {
            dir.join(file)
        };
        let at = format!("{}:{line}: link '{dest}'", page.display());
        if !target.exists() {
            broken.push(format!("{at}: no file {}", target.display()));
            continue;
        }
        let Some(anchor) = anchor.filter(|_| target.extension().is_some_and(|e| e == "md")) else {
            continue;
        };
        let ids = anchors(&std::fs::read_to_string(&target).expect("a linked page reads"));
        if !ids.contains(anchor) {
            broken.push(format!("{at}: no heading '#{anchor}' in {}", target.display()));
        }
    }
    broken
}

/// The page's ```toml blocks: (code, line of the fence).
fn toml_examples(text: &str) -> Vec<(String, usize)> {
    let mut examples = Vec::new();
    let mut open: Option<(String, usize)> = None;
    for (event, range) in parser(text) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) if &*info == "toml" => {
                open = Some((String::new(), line_of(text, range.start)));
            }
            Event::Text(t) => {
                if let Some((code, _)) = open.as_mut() {
                    code.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => examples.extend(open.take()),
            _ => {}
        }
    }
    examples
}

/// The `${NAME}` an example needs set (`${NAME:-default}` needs nothing;
/// `MCP_GATEWAY_EXE` the gateway sets itself).
fn variables(code: &str) -> BTreeSet<&str> {
    code.split("${")
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(expr, _)| expr))
        .filter(|expr| !expr.contains(":-") && *expr != "MCP_GATEWAY_EXE")
        .collect()
}

/// Why `mcp-gateway check` refuses an example, if it does: the example is
/// written alone as gateway.toml into a folder of its own, with every
/// variable it names set to a stand-in value.
fn check_refuses(code: &str) -> Option<String> {
    let dir = tempfile::tempdir().expect("a temporary folder");
    std::fs::write(dir.path().join("gateway.toml"), code).expect("the example is written");
    let mut command = Command::new(bin());
    command
        .args(["check", "--config", "gateway.toml"])
        .current_dir(dir.path())
        .env_remove("MCP_GATEWAY_CONFIG")
        .env_remove("MCP_GATEWAY_DB");
    for name in variables(code) {
        command.env(name, "dummy");
    }
    let out = command.output().expect("the binary runs");
    (!out.status.success()).then(|| String::from_utf8_lossy(&out.stderr).trim().to_string())
}

#[test]
fn every_relative_link_and_image_leads_to_a_file_and_heading() {
    let broken: Vec<String> = pages().iter().flat_map(|(p, text)| broken_links(p, text)).collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_toml_example_passes_check() {
    let mut checked = 0;
    let mut refused = Vec::new();
    for (page, text) in pages() {
        for (code, line) in toml_examples(&text) {
            checked += 1;
            if let Some(why) = check_refuses(&code) {
                refused.push(format!(
                    "{}:{line}: `mcp-gateway check` refuses this example: {why}",
                    page.display()
                ));
            }
        }
    }
    assert!(
        checked >= 10,
        "only {checked} toml examples found: is the fence still ```toml?"
    );
    assert!(refused.is_empty(), "{}", refused.join("\n"));
}

#[test]
fn every_page_of_the_book_is_in_its_summary() {
    let summary = std::fs::read_to_string(repo_path("docs/src/SUMMARY.md")).expect("docs/src/SUMMARY.md");
    let listed: BTreeSet<String> = relative_links(&summary).into_iter().map(|(dest, _)| dest).collect();
    let missing: Vec<String> = pages()
        .into_iter()
        .filter(|(p, _)| p.parent() == Some(&repo_path("docs/src")))
        .filter_map(|(p, _)| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .filter(|name| name != "SUMMARY.md" && !listed.contains(name))
        .collect();
    assert!(
        missing.is_empty(),
        "pages mdBook would not build (add them to SUMMARY.md): {missing:?}"
    );
}

#[test]
fn the_readme_stays_short() {
    let lines = std::fs::read_to_string(repo_path("README.md"))
        .expect("README.md")
        .lines()
        .count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines (at most {README_MAX_LINES}): move the reference into a page of docs/src/"
    );
}

#[test]
fn headings_get_mdbook_ids() {
    assert_eq!(slug("Configuration (`gateway.toml`)"), "configuration-gatewaytoml");
    assert_eq!(slug("Errors from `tool_execute`"), "errors-from-tool_execute");
    assert_eq!(
        slug("Built-in: local archives (`archives`)"),
        "built-in-local-archives-archives"
    );
    let ids = anchors("# Tasks\n\n## Tasks\n\n```\n# not a heading\n```\n## Tracing (OpenTelemetry)\n");
    assert_eq!(
        ids,
        BTreeSet::from(["tasks".into(), "tasks-1".into(), "tracing-opentelemetry".into()])
    );
}

#[test]
fn examples_and_their_variables_are_found() {
    let text = "```toml\nurl = \"${A}\"\nb = \"${B:-x}\"\nc = \"${MCP_GATEWAY_EXE}\"\n```\n\n```toml,ignore\nd = 1\n```\n\n```sh\ne\n```\n";
    let examples = toml_examples(text);
    assert_eq!(examples.len(), 1);
    assert_eq!(examples[0].1, 1);
    assert_eq!(variables(&examples[0].0), BTreeSet::from(["A"]));
}

/// Issue #72 (9): where the book says the store's migrations are, the
/// numbered SQL files are (at the top level again since issue #74).
#[test]
fn the_book_names_where_the_migrations_are() {
    for page in ["projects-and-tokens.md", "replicas.md"] {
        let text = std::fs::read_to_string(repo_path(&format!("docs/src/{page}"))).unwrap();
        // Code spans are the odd pieces between backticks.
        let named: Vec<&str> = text
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|span| span.ends_with("migrations/") || span.ends_with("migrations/postgres/"))
            .collect();
        assert!(!named.is_empty(), "{page} names no migrations folder");
        for dir in named {
            let sql = std::fs::read_dir(repo_path(dir))
                .unwrap_or_else(|e| panic!("{page} names `{dir}`, which is not a folder here: {e}"))
                .filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().ends_with(".sql"))
                .count();
            assert!(sql > 0, "{page} names `{dir}`, which holds no migration");
        }
    }
}
