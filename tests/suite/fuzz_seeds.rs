//! Each fuzz target's body, compiled with the crate and run over its seeds
//! (`fuzz/seeds/TARGET`) and over reproducible mutations of them, on every
//! `cargo test`. `scripts/fuzz` runs the same bodies under libFuzzer, guided
//! by coverage, in a workspace of its own; its instrumented build takes
//! longer than the whole suite, so CI runs these instead.

use std::path::Path;

use crate::common::Rng;

use serde_json::{Value, json};

mod jsonrpc {
    include!("../../fuzz/bodies/jsonrpc.rs");
}

mod config {
    include!("../../fuzz/bodies/config.rs");
}

/// Mutants per target: a few seconds of a debug build.
const MUTANTS: usize = 3_000;

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds").join(target);
    let mut seeds: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| std::fs::read(entry.unwrap().path()).unwrap())
        .collect();
    assert!(!seeds.is_empty(), "{} has no seeds", dir.display());
    seeds.sort();
    seeds
}

/// What parsers trip on, as bytes to insert.
#[rustfmt::skip]
const TOKENS: [&str; 16] = [
    "\"", "{", "}", "[", "]", ",", ":", "\\u0000", "\\ud800", "null", "1e999", "-0", "18446744073709551616",
    "\u{10FFFF}", "\n[[servers]]\n", "'''",
];

/// A byte-level mutant of one seed: flips, token insertions, cuts,
/// duplicated runs and splices with another seed.
fn mutant(seeds: &[Vec<u8>], rng: &mut Rng) -> Vec<u8> {
    let mut bytes = seeds[rng.below(seeds.len())].clone();
    for _ in 0..=rng.below(4) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(5) {
            0 if at < bytes.len() => bytes[at] ^= 1 << rng.below(8),
            1 => {
                let token = TOKENS[rng.below(TOKENS.len())].as_bytes();
                bytes.splice(at..at, token.iter().copied());
            }
            2 => drop(bytes.drain(at..(at + rng.below(16)).min(bytes.len()))),
            3 => {
                let run = bytes[at..(at + rng.below(64)).min(bytes.len())].to_vec();
                let to = rng.below(bytes.len() + 1);
                bytes.splice(to..to, run);
            }
            _ => {
                let other = &seeds[rng.below(seeds.len())];
                bytes.truncate(at);
                bytes.extend_from_slice(&other[rng.below(other.len() + 1)..]);
            }
        }
    }
    bytes
}

/// A JSON-level mutant: one value anywhere in the seed replaced by one of
/// the kinds arguments go wrong with, so the mutant still parses and
/// reaches the meta-tools' arguments, search and the schema check.
fn json_mutant(seeds: &[Vec<u8>], rng: &mut Rng) -> Vec<u8> {
    let Ok(mut value) = serde_json::from_slice::<Value>(&seeds[rng.below(seeds.len())]) else {
        return mutant(seeds, rng);
    };
    let mut nested = json!([]);
    for _ in 0..64 {
        nested = json!([nested]);
    }
    let odd = [
        json!(null),
        json!(""),
        json!("x".repeat(10_000)),
        json!("\u{0}\u{202e}\u{1F600}"),
        json!(-1),
        json!(u64::MAX),
        json!(1e308),
        json!(true),
        json!({}),
        json!(["a", 1, null]),
        nested,
        json!({"toolKey": "github:create_issue", "arguments": {"title": 7}}),
        json!({"query": ["", " ", "x".repeat(300)], "maxResults": 0}),
    ];
    // A path down to 4 levels (a JSON pointer), then that value replaced.
    let mut pointer = String::new();
    let mut node = &value;
    for _ in 0..rng.below(5) {
        let step = match node {
            Value::Object(map) if !map.is_empty() => map.iter().nth(rng.below(map.len())).map(|(k, v)| (k.clone(), v)),
            Value::Array(items) if !items.is_empty() => {
                let i = rng.below(items.len());
                Some((i.to_string(), &items[i]))
            }
            _ => None,
        };
        let Some((key, next)) = step else { break };
        pointer.push('/');
        pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
        node = next;
    }
    *value.pointer_mut(&pointer).expect("the path just walked") = odd[rng.below(odd.len())].clone();
    serde_json::to_vec(&value).unwrap()
}

/// Runs `one` over a mutant; a panic fails with the mutant, to add to the seeds.
fn survives(target: &str, input: &[u8], one: impl FnOnce() + std::panic::UnwindSafe) {
    if std::panic::catch_unwind(one).is_err() {
        panic!("{target}: a mutant failed: {:?}", String::from_utf8_lossy(input));
    }
}

#[test]
fn jsonrpc_seeds_and_their_mutants_pass() {
    let seeds = seeds("jsonrpc");
    for seed in &seeds {
        jsonrpc::one(seed);
    }
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..MUTANTS {
        let body = match rng.below(2) {
            0 => mutant(&seeds, &mut rng),
            _ => json_mutant(&seeds, &mut rng),
        };
        survives("jsonrpc", &body, || jsonrpc::one(&body));
    }
}

#[test]
fn config_seeds_and_their_mutants_pass() {
    let seeds = seeds("config");
    for seed in &seeds {
        config::one(std::str::from_utf8(seed).expect("config seeds are text"));
    }
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    for _ in 0..MUTANTS {
        let text = mutant(&seeds, &mut rng);
        survives("config", &text, || config::one(&String::from_utf8_lossy(&text)));
    }
}
