//! Config parsing: any text is a valid `Config` or an `Error` that names the
//! file; never a panic. Seeds: `gateway.toml` and the README's examples.
#![no_main]

include!("../bodies/config.rs");

libfuzzer_sys::fuzz_target!(|text: &str| one(text));
