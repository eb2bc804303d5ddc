// Config parsing: any text is a valid `Config` or an `Error` that names the
// file; never a panic. Seeds: `gateway.toml` and the README's examples.
//
// Shared by fuzz/fuzz_targets and tests/suite/fuzz_seeds.rs (which runs the seeds).

use mcp_gateway::config::{Config, Error};

pub(crate) fn one(text: &str) {
    match Config::parse(text, "fuzz.toml", std::path::Path::new("/tmp")) {
        Ok(_) => {}
        Err(e) => assert!(matches!(e, Error::Parse { .. } | Error::Invalid { .. }) && e.to_string().contains("fuzz.toml"), "{e}"),
    }
}
