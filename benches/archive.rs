//! Archive indexing throughput and query latency on a generated archive of
//! 10,000 Markdown notes (~2 kB each, words drawn from the real tool
//! descriptions in benches/data, with links between notes).
//! Run: `cargo bench --bench archive`.

use std::path::Path;
use std::time::{Duration, Instant};

use archive::{self, Archive, ArchivesConfig, Options};
use mcp_gateway::config::RawArchives;
use serde_json::{Value, json};

const DOCS: usize = 10_000;
const QUERIES: usize = 300;

/// A small deterministic generator, so every run indexes the same archive.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
}

fn vocabulary() -> Vec<String> {
    let mut words = std::collections::BTreeSet::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data/catalog");
    fn strings(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
            Value::Object(o) => o.values().for_each(|x| strings(x, out)),
            _ => {}
        }
    }
    for entry in std::fs::read_dir(dir).unwrap() {
        let v: Value = serde_json::from_slice(&std::fs::read(entry.unwrap().path()).unwrap()).unwrap();
        let mut texts = Vec::new();
        strings(&v, &mut texts);
        for t in texts {
            for w in t.split(|c: char| !c.is_ascii_alphabetic()).filter(|w| w.len() > 2) {
                words.insert(w.to_ascii_lowercase());
            }
        }
    }
    words.into_iter().collect()
}

fn main() {
    let words = vocabulary();
    let mut rng = Lcg(42);
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes");
    let mut bytes = 0u64;
    for i in 0..DOCS {
        let folder = notes.join(format!("{:03}", i / 100));
        std::fs::create_dir_all(&folder).unwrap();
        let mut text = format!(
            "---\ntitle: \"Note {i}: {} {}\"\ndate: 2025-05-{:02}\n---\n",
            words[rng.next(words.len())],
            words[rng.next(words.len())],
            1 + i % 28
        );
        while text.len() < 2000 {
            let sentence: Vec<&str> = (0..12).map(|_| words[rng.next(words.len())].as_str()).collect();
            text.push_str(&sentence.join(" "));
            text.push_str(". ");
            if rng.next(8) == 0 {
                let j = rng.next(DOCS);
                text.push_str(&format!("See [note {j}](../{:03}/n{j}.md). ", j / 100));
            }
        }
        bytes += text.len() as u64;
        std::fs::write(folder.join(format!("n{i}.md")), text).unwrap();
    }
    let config = ArchivesConfig::from_raw(
        RawArchives {
            folders: vec![notes.display().to_string()],
            db_path: Some(dir.path().join("search.db").display().to_string()),
            ..Default::default()
        },
        dir.path(),
    )
    .unwrap();

    let report = archive::index(&config, &mut |_| {}).unwrap();
    let secs = report.elapsed.as_secs_f64();
    println!(
        "index {DOCS} notes ({:.1} MB): {:.2} s, {:.0} docs/s, {:.2} MB/s; {} citations, {} resolved",
        bytes as f64 / 1e6,
        secs,
        DOCS as f64 / secs,
        bytes as f64 / 1e6 / secs,
        report.citations,
        report.resolved
    );
    let again = archive::index(&config, &mut |_| {}).unwrap();
    println!("re-index, nothing changed: {:.3} s", again.elapsed.as_secs_f64());

    let archive = Archive::new(std::sync::Arc::new(config));
    for (label, fuzzy, citations) in [
        ("exact", false, false),
        ("fuzzy", true, false),
        ("fuzzy + citations", true, true),
    ] {
        let mut times: Vec<Duration> = (0..QUERIES)
            .map(|_| {
                let query = format!("{} {}", words[rng.next(words.len())], words[rng.next(words.len())]);
                let args = json!({ "query": query, "fuzzy": fuzzy, "includeCitations": citations });
                let options = Options::from_args(args.as_object().unwrap()).unwrap();
                let started = Instant::now();
                archive.search(&options).unwrap();
                started.elapsed()
            })
            .collect();
        times.sort();
        println!(
            "query ({label}, 10 results): median {:.2} ms, p90 {:.2} ms",
            times[QUERIES / 2].as_secs_f64() * 1e3,
            times[QUERIES * 9 / 10].as_secs_f64() * 1e3
        );
    }
}
