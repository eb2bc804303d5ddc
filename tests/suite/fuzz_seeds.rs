//! Each fuzz target's body, compiled with the crate and run over its seeds
//! (`fuzz/seeds/TARGET`). CI fuzzes last, in a workspace of its own, so a
//! target that no longer compiles against the crate would otherwise fail
//! only after the whole suite; here it fails with `cargo test`.

use std::path::Path;

mod jsonrpc {
    include!("../../fuzz/bodies/jsonrpc.rs");
}

mod config {
    include!("../../fuzz/bodies/config.rs");
}

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

#[test]
fn jsonrpc_seeds_pass() {
    for seed in seeds("jsonrpc") {
        jsonrpc::one(&seed);
    }
}

#[test]
fn config_seeds_pass() {
    for seed in seeds("config") {
        config::one(std::str::from_utf8(&seed).expect("config seeds are text"));
    }
}
