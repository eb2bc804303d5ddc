//! mcp-gateway: many MCP servers behind two tools.
//!
//! # Glossary
//! * **downstream**: an MCP server the gateway connects to (a stdio child
//!   process or a streamable HTTP endpoint). The gateway is its client.
//! * **upstream**: the MCP client that connects to the gateway (Claude,
//!   ChatGPT, an IDE agent). The gateway is its server.
//! * **toolKey**: `server:tool`, the name of one downstream tool.
//!
//! # Layout
//! This package is the binary: the command line, the entry point that wires
//! the gateway as `serve` runs it, and the global allocator. Everything
//! beneath is a crate of the workspace (`crates/*`), one per layer, kept by
//! the compiler; they are re-exported here for the tests, benches and fuzz
//! targets, and nothing in `src/` names them through this file.
//! docs/src/layout.md holds the one list of the layers and of every file.

// The allocator of every program built on this crate (the binary, the
// in-process benches that count its instructions, the test harness), so
// each measures what ships: see the dependency's note in Cargo.toml.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub mod cli;
pub mod eval;
pub mod launch;
pub mod mcp_registry;
pub mod reload;

// The crates beneath the binary, for the tests, benches and fuzz targets.
pub use config;
pub use credentials;
pub use downstream;
pub use gateway::{self, auth, catalog, operator, rank, ratelimit, security, typescript, vault};
pub use leaks;
pub use learning;
pub use oauth;
pub use sandbox;
pub use search;
pub use server;
pub use store;
pub use store::access;
pub use store::secrets;
pub use telemetry;
pub use telemetry::traces;
pub use vetting;
pub use vocab::keys;
pub use vocab::mask;
pub use vocab::outcome;
pub use vocab::text;
pub use vocab::uris;
pub use vocab::validate;
pub use vocab::wire;
