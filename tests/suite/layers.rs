//! The one-way layers, kept by a test: every module imports only from layers
//! below its own, every workspace crate depends only on crates below it, and
//! no import circle spans more than two files.
//!
//! The layers are listed once, in docs/src/layout.md's table; this reads them
//! from there. It reads the source as a reviewer would: each file a node, an
//! edge wherever a file names another module's path (`use crate::…`,
//! `crate::…::x`, `super::…`, or a path into another workspace crate),
//! comments and `#[cfg(test)]` code left out. The gateway re-exports each
//! crate where its modules once were (`pub use store;`, `pub use vocab::wire;`
//! in src/lib.rs), so `crate::wire` is read as the vocab crate's `wire`.
//! A new top-level module or crate must be given a layer in the table, which
//! is the point: placing it is a design decision, made once, in review.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use regex::Regex;

/// A module's path from the top of the tree: the gateway's modules by their
/// own path (`["gateway", "call"]`), another crate's under its name
/// (`["store", "audit"]`).
pub(crate) type Key = Vec<String>;

/// One crate of the workspace: where its source is, the name its modules sit
/// under (none for the gateway), and the workspace crates it depends on.
#[derive(Debug)]
pub(crate) struct Crate {
    pub(crate) name: String,
    pub(crate) src: PathBuf,
    mount: Key,
    deps: BTreeSet<String>,
}

/// Every non-test source file of the workspace, by module path, and what
/// the gateway re-exports at its root.
pub(crate) struct Tree {
    pub(crate) root: PathBuf,
    pub(crate) crates: Vec<Crate>,
    pub(crate) mods: BTreeMap<Key, PathBuf>,
    /// `pub use vocab::wire;` in the gateway's lib.rs: `wire` → `["vocab", "wire"]`.
    aliases: BTreeMap<String, Key>,
}

/// A crate's name as Rust paths spell it.
fn ident(name: &str) -> String {
    name.replace('-', "_")
}

/// The workspace crates a manifest names as `x = { path = … }`.
fn path_deps(manifest: &str) -> BTreeSet<String> {
    let dep = Regex::new(r#"(?m)^([\w-]+)\s*=\s*\{[^}\n]*\bpath\s*="#).unwrap();
    let mut deps = BTreeSet::new();
    let mut section = "";
    for line in manifest.lines() {
        if line.starts_with('[') {
            section = line.trim();
        } else if section == "[dependencies]"
            && let Some(c) = dep.captures(line)
        {
            deps.insert(ident(&c[1]));
        }
    }
    deps
}

impl Crate {
    /// The top-level module or crate a file of this crate belongs to: the
    /// crate itself, or for the gateway the module its path starts with
    /// (none for its lib.rs and main.rs).
    pub(crate) fn top_of(&self, file: &Path) -> Option<String> {
        if let Some(name) = self.mount.first() {
            return Some(name.clone());
        }
        let first = file.strip_prefix(&self.src).ok()?.iter().next()?.to_string_lossy();
        let first = first.trim_end_matches(".rs");
        (!matches!(first, "lib" | "main")).then(|| first.to_string())
    }
}

impl Tree {
    /// The workspace at `root`: the gateway in `src/`, the other crates in `crates/*/`.
    pub(crate) fn read(root: &Path) -> Tree {
        let manifest = |dir: &Path| std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let mut crates = vec![Crate {
            name: "mcp_gateway".into(),
            src: root.join("src"),
            mount: Vec::new(),
            deps: path_deps(&manifest(root)),
        }];
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
            .map(|d| {
                d.map(|e| e.unwrap().path())
                    .filter(|p| p.join("Cargo.toml").is_file())
                    .collect()
            })
            .unwrap_or_default();
        dirs.sort();
        for dir in dirs {
            let name = ident(&dir.file_name().unwrap().to_string_lossy());
            crates.push(Crate {
                mount: vec![name.clone()],
                name,
                src: dir.join("src"),
                deps: path_deps(&manifest(&dir)),
            });
        }
        let mut mods = BTreeMap::new();
        for krate in &crates {
            for (rel, path) in files(&krate.src) {
                let mut key = krate.mount.clone();
                key.extend(rel);
                mods.insert(key, path);
            }
        }
        let reexport = Regex::new(r"(?m)^pub use (\w+)((?:::\w+)*);").unwrap();
        let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap_or_default();
        let aliases = reexport
            .captures_iter(&lib)
            .map(|c| {
                let mut target = vec![c[1].to_string()];
                target.extend(c[2].split("::").filter(|s| !s.is_empty()).map(String::from));
                (target.last().unwrap().clone(), target)
            })
            .collect();
        Tree {
            root: root.to_path_buf(),
            crates,
            mods,
            aliases,
        }
    }

    /// The crate a file belongs to.
    pub(crate) fn crate_of(&self, file: &Path) -> &Crate {
        self.crates.iter().rev().find(|c| file.starts_with(&c.src)).unwrap()
    }

    /// A file's path from the workspace root, as the docs name it.
    pub(crate) fn shown(&self, file: &Path) -> String {
        file.strip_prefix(&self.root).unwrap().display().to_string()
    }

    /// The top-level module or crate a file belongs to: `gateway`, `store`, or
    /// none for the gateway's lib.rs and main.rs.
    pub(crate) fn top(&self, file: &Path) -> Option<&str> {
        self.mods
            .iter()
            .find(|(_, f)| *f == file)
            .and_then(|(k, _)| k.first())
            .map(String::as_str)
    }

    /// A module path as it is written in `file` (its first segment `crate`,
    /// `self`, `super` or a workspace crate's name), from the top of the tree.
    fn resolve(&self, file_key: &Key, krate: &Crate, path: &str) -> Option<Key> {
        let segments: Vec<&str> = path.split("::").collect();
        let (base, rest): (Key, &[&str]) = match segments[0] {
            "crate" => (krate.mount.clone(), &segments[1..]),
            "self" => (file_key.clone(), &segments[1..]),
            "super" => {
                let ups = segments.iter().take_while(|s| **s == "super").count();
                // A file `a/b.rs` is module a::b: `super` is a, `super::super` the crate.
                (
                    file_key[..file_key.len().saturating_sub(ups)].to_vec(),
                    &segments[ups..],
                )
            }
            // a crate it depends on, unless a child module of the file has the name
            name if krate.deps.contains(name)
                && !self
                    .mods
                    .contains_key(&[file_key.as_slice(), &[name.to_string()]].concat()) =>
            {
                let target = self.crates.iter().find(|c| c.name == name)?;
                (target.mount.clone(), &segments[1..])
            }
            _ => return None,
        };
        let mut full = base;
        full.extend(rest.iter().map(|s| s.to_string()));
        // a module the gateway re-exports from a crate, named where it once was
        if let Some(target) = full
            .first()
            .filter(|f| !self.mods.contains_key(std::slice::from_ref(*f)))
            .and_then(|f| self.aliases.get(f))
        {
            full.splice(..1, target.iter().cloned());
        }
        Some(full)
    }

    /// Which files each file imports.
    pub(crate) fn graph(&self) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
        let uses = Regex::new(r"\buse\s+([^;]+);").unwrap();
        let names: Vec<&str> = self.crates.iter().map(|c| c.name.as_str()).collect();
        let paths_re = Regex::new(&format!(r"\b((?:crate|{})(?:::\w+)+)", names.join("|"))).unwrap();
        let super_paths = Regex::new(r"\b((?:super::)+\w+(?:::\w+)*)").unwrap();
        let mut edges = BTreeMap::new();
        for (key, file) in &self.mods {
            let krate = self.crate_of(file);
            let text = code(&std::fs::read_to_string(file).unwrap());
            let mut paths: Vec<String> = uses.captures_iter(&text).flat_map(|c| expand(&c[1])).collect();
            paths.extend(paths_re.captures_iter(&text).map(|c| c[1].to_string()));
            paths.extend(super_paths.captures_iter(&text).map(|c| c[1].to_string()));
            let mut targets = BTreeSet::new();
            for path in paths {
                let Some(full) = self.resolve(key, krate, &path) else {
                    continue;
                };
                let target = (1..=full.len()).rev().find_map(|n| self.mods.get(&full[..n]));
                if let Some(target) = target.filter(|t| *t != file) {
                    targets.insert(target.clone());
                }
            }
            edges.insert(file.clone(), targets);
        }
        edges
    }
}

/// Every Rust file under `dir`, test files too.
pub(crate) fn rust_files(dir: &Path) -> Vec<PathBuf> {
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

/// The Rust files under `src`, each with its module path within its crate
/// (`lib.rs` and `main.rs` are the crate itself), test-only files left out.
fn files(src: &Path) -> Vec<(Key, PathBuf)> {
    let found = rust_files(src);
    let test_only = test_only_files(&found);
    let mut out = Vec::new();
    for path in found {
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
        out.push((key, path));
    }
    out.sort();
    out
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

/// The layers, top to bottom, as docs/src/layout.md's table lists them: each
/// row's name and the modules and crates (in backticks, outside brackets) it holds.
pub(crate) fn layers(layout: &str) -> Vec<(String, Vec<String>)> {
    let ticked = Regex::new(r"`([\w-]+)`").unwrap();
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
                .map(|c| ident(&c[1]))
                .collect();
            (cells[1].to_string(), modules)
        })
        .collect()
}

pub(crate) fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

pub(crate) fn layout_md(root: &Path) -> String {
    std::fs::read_to_string(root.join("docs/src/layout.md")).unwrap()
}

/// What breaks the layers in the tree at `root`: modules or crates with no
/// layer, imports that point up or sideways, crates that depend on a crate
/// not below them.
fn breaches(root: &Path) -> Vec<String> {
    let tree = Tree::read(root);
    let layers = layers(&layout_md(root));
    let layer_of = |module: &str| layers.iter().position(|(_, mods)| mods.iter().any(|m| m == module));
    let mut out = Vec::new();
    let mut unplaced = BTreeSet::new();
    for (file, targets) in tree.graph() {
        let Some(from) = tree.top(&file) else {
            continue; // the gateway's lib.rs and main.rs
        };
        let Some(from_layer) = layer_of(from) else {
            unplaced.insert(from.to_string());
            continue;
        };
        for target in targets {
            let to = tree.top(&target).unwrap_or_default();
            // Layers are listed top first: a lower layer has a larger index.
            if to != from && layer_of(to).is_some_and(|l| l <= from_layer) {
                out.push(format!(
                    "{} imports {} ({} → {})",
                    tree.shown(&file),
                    tree.shown(&target),
                    layers[from_layer].0,
                    layers[layer_of(to).unwrap()].0
                ));
            }
        }
    }
    // The layers each crate's modules span, top and bottom (the gateway spans many).
    let span = |krate: &Crate| {
        let placed = tree.mods.iter().filter(|(_, f)| tree.crate_of(f).name == krate.name);
        let found: Vec<usize> = placed
            .filter_map(|(k, _)| k.first().and_then(|m| layer_of(m)))
            .collect();
        Some((*found.iter().min()?, *found.iter().max()?))
    };
    for krate in &tree.crates {
        for dep in &krate.deps {
            let Some(dep) = tree.crates.iter().find(|c| &c.name == dep) else {
                continue;
            };
            match (span(krate), span(dep)) {
                (Some((_, bottom)), Some((top, _))) if top > bottom => {}
                (None, _) | (_, None) => {}
                _ => out.push(format!(
                    "crate {} depends on crate {}, which is not below it",
                    krate.name, dep.name
                )),
            }
        }
    }
    if !unplaced.is_empty() {
        out.push(format!(
            "modules or crates with no layer (give each a row's place in docs/src/layout.md): {unplaced:?}"
        ));
    }
    out
}

#[test]
fn every_import_and_every_crate_points_down_the_layers() {
    let found = breaches(&workspace());
    assert!(found.is_empty(), "the layers are broken:\n  {}", found.join("\n  "));
}

#[test]
fn no_import_circle_spans_more_than_two_files() {
    let tree = Tree::read(&workspace());
    let too_large: Vec<String> = circles(&tree.graph())
        .into_iter()
        .filter(|c| c.len() > 2)
        .map(|c| {
            let mut names: Vec<String> = c.iter().map(|f| tree.shown(f)).collect();
            names.sort();
            names.join(", ")
        })
        .collect();
    assert!(
        too_large.is_empty(),
        "import circles of more than two files: {too_large:?}"
    );
}

/// The reader finds what it should: an upward import, a circle, a crate
/// that depends upward and a module with no layer, in a made-up workspace
/// (so a green run is not a blind one).
#[test]
fn the_reader_sees_imports_crates_and_circles() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write = |path: &str, text: &str| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("Cargo.toml", "[dependencies]\nlow = { path = \"crates/low\" }\n");
    write(
        "crates/low/Cargo.toml",
        "[dependencies]\nhigh = { path = \"crates/high\" }\n",
    );
    write("crates/high/Cargo.toml", "[dependencies]\n");
    write("crates/high/src/lib.rs", "");
    write(
        "crates/low/src/lib.rs",
        "pub mod sql;\nfn f() { high::x(); }\n#[cfg(test)]\nmod tests { use low::cli::X; }\n",
    );
    write("crates/low/src/sql.rs", "use super::Thing;\n// use crate::cli;\n");
    write(
        "src/lib.rs",
        "pub use low;\npub use low::sql;\npub mod gateway;\npub mod stray;\n",
    );
    write("src/gateway.rs", "fn f() { crate::sql::run(); low::open(); }\n");
    write("src/stray.rs", "");
    write(
        "docs/src/layout.md",
        "| layer | modules |\n| --- | --- |\n| top | `gateway` |\n| middle | `low` (crate) |\n| bottom | `high` (crate) |\n",
    );
    let tree = Tree::read(root);
    let edges = tree.graph();
    let names = |f: &str| -> BTreeSet<String> { edges[&root.join(f)].iter().map(|t| tree.shown(t)).collect() };
    assert_eq!(
        names("src/gateway.rs"),
        BTreeSet::from(["crates/low/src/lib.rs".to_string(), "crates/low/src/sql.rs".to_string()])
    );
    assert_eq!(
        names("crates/low/src/lib.rs"),
        BTreeSet::from(["crates/high/src/lib.rs".to_string()])
    );
    assert_eq!(
        names("crates/low/src/sql.rs"),
        BTreeSet::from(["crates/low/src/lib.rs".to_string()]),
        "super of a crate's module is the crate's root"
    );
    let found = breaches(root);
    assert!(
        found.iter().any(|b| b.contains("no layer") && b.contains("stray")),
        "{found:?}"
    );
    write(
        "crates/low/src/sql.rs",
        "use super::gateway;\nfn f() { mcp_gateway::gateway::x(); }\n",
    );
    write(
        "crates/low/Cargo.toml",
        "[dependencies]\nhigh = { path = \"crates/high\" }\nmcp-gateway = { path = \"../..\" }\n",
    );
    let found = breaches(root);
    assert!(
        found
            .iter()
            .any(|b| b.starts_with("crates/low/src/sql.rs imports src/gateway.rs (middle → top)")),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|b| b.contains("crate low depends on crate mcp_gateway")),
        "{found:?}"
    );
    write("crates/low/src/lib.rs", "pub mod sql;\nuse crate::sql::y;\n");
    write("crates/low/src/sql.rs", "use mcp_gateway::gateway;\n");
    write("src/gateway.rs", "use crate::low::open;\n");
    let circle = circles(&Tree::read(root).graph());
    assert_eq!(circle.len(), 1, "{circle:?}");
    assert_eq!(circle[0].len(), 3, "{circle:?}");
    assert_eq!(
        expand("crate::a::{b, c::{d, e}}"),
        ["crate::a::b", "crate::a::c::d", "crate::a::c::e"]
    );
}
