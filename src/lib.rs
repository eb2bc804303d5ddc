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
//! One-way layers, top to bottom; a module imports only from the layers below
//! its own (`tests/suite/layers.rs` keeps this, docs/src/layout.md has the detail).
//!
//! **Edge.** [`cli`]: the command line (and `main.rs`).
//!
//! **Entry.** [`launch`]: the whole gateway started in one call (the core, the config
//! watcher, stdio and HTTP with the console's routes) and stopped in order; `serve` and the
//! in-process test harness both start it.
//!
//! **Faces.**
//! * [`server`]: the upstream MCP server over stdio and streamable HTTP: the tool face;
//!   `server/passthrough.rs` (resources, prompts) and `server/skills.rs`; `server/guard.rs`
//!   (JSON-RPC shape, credentials on every message, a session's owner, rate limits),
//!   `server/sessions.rs`, `server/hosts.rs`, `server/transports.rs`; `server/errors.rs` maps
//!   every error to JSON-RPC; `server/notify.rs` carries list changes and resource updates.
//! * [`console`]: the operator console at `/console`. [`reload`]: a changed `gateway.toml`
//!   applied. [`eval`]: search quality on the in-repo benchmark.
//!
//! **Use cases.**
//! * [`gateway`]: wiring, and one meta-tool call from caller to audit row (`gateway/call.rs`,
//!   the only writer of calls' audit rows): `gateway/discover.rs`, `gateway/execute.rs`;
//!   input rounds across MCP generations (`gateway/input.rs`, `gateway/rounds.rs`), tasks,
//!   sealed ids, targets, the startup wait; code mode's scripts (`gateway/script.rs`), whose
//!   calls end in `gateway/call.rs` too.
//! * [`operator`]: operators' changes, shared by the CLI and the console.
//!
//! **Ranking.** [`rank`]: providers (BM25, hybrid, cloud) over a caller's view, fusion, the
//! learned prior's lift.
//!
//! **Discovery.** [`catalog`]: an immutable snapshot of every running server's tools, and
//! the one view of what a caller may see. [`learning`]: learning from use at run time.
//! [`credentials`]: per-project credentials for downstream servers.
//!
//! **Guards and connections.** [`auth`]: who is calling. [`security`]: defences against
//! hostile servers (pins, scans, screening). [`ratelimit`]: request rates.
//! [`downstream`]: one supervised connection per server, and its relays.
//!
//! **Built-ins** (downstreams run in process, nothing above them): [`index`], [`archive`],
//! [`demo`].
//!
//! **Engines.** [`store`]: SQLite or PostgreSQL behind one interface (projects, tokens,
//! grants, sealed credentials, the audit log, learning). [`search`]: BM25F (tantivy), the
//! embedding model, the cloud client, the term prior and the memory of meanings. [`oauth`]: the gateway as an OAuth
//! protected resource. [`traces`]: OpenTelemetry spans. [`sandbox`]: code mode's JavaScript
//! sandbox (QuickJS): a runtime per script, its limits, the calls it makes through a host.
//!
//! **Access model.** [`access`]: projects, their search and exposure, grants.
//!
//! **Config.** [`config`]: `gateway.toml` to a validated [`config::Config`]; it owns every
//! section's types.
//!
//! **Ground.** [`secrets`] (the sealing key), [`leaks`] (credential formats), [`uris`],
//! [`validate`], [`watch`], [`telemetry`] (Prometheus metrics), [`signature`] (a tool's call
//! as a TypeScript signature), and the workspace crates
//! `rules` (tool rules) and `int8-bert` (the embedding model's encoder).
//!
//! **Vocabulary.** [`wire`] (meta-tool names, tool keys, `_meta` keys, request ids),
//! [`text`], [`mask`].

pub use store::access;
pub mod archive;
pub mod auth;
pub mod catalog;
pub mod cli;
pub use config;
pub mod console;
pub mod credentials;
pub mod demo;
pub mod downstream;
pub mod eval;
pub mod gateway;
pub mod index;
pub mod launch;
pub use vocab::leaks;
pub mod learning;
pub use vocab::mask;
pub mod oauth;
pub mod operator;
pub mod rank;
pub mod ratelimit;
pub mod reload;
pub use sandbox;
pub mod search;
pub use store::secrets;
pub mod security;
pub mod server;
pub mod signature;
pub use store;
pub mod telemetry;
pub use vocab::text;
pub mod traces;
pub use vocab::uris;
pub use vocab::validate;
pub mod watch;
pub use vocab::wire;
