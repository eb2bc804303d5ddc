//! The crate's one-way layers, kept by a test: every module imports only from
//! layers below its own, and no import circle spans more than two files.
//!
//! It reads the source as `../shared/tools/modgraph.py` does: each file a
//! node, an edge wherever a file names another module's path (`use crate::…`,
//! `crate::…::x`, `super::…`), comments and `#[cfg(test)]` code left out.
//! A new top-level module must be given a layer here, which is the point:
//! placing it is a design decision, made once, in review.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use regex::Regex;

/// Top to bottom. A module may import from any layer below its own, never
/// from its own layer's other modules or from above. Mirrors the layout in
/// `lib.rs` and docs/src/layout.md.
const LAYERS: &[(&str, &[&str])] = &[
    ("edge", &["cli"]),
    ("entry", &["launch"]),
    ("faces", &["server", "console", "reload", "eval"]),
    ("use cases", &["gateway", "operator"]),
    ("ranking", &["rank"]),
    ("discovery", &["catalog", "learning", "credentials"]),
    (
        "guards and connections",
        &["auth", "security", "ratelimit", "downstream"],
    ),
    ("built-ins", &["index", "archive", "demo"]),
    ("engines", &["store", "search", "oauth", "traces", "sandbox"]),
    ("access model", &["access"]),
    ("config", &["config"]),
    (
        "ground",
        &[
            "secrets",
            "leaks",
            "uris",
            "validate",
            "watch",
            "telemetry",
            "signature",
        ],
    ),
    ("vocabulary", &["wire", "text", "mask"]),
];

type Key = Vec<String>;

/// Every non-test source file of `src`, by module path.
fn modules(src: &Path) -> BTreeMap<Key, PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    let test_only = test_only_files(&files);
    let mut mods = BTreeMap::new();
    for path in files {
        if test_only.contains(&path) {
            continue;
        }
        let rel = path.strip_prefix(src).unwrap().with_extension("");
        let mut key: Key = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
        match key.last().map(String::as_str) {
            Some("lib" | "main") if key.len() == 1 => key.clear(),
            Some("mod") => {
                key.pop();
            }
            _ => {}
        }
        mods.insert(key, path);
    }
    mods
}

/// Files declared as `#[cfg(test)] mod x;`: test code, like inline test modules.
fn test_only_files(files: &[PathBuf]) -> BTreeSet<PathBuf> {
    let declared = Regex::new(r"#\[cfg\(test\)\]\s*(?:pub(?:\(crate\))?\s+)?mod\s+(\w+)\s*;").unwrap();
    let mut out = BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        let stem = file.file_stem().unwrap().to_string_lossy();
        let dir = match stem.as_ref() {
            "lib" | "main" | "mod" => file.parent().unwrap().to_path_buf(),
            _ => file.with_extension(""),
        };
        for c in declared.captures_iter(&text) {
            out.insert(dir.join(format!("{}.rs", &c[1])));
            out.insert(dir.join(&c[1]).join("mod.rs"));
        }
    }
    out
}

/// The code of a file that counts: no inline test module, no comments.
fn code(text: &str) -> String {
    let tests = Regex::new(r"#\[cfg\(test\)\]\s*(?:pub\s+)?mod\s+\w+\s*\{").unwrap();
    let text = match tests.find(text) {
        Some(m) => &text[..m.start()],
        None => text,
    };
    Regex::new(r"//[^\n]*").unwrap().replace_all(text, "").into_owned()
}

/// A `use` tree as the paths it names: `a::{b, c::{d}}` → `a::b`, `a::c::d`.
fn expand(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let mut depth = 0;
    let mut close = tree.len();
    for (i, c) in tree.char_indices().skip(open) {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    close = i;
                    break;
                }
            }
            _ => {}
        }
    }
    let (prefix, inner, suffix) = (
        &tree[..open],
        &tree[open + 1..close],
        &tree[(close + 1).min(tree.len())..],
    );
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand(p).into_iter().map(|e| format!("{prefix}{e}{suffix}")))
        .collect()
}

/// Which files each file imports.
fn graph(mods: &BTreeMap<Key, PathBuf>) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let uses = Regex::new(r"\buse\s+([^;]+);").unwrap();
    let crate_paths = Regex::new(r"\b(crate(?:::\w+)+)").unwrap();
    let super_paths = Regex::new(r"\b((?:super::)+\w+(?:::\w+)*)").unwrap();
    let mut edges = BTreeMap::new();
    for (key, file) in mods {
        let text = code(&std::fs::read_to_string(file).unwrap());
        let mut paths: Vec<String> = uses.captures_iter(&text).flat_map(|c| expand(&c[1])).collect();
        paths.extend(crate_paths.captures_iter(&text).map(|c| c[1].to_string()));
        paths.extend(super_paths.captures_iter(&text).map(|c| c[1].to_string()));
        let mut targets = BTreeSet::new();
        for path in paths {
            let segments: Vec<&str> = path.split("::").collect();
            let (base, rest): (Key, &[&str]) = match segments[0] {
                "crate" => (Vec::new(), &segments[1..]),
                "self" => (key.clone(), &segments[1..]),
                "super" => {
                    let ups = segments.iter().take_while(|s| **s == "super").count();
                    // A file `a/b.rs` is module a::b: `super` is a, `super::super` the crate.
                    (key[..key.len().saturating_sub(ups)].to_vec(), &segments[ups..])
                }
                _ => continue,
            };
            let target = (0..=rest.len()).rev().find_map(|n| {
                let mut candidate = base.clone();
                candidate.extend(rest[..n].iter().map(|s| s.to_string()));
                mods.get(&candidate).filter(|_| !candidate.is_empty())
            });
            if let Some(target) = target.filter(|t| *t != file) {
                targets.insert(target.clone());
            }
        }
        edges.insert(file.clone(), targets);
    }
    edges
}

/// Strongly connected components with more than one file (Tarjan).
fn circles(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: HashMap<&'a PathBuf, usize>,
        low: HashMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on_stack: BTreeSet<&'a PathBuf>,
        out: Vec<Vec<PathBuf>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a PathBuf) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.edges.get(v).into_iter().flatten() {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(w.clone());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    self.out.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        edges,
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.out
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, mods)| mods.contains(&module))
}

fn top_module(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.iter().next().unwrap().to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn every_import_points_down_the_layers() {
    let src = src();
    let mods = modules(&src);
    let mut unplaced = BTreeSet::new();
    let mut upward = Vec::new();
    for (file, targets) in graph(&mods) {
        let from = top_module(&src, &file);
        if matches!(from.as_str(), "lib" | "main") {
            continue;
        }
        let Some(from_layer) = layer_of(&from) else {
            unplaced.insert(from);
            continue;
        };
        for target in targets {
            let to = top_module(&src, &target);
            if to == from {
                continue;
            }
            // Layers are listed top first: a lower layer has a larger index.
            if layer_of(&to).is_some_and(|l| l <= from_layer) {
                upward.push(format!(
                    "{} imports {} ({} → {})",
                    file.strip_prefix(&src).unwrap().display(),
                    target.strip_prefix(&src).unwrap().display(),
                    LAYERS[from_layer].0,
                    LAYERS[layer_of(&to).unwrap()].0
                ));
            }
        }
    }
    assert!(
        unplaced.is_empty(),
        "modules with no layer (place them in LAYERS in tests/suite/layers.rs and in lib.rs's layout): {unplaced:?}"
    );
    assert!(
        upward.is_empty(),
        "imports that point up or sideways:\n  {}",
        upward.join("\n  ")
    );
}

#[test]
fn no_import_circle_spans_more_than_two_files() {
    let src = src();
    let too_large: Vec<String> = circles(&graph(&modules(&src)))
        .into_iter()
        .filter(|c| c.len() > 2)
        .map(|c| {
            let mut names: Vec<String> = c
                .iter()
                .map(|f| f.strip_prefix(&src).unwrap().display().to_string())
                .collect();
            names.sort();
            names.join(", ")
        })
        .collect();
    assert!(
        too_large.is_empty(),
        "import circles of more than two files: {too_large:?}"
    );
}

/// The reader finds what it should: an upward import and a circle in a
/// made-up tree are caught (so a green run is not a blind one).
#[test]
fn the_reader_sees_imports_and_circles() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("store")).unwrap();
    std::fs::write(src.join("lib.rs"), "pub mod store;\npub mod gateway;\n").unwrap();
    std::fs::write(
        src.join("store.rs"),
        "mod sql;\nuse crate::gateway::{self, Gateway};\n#[cfg(test)]\nmod tests { use crate::cli::X; }\n",
    )
    .unwrap();
    std::fs::write(
        src.join("store/sql.rs"),
        "use super::super::gateway::x;\n// use crate::cli;\n",
    )
    .unwrap();
    std::fs::write(
        src.join("gateway.rs"),
        "fn f() { crate::store::sql::run(); crate::store::open(); }\n",
    )
    .unwrap();
    let mods = modules(src);
    let edges = graph(&mods);
    let names = |f: &PathBuf| -> BTreeSet<String> {
        edges[f]
            .iter()
            .map(|t| t.strip_prefix(src).unwrap().display().to_string())
            .collect()
    };
    assert_eq!(names(&src.join("store.rs")), BTreeSet::from(["gateway.rs".to_string()]));
    assert_eq!(
        names(&src.join("store/sql.rs")),
        BTreeSet::from(["gateway.rs".to_string()])
    );
    assert_eq!(
        names(&src.join("gateway.rs")),
        BTreeSet::from(["store.rs".to_string(), "store/sql.rs".to_string()])
    );
    let found = circles(&edges);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].len(), 3, "{found:?}");
    assert_eq!(
        expand("crate::a::{b, c::{d, e}}"),
        ["crate::a::b", "crate::a::c::d", "crate::a::c::e"]
    );
}
