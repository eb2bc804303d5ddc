//! Config parsing: any text is a valid `Config` or an `Error` that names the
//! file; never a panic. Seeds: `gateway.toml` and the README's examples.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_gateway::config::{Config, Error};

fuzz_target!(|text: &str| {
    match Config::parse(text, "fuzz.toml", std::path::Path::new("/tmp")) {
        Ok(_) => {}
        Err(e) => assert!(matches!(e, Error::Parse { .. } | Error::Invalid { .. }) && e.to_string().contains("fuzz.toml"), "{e}"),
    }
});
