//! docs/src/layout.md cannot drift from the tree: its list of files is made
//! from the source, each file under its layer with the first sentence of its
//! `//!` doc, and this test fails when the page and the tree differ.
//! `UPDATE_LAYOUT=1 cargo test --test suite layout::` writes the list anew.

use std::path::{Path, PathBuf};

use regex::Regex;

use crate::layers::{Tree, layers, layout_md, rust_files, workspace};

const BEGIN: &str = "<!-- files: made by tests/suite/layout.rs from each file's first doc sentence -->";
const END: &str = "<!-- end of files -->";

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
fn every_file(tree: &Tree) -> Vec<(Option<String>, PathBuf)> {
    let files = tree.crates.iter().flat_map(|krate| {
        rust_files(&krate.src)
            .into_iter()
            .map(move |path| (krate.top_of(&path), path))
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
    let tree = Tree::read(root);
    let layers = layers(&layout_md(root));
    let mut files = every_file(&tree);
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
            let shown = tree.shown(path);
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
