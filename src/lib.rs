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
//! * [`config`]: `gateway.toml` (and `mcpServers` JSON) to a validated [`config::Config`].
//! * [`downstream`]: one supervised connection per server: status, tools, restarts, stderr
//!   tail (`downstream/stderr.rs`), a child's environment (`downstream/child_env.rs`), progress
//!   routing (`downstream/progress.rs`);
//!   `downstream/asks.rs` relays a 2025 server's mid-call requests to the caller;
//!   `downstream/passthrough.rs`: its tasks, resources, prompts and skills.
//! * [`catalog`]: an immutable snapshot of every running server's tools, swapped atomically;
//!   tool rules; the one view of what a caller may see (`catalog/view.rs`, with the ranking);
//!   `catalog/direct.rs` names tools
//!   `server__tool` for projects that list them directly.
//! * [`search`]: BM25F (tantivy), hybrid (a local embedding model) and cloud search over the
//!   catalog, and the learned prior each project's use adds (`search/learning.rs`). The model's
//!   int8 encoder is the `int8-bert` crate (`crates/int8-bert`).
//! * [`store`]: projects, tokens (hashed), grants, sealed credentials, the audit log
//!   (group-committed; with strict audit an answer waits for its row, and an execute's
//!   `started` row is durable before its server is called), and the access generation that callers' caches follow;
//!   admin tokens and the admin log (`store/admin.rs`), usage for the console (`store/usage.rs`),
//!   shared rate budgets (`store/rates.rs`). One interface, two engines (`store/engine.rs`):
//!   SQLite (`store/sqlite.rs`) or PostgreSQL for replicas (`store/postgres.rs`), one SQL for
//!   both (`store/sql.rs`).
//! * [`secrets`]: the key that seals credentials at rest (AES-256-GCM), and sealing.
//! * [`security`]: defences against hostile servers: pinned tool definitions held for an
//!   operator's review when they change, description scanning (hidden text, steering), and
//!   credentials blocked in arguments and redacted in results.
//! * [`credentials`]: per-project credentials for downstream servers: `secret` headers and
//!   env, OAuth sign-ins to remote servers (`login`); opened per call, cached until changed.
//! * [`auth`]: who is calling: gateway token, OAuth access token or anonymous; project, grants
//!   (cached while the store's access generation holds).
//! * [`oauth`]: the gateway as an OAuth 2.1 protected resource: JWTs checked against
//!   trusted issuers' JWKS, or RFC 7662 introspection; RFC 9728 metadata; token → project.
//! * [`gateway`]: `tool_discovery` and `tool_execute` as plain functions, per caller;
//!   `gateway/tasks.rs`: downstream tasks under sealed ids, `tasks/get|update|cancel`;
//!   `gateway/rounds.rs`: a 2025 downstream's mid-call question as a 2026 client's input
//!   request, the call parked until the retry; `gateway/sealed.rs`: task ids and request
//!   states sealed to a project; `gateway/target.rs`: which connection (and credential) a
//!   call goes through; `gateway/error.rs`: why an execute failed, as the model reads it;
//!   `gateway/startup.rs`: a call waits for the servers it may see that are still starting.
//! * [`learning`]: learning from use at run time: links each execute to the discovery that
//!   found its tool, and teaches the project's prior.
//! * [`reload`]: applies a changed `gateway.toml` (file watch, SIGHUP) to the running gateway.
//! * [`watch`]: debounced file-system change notices (inotify).
//! * [`server`]: the upstream MCP server over stdio and streamable HTTP; `server/guard.rs`
//!   is the HTTP guard in front of it (JSON-RPC shape, credentials on every message, a
//!   session's owner, rate limits); `server/sessions.rs`: who opened each session, and the
//!   session limits; `server/hosts.rs`: `Host`/`Origin` checked on every route;
//!   `server/transports.rs` serves it (stdio, HTTP, `/readyz`, `/metrics`);
//!   `server/input.rs` answers a 2026 downstream's input requests for a 2025 client;
//!   `server/hop.rs`: which `_meta` travels on, and how a downstream's error reads to the caller;
//!   `server/notify.rs`: who hears of tool-list changes and resource updates (2025 sessions,
//!   2026 `subscriptions/listen` streams); `server/skills.rs`: skills per project.
//! * [`ratelimit`]: per-caller request rates on the HTTP listener, one budget across replicas
//!   on a shared store.
//! * [`mask`]: passwords and secret parameters of URLs masked in logs, errors, the CLI and
//!   the console; the key names that mark a secret.
//! * [`uris`]: resource URIs under their server's name (`ui://` Apps, `skill://` skills).
//! * [`validate`]: tool arguments checked with every problem reported at once.
//! * [`console`]: the operator console at `/console` (servers, projects, usage, a search
//!   playground) for admin tokens; its API, sign-in and SVG charts.
//! * [`operator`]: operators' changes (grants, tokens, search), shared by the CLI and the
//!   console and recorded in the admin log.
//! * [`telemetry`]: Prometheus metrics (`GET /metrics`).
//! * [`traces`]: OpenTelemetry spans of meta-tool and downstream calls, exported over OTLP;
//!   W3C trace context in and out of `_meta`.
//! * [`cli`]: the command line.
//! * [`index`]: the built-in Index Network discovery server (`discover_filter` and friends).
//! * [`archive`]: the built-in `searchLocalArchives` server and `mcp-gateway archive index`.
//! * [`demo`]: a small MCP server shipped for first runs and tests.
//! * [`eval`]: search quality on the in-repo benchmark (`mcp-gateway eval`).

pub mod access;
pub mod archive;
pub mod auth;
pub mod catalog;
pub mod cli;
pub mod config;
pub mod console;
pub mod credentials;
pub mod demo;
pub mod downstream;
pub mod eval;
pub mod gateway;
pub mod index;
pub mod learning;
pub mod leaks;
pub mod mask;
pub mod oauth;
pub mod operator;
pub mod rank;
pub mod ratelimit;
pub mod reload;
pub mod search;
pub mod secrets;
pub mod security;
pub mod server;
pub mod store;
pub mod telemetry;
pub mod text;
pub mod traces;
pub mod uris;
pub mod validate;
pub mod watch;
pub mod wire;
