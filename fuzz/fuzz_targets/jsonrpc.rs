//! The path of an upstream message up to the downstream call: the JSON-RPC
//! check every HTTP body and stdio line gets, then for `tools/call` of a
//! meta-tool its arguments, a BM25 search over real tool catalogs
//! (`benches/data/catalog`) for `tool_discovery`, and the tool's inputSchema
//! check for `tool_execute`. Nothing may panic.
#![no_main]

include!("../bodies/jsonrpc.rs");

libfuzzer_sys::fuzz_target!(|body: &[u8]| one(body));
