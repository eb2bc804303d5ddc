//! docs/src/layout.md cannot drift from the tree: its table of layers
//! names every crate and root module once, each crate's manifest depends
//! only on crates below its own (the compiler keeps the rest: a crate can
//! name nothing it does not depend on), and its list of files is made from
//! the source, each file under its layer with the first sentence of its
//! `//!` doc. `UPDATE_LAYOUT=1 cargo test --test suite layout::` writes the
//! list anew.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use regex::Regex;

const BEGIN: &str = "<!-- files: made by tests/suite/layout.rs from each file's first doc sentence -->";
const END: &str = "<!-- end of files -->";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn layout_md(root: &Path) -> String {
    std::fs::read_to_string(root.join("docs/src/layout.md")).unwrap()
}

/// The layers, top to bottom, as docs/src/layout.md's table lists them: each
/// row's name and the modules and crates (in backticks, outside brackets) it holds.
fn layers(layout: &str) -> Vec<(String, Vec<String>)> {
    let ticked = Regex::new(r"`([\w.-]+)`").unwrap();
    let aside = Regex::new(r"\([^)]*\)").unwrap();
    let start = layout.find("| layer |").expect("layout.md has the layer table");
    layout[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let modules = ticked
                .captures_iter(&aside.replace_all(cells[2], ""))
                .map(|c| c[1].to_string())
                .collect();
            (cells[1].to_string(), modules)
        })
        .collect()
}

/// One package of the workspace: its name, where its source is, and the
/// workspace crates its `[dependencies]` name.
struct Package {
    name: String,
    src: PathBuf,
    deps: BTreeSet<String>,
}

impl Package {
    /// The row name a file of this package has in the table: the crate's,
    /// or for the root package its top-level module (none for lib.rs and
    /// main.rs, which open the list).
    fn top_of(&self, file: &Path) -> Option<String> {
        if self.name != "mcp-gateway" {
            return Some(self.name.clone());
        }
        let first = file.strip_prefix(&self.src).ok()?.iter().next()?.to_string_lossy();
        let first = first.trim_end_matches(".rs");
        (!matches!(first, "lib" | "main")).then(|| first.to_string())
    }
}

/// The root package and every crate under `crates/`.
fn packages(root: &Path) -> Vec<Package> {
    let mut dirs = vec![root.to_path_buf()];
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    crates.sort();
    dirs.extend(crates);
    dirs.into_iter()
        .map(|dir| {
            let manifest: toml::Table = std::fs::read_to_string(dir.join("Cargo.toml"))
                .unwrap()
                .parse()
                .unwrap();
            let deps = manifest
                .get("dependencies")
                .and_then(toml::Value::as_table)
                .map(|deps| {
                    deps.iter()
                        .filter(|(_, spec)| spec.get("path").is_some())
                        .map(|(name, _)| name.clone())
                        .collect()
                })
                .unwrap_or_default();
            Package {
                name: manifest["package"]["name"].as_str().unwrap().to_string(),
                src: dir.join("src"),
                deps,
            }
        })
        .collect()
}

/// Every Rust file under `dir`, test files too.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    found
}

/// What breaks the table: a crate or root module with no row, or in two,
/// and a crate whose manifest depends on a crate not below its own.
fn breaches(root: &Path) -> Vec<String> {
    let layers = layers(&layout_md(root));
    let row_of = |name: &str| layers.iter().position(|(_, names)| names.iter().any(|n| n == name));
    let packages = packages(root);
    let mut out = Vec::new();
    let mut named: Vec<String> = packages.iter().skip(1).map(|p| p.name.clone()).collect();
    named.extend(
        rust_files(&packages[0].src)
            .iter()
            .filter_map(|f| packages[0].top_of(f)),
    );
    named.sort();
    named.dedup();
    for name in &named {
        let rows = layers.iter().filter(|(_, names)| names.contains(name)).count();
        if rows != 1 {
            out.push(format!("`{name}` is in {rows} rows of the table, not one"));
        }
    }
    for package in packages.iter().skip(1) {
        let Some(own) = row_of(&package.name) else { continue };
        for dep in &package.deps {
            if row_of(dep).is_none_or(|row| row <= own) {
                out.push(format!(
                    "crate `{}` depends on `{dep}`, which is not below it",
                    package.name
                ));
            }
        }
    }
    out
}

#[test]
fn every_crate_has_one_layer_and_depends_only_on_crates_below_it() {
    let breaches = breaches(&workspace());
    assert!(
        breaches.is_empty(),
        "docs/src/layout.md's layers:\n  {}",
        breaches.join("\n  ")
    );
}

/// The first sentence of a file's leading `//!` paragraph, as Markdown that
/// reads alone: intra-doc and relative links become their text.
fn first_sentence(text: &str) -> Option<String> {
    let paragraph: Vec<&str> = text
        .lines()
        .map_while(|l| l.strip_prefix("//!"))
        .map(str::trim)
        .take_while(|l| !l.is_empty())
        .collect();
    let joined = paragraph.join(" ");
    let end = Regex::new(r"\.(\s|$)").unwrap();
    let sentence = match end.find(&joined) {
        Some(m) => joined[..m.start()].to_string() + ".",
        None => joined,
    };
    let links = Regex::new(r"\[([^\]]+)\](\([^)]*\))?").unwrap();
    let sentence = links.replace_all(&sentence, "$1").into_owned();
    (!sentence.is_empty()).then_some(sentence)
}

/// Every Rust file of the workspace (test files too), each with the
/// top-level module or crate it belongs to.
fn every_file(packages: &[Package]) -> Vec<(Option<String>, PathBuf)> {
    let files = packages.iter().flat_map(|package| {
        rust_files(&package.src)
            .into_iter()
            .map(move |path| (package.top_of(&path), path))
    });
    files.collect()
}

/// A file's place in the list: a module's own file before its folder, a
/// crate's lib.rs first.
fn order(root: &Path, path: &Path) -> String {
    let shown = path.strip_prefix(root).unwrap().with_extension("");
    let shown = shown.to_string_lossy();
    match shown.strip_suffix("/src/lib") {
        Some(krate) => format!("{krate}/src"),
        None => shown.into_owned(),
    }
}

/// The list of files as layout.md holds it, or the files with no doc sentence.
fn files_section(root: &Path) -> Result<String, Vec<String>> {
    let layers = layers(&layout_md(root));
    let mut files = every_file(&packages(root));
    files.sort_by_key(|(_, p)| order(root, p));
    let mut out = format!("{BEGIN}\n");
    let mut undocumented = Vec::new();
    for (i, (name, modules)) in layers.iter().enumerate() {
        out.push_str(&format!("\n### {name}\n\n"));
        // the gateway's lib.rs and main.rs open the list, with the edge
        let here = files.iter().filter(|(top, _)| match top {
            Some(top) => modules.contains(top),
            None => i == 0,
        });
        for (_, path) in here {
            let shown = path.strip_prefix(root).unwrap().display().to_string();
            match first_sentence(&std::fs::read_to_string(path).unwrap()) {
                Some(sentence) => out.push_str(&format!("- `{shown}`: {sentence}\n")),
                None => undocumented.push(shown),
            }
        }
    }
    out.push_str(&format!("\n{END}"));
    if undocumented.is_empty() {
        Ok(out)
    } else {
        Err(undocumented)
    }
}

#[test]
fn layout_md_lists_every_file_under_its_layer() {
    let root = workspace();
    let page_path = root.join("docs/src/layout.md");
    let page = layout_md(&root);
    let wanted =
        files_section(&root).unwrap_or_else(|files| panic!("files that do not open with a `//!` sentence: {files:?}"));
    let (Some(begin), Some(end)) = (page.find(BEGIN), page.find(END)) else {
        panic!("docs/src/layout.md has no list of files between {BEGIN} and {END}");
    };
    let present = &page[begin..end + END.len()];
    if present == wanted {
        return;
    }
    if std::env::var_os("UPDATE_LAYOUT").is_some() {
        let updated = format!("{}{wanted}{}", &page[..begin], &page[end + END.len()..]);
        std::fs::write(&page_path, updated).unwrap();
        return;
    }
    let missing: Vec<&str> = wanted.lines().filter(|l| !present.contains(l)).collect();
    let stale: Vec<&str> = present.lines().filter(|l| !wanted.contains(l)).collect();
    panic!(
        "docs/src/layout.md's list of files differs from the tree; run \
         `UPDATE_LAYOUT=1 cargo test --test suite layout::` and review the change.\n\
         wanted:\n  {}\nfound:\n  {}",
        missing.join("\n  "),
        stale.join("\n  ")
    );
}

#[test]
fn a_first_sentence_reads_alone() {
    assert_eq!(
        first_sentence("//! What the store answered ([`crate::store::Store`]), kept.\n//! More: here.\n"),
        Some("What the store answered (`crate::store::Store`), kept.".into())
    );
    assert_eq!(
        first_sentence("//! Per-caller limits ([how](docs/src/x.md)):\n//! a list\n"),
        Some("Per-caller limits (how): a list".into())
    );
    assert_eq!(
        first_sentence("//! One line\n//!\n//! Another.\n"),
        Some("One line".into())
    );
    assert_eq!(first_sentence("use std::fs;\n"), None);
}
