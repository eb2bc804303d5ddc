//! Defences against hostile servers, applied where every tool definition and
//! every call passes: pinned definitions (a rug pull waits for an operator),
//! description scanning (hidden instructions are caught before discovery
//! shows them), and credentials in calls (blocked in arguments, redacted in
//! results). Policy is `[security]` (`config/security.rs`).
//!
//! * [`review`] (a crate): the definition hash, the pure hold/pin
//!   decision, the findings in a tool's texts, and the store's side of it.
//! * [`leaks`]: credential formats in JSON and text.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwap;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, ResourceContents, Tool};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tracing::{error, info, warn};

use config::ServerConfig;
use config::security::{Direction, OnToolChange, Secrets, SecurityConfig};
use store::Store;
use vetting::pins::{self, Decision, Known, Reason};
use vetting::{NewPin, PinStore, ReviewState, scan};
use vocab::keys::ToolKey;

/// One server's tools after review.
#[derive(Debug, Clone, Default)]
pub struct ServerReview {
    /// The tools callers may see, hidden characters stripped from their texts.
    pub tools: Vec<Tool>,
    /// The scan's tags of each tool in `tools`.
    pub flagged: Vec<Vec<String>>,
    /// The tools held back, and why.
    pub held: Vec<Held>,
}

/// A tool hidden from discovery and refused by execute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// The tool's name.
    pub tool: String,
    /// The key an operator approves it by: `server:tool`, or
    /// `server@project:tool` in a project's own listing.
    pub approve: String,
    /// Why, in words for the model and the operator.
    pub why: String,
}

/// A call refused because it carries a credential.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{} for '{key}' carry what looks like {} ({}); the gateway does not pass credentials {}. {}",
    match direction { Direction::Arguments => "the arguments", Direction::Results => "the result" },
    kinds_in_words(kinds),
    where_found(paths),
    match direction { Direction::Arguments => "to this server", Direction::Results => "back to callers" },
    match direction {
        Direction::Arguments => "Leave the credential out; the server's own credentials are set by an operator (mcp-gateway secret set).",
        Direction::Results => "An operator can set [security] secrets = \"redact\" to receive the rest of it.",
    }
)]
pub struct Blocked {
    /// The tool.
    pub key: String,
    /// Which way the credential was going.
    pub direction: Direction,
    /// Kinds found (e.g. `github-token`).
    pub kinds: Vec<leaks::Kind>,
    /// JSON Pointers where they were.
    pub paths: Vec<String>,
}

fn kinds_in_words(kinds: &[leaks::Kind]) -> String {
    let mut kinds = kinds.to_vec();
    kinds.dedup();
    let a = |k: &str| format!("a {k}");
    match kinds.as_slice() {
        [one] => a(one),
        many => format!(
            "credentials: {}",
            many.iter().map(|k| a(k)).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// Places a refusal names at most; the rest are counted.
const SHOWN_PATHS: usize = 10;

/// Where credentials were, in words. A path is made of the caller's keys,
/// so each is quoted as any caller's string is, and a megabyte of them
/// makes a short message.
fn where_found(paths: &[String]) -> String {
    let mut shown: Vec<String> = paths
        .iter()
        .take(SHOWN_PATHS)
        .map(|p| if p.is_empty() { "/".to_string() } else { leaks::quote(p) })
        .collect();
    if paths.len() > SHOWN_PATHS {
        shown.push(format!("{} more", paths.len() - SHOWN_PATHS));
    }
    format!("at {}", shown.join(", "))
}

/// The review state of the catalog and the secrets policy, shared by the
/// catalog (at listing time) and `tool_execute` (per call).
#[derive(Debug)]
pub struct Security {
    config: ArcSwap<SecurityConfig>,
    store: Arc<Store>,
    /// The review generation last seen by [`Security::follow`].
    seen: AtomicI64,
    /// Each tool's canonical definition and hash, by server and name, with
    /// the tool they were made from: a rebuild hashes only what changed.
    hashed: Mutex<HashMap<(String, String), Hashed>>,
}

#[derive(Debug)]
struct Hashed {
    tool: Tool,
    definition: Arc<str>,
    hash: Arc<str>,
}

impl Security {
    /// Security over `store` with `config`.
    pub fn new(store: Arc<Store>, config: SecurityConfig) -> Self {
        Self {
            config: ArcSwap::from_pointee(config),
            store,
            seen: AtomicI64::new(-1),
            hashed: Mutex::default(),
        }
    }

    /// The limits of `project`'s scripts, or `None` when code mode is off for it.
    pub fn code_mode(&self, project: &str) -> Option<config::code_mode::CodeLimits> {
        self.config.load().code_mode.for_project(project)
    }

    /// The gateway-wide caps on scripts at once (read per script: reloads apply).
    pub fn script_caps(&self) -> config::code_mode::ScriptCaps {
        self.config.load().code_mode.caps
    }

    /// Code mode's settings, for `/readyz` and `mcp-gateway servers`.
    pub fn code_mode_settings(&self) -> config::code_mode::CodeMode {
        self.config.load().code_mode.clone()
    }

    /// Applies a reloaded `[security]` (the next catalog rebuild and call use it).
    pub fn set_config(&self, config: SecurityConfig) {
        self.config.store(Arc::new(config));
    }

    /// Reviews every server's listing against its pins: pins what is seen
    /// first, holds what changed or looks hostile (as the policy says),
    /// strips hidden characters from what callers will see. Same order as
    /// `listings`. An unreadable store is an error: nothing is shown unchecked.
    pub fn review(&self, listings: &[(&str, &[Tool])]) -> Result<Vec<ServerReview>, store::Error> {
        let config = self.config.load();
        let neighbours = scan::Neighbours::new(listings);
        let pins = self.store.pins()?;
        let mut hashed = self.hashed.lock().expect("hashed lock");
        // Written in one transaction at the end: (server, tool, hash, definition).
        let mut trusted: Vec<(&str, &str, Arc<str>, Arc<str>)> = Vec::new();
        let reviews = listings
            .iter()
            .map(|(server, tools)| {
                let known = pins.get(*server);
                let mut out = ServerReview::default();
                for tool in *tools {
                    let findings = scan::scan(server, tool, &neighbours);
                    let (definition, hash) = definition_of(&mut hashed, server, tool);
                    let name = tool.name.as_ref();
                    let rejected = known
                        .and_then(|k| k.reviews.get(name))
                        .filter(|(_, s)| *s == ReviewState::Rejected);
                    let facts = Known {
                        pinned: known.and_then(|k| k.pinned.get(name)).map(String::as_str),
                        rejected: rejected.map(|(h, _)| h.as_str()),
                        server_pinned: known.is_some_and(|k| !k.pinned.is_empty()),
                    };
                    match pins::decide(&config, facts, &hash, &findings) {
                        Decision::Trusted => {}
                        Decision::Pin { changed } => {
                            log_change(server, name, changed);
                            trusted.push((server, name, hash, definition));
                        }
                        Decision::Hold(reasons) => {
                            self.hold(server, name, &hash, &definition, &reasons);
                            out.held.push(Held {
                                tool: name.to_string(),
                                approve: ToolKey::new(server, name).as_str().to_string(),
                                why: reasons.iter().map(|r| r.sentence()).collect::<Vec<_>>().join("; "),
                            });
                            continue;
                        }
                        Decision::Rejected => {
                            out.held.push(Held {
                                tool: name.to_string(),
                                approve: ToolKey::new(server, name).as_str().to_string(),
                                why: "an operator rejected its current definition".into(),
                            });
                            continue;
                        }
                    }
                    // Only a tool with hidden text has anything to strip.
                    let clean = findings
                        .contains(&scan::Finding::HiddenText)
                        .then(|| scan::sanitized(tool))
                        .flatten();
                    out.tools.push(clean.unwrap_or_else(|| tool.clone()));
                    out.flagged.push(findings.iter().map(|f| f.tag().to_string()).collect());
                }
                out
            })
            .collect::<Vec<_>>();
        let pins: Vec<NewPin> = trusted
            .iter()
            .map(|(server, tool, hash, definition)| NewPin {
                server,
                tool,
                hash,
                definition,
            })
            .collect();
        if let Err(e) = self.store.pin_tools(&pins) {
            error!(tools = pins.len(), error = %e, "could not pin tool definitions; the next listing pins them");
        }
        telemetry::tools_held(reviews.iter().map(|r| r.held.len()).sum());
        Ok(reviews)
    }

    fn hold(&self, server: &str, tool: &str, hash: &str, definition: &str, reasons: &[Reason]) {
        let words: Vec<&str> = reasons.iter().map(|r| r.word()).collect();
        match self.store.hold_tool(server, tool, hash, definition, &words) {
            Ok(true) => {
                warn!(server, tool, reasons = %words.join(","), "tool held for review (mcp-gateway tools changes)");
                telemetry::tool_change(server, "held");
            }
            Ok(false) => {}
            Err(e) => error!(server, tool, error = %e, "could not record a held tool; it stays hidden"),
        }
    }

    /// Calls `changed` whenever pins or reviews change in the store (an
    /// operator's approval from another process), checking every second,
    /// until `ct` is cancelled; the catalog then rebuilds.
    pub async fn follow(self: Arc<Self>, changed: impl Fn() + Send + 'static, ct: CancellationToken) {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = ct.cancelled() => return,
            }
            let store = self.store.clone();
            let Ok(Ok(now)) = tokio::task::spawn_blocking(move || store.review_generation()).await else {
                continue;
            };
            let before = self.seen.swap(now, Ordering::SeqCst);
            if before >= 0 && before != now {
                changed();
            }
        }
    }

    /// What to do with credentials going `direction` in `project`'s call to `server`.
    fn secrets(&self, project: &str, server: &ServerConfig, direction: Direction) -> Secrets {
        self.config
            .load()
            .secrets_for(project, server.secrets, server.trusted_for_credentials, direction)
    }

    /// Screens `arguments` of a call to `key` on `server`: blocked or
    /// redacted as the policy says. Logs and counts kinds, never matches.
    pub fn screen_arguments(
        &self,
        project: &str,
        server: &ServerConfig,
        key: &str,
        arguments: &mut JsonObject,
    ) -> Result<(), Blocked> {
        self.screen_outgoing(project, server, key, arguments, "")
    }

    /// Screens the caller's `_meta` of a request to `key` on `server` as
    /// arguments are: it reaches the server as they do.
    pub fn screen_meta(
        &self,
        project: &str,
        server: &ServerConfig,
        key: &str,
        meta: &mut JsonObject,
    ) -> Result<(), Blocked> {
        self.screen_outgoing(project, server, key, meta, "/_meta")
    }

    /// [`Security::screen_arguments`] of `object`, whose paths a refusal
    /// names under `at`.
    fn screen_outgoing(
        &self,
        project: &str,
        server: &ServerConfig,
        key: &str,
        object: &mut JsonObject,
        at: &str,
    ) -> Result<(), Blocked> {
        let direction = Direction::Arguments;
        let policy = self.secrets(project, server, direction);
        if policy == Secrets::Off {
            return Ok(());
        }
        // Moved into a Value and back, not copied.
        let mut value = Value::Object(std::mem::take(object));
        let outcome = if policy == Secrets::Redact {
            record(key, direction, &leaks::redact(&mut value), "redacted");
            Ok(())
        } else {
            let found = leaks::scan(&value);
            let kinds: Vec<leaks::Kind> = found.iter().map(|f| f.kind).collect();
            record(key, direction, &kinds, "blocked");
            if found.is_empty() {
                Ok(())
            } else {
                Err(Blocked {
                    key: key.to_string(),
                    direction,
                    kinds,
                    paths: found.into_iter().map(|f| format!("{at}{}", f.path)).collect(),
                })
            }
        };
        if let Value::Object(o) = value {
            *object = o;
        }
        outcome
    }

    /// Redacts credentials in the text of a resource `server` answered a
    /// read with, unless the policy for results is off. A read is not
    /// refused for one: what is left of a page is still the page.
    pub fn screen_resource(&self, project: &str, server: &ServerConfig, contents: &mut [ResourceContents]) {
        if self.secrets(project, server, Direction::Results) == Secrets::Off {
            return;
        }
        let mut kinds = Vec::new();
        for contents in contents {
            if let ResourceContents::TextResourceContents { text, .. } = contents
                && let Some((clean, found)) = leaks::redact_text(text)
            {
                *text = clean;
                kinds.extend(found);
            }
        }
        record(&server.name, Direction::Results, &kinds, "redacted");
    }

    /// Screens the result of a call to `key` on `server`: its text blocks,
    /// embedded text resources and `structuredContent`.
    pub fn screen_result(
        &self,
        project: &str,
        server: &ServerConfig,
        key: &str,
        result: &mut CallToolResult,
    ) -> Result<(), Blocked> {
        let direction = Direction::Results;
        let policy = self.secrets(project, server, direction);
        if policy == Secrets::Off {
            return Ok(());
        }
        let mut kinds = Vec::new();
        let mut paths = Vec::new();
        for (i, block) in result.content.iter_mut().enumerate() {
            let (text, at) = match block {
                ContentBlock::Text(t) => (&mut t.text, format!("/content/{i}/text")),
                ContentBlock::Resource(r) => match &mut r.resource {
                    ResourceContents::TextResourceContents { text, .. } => {
                        (text, format!("/content/{i}/resource/text"))
                    }
                    _ => continue,
                },
                _ => continue,
            };
            if let Some((clean, found)) = leaks::redact_text(text) {
                if policy == Secrets::Redact {
                    *text = clean;
                }
                paths.push(at);
                kinds.extend(found);
            }
        }
        if let Some(structured) = result.structured_content.as_mut() {
            let found = leaks::scan(structured);
            if !found.is_empty() {
                if policy == Secrets::Redact {
                    leaks::redact(structured);
                }
                for f in found {
                    paths.push(format!("/structuredContent{}", f.path));
                    kinds.push(f.kind);
                }
            }
        }
        if kinds.is_empty() {
            return Ok(());
        }
        if policy == Secrets::Block {
            record(key, direction, &kinds, "blocked");
            return Err(Blocked {
                key: key.to_string(),
                direction,
                kinds,
                paths,
            });
        }
        record(key, direction, &kinds, "redacted");
        Ok(())
    }
}

/// `tool`'s canonical definition and its hash, from `memo` while the tool is unchanged.
fn definition_of(memo: &mut HashMap<(String, String), Hashed>, server: &str, tool: &Tool) -> (Arc<str>, Arc<str>) {
    let key = (server.to_string(), tool.name.to_string());
    if let Some(h) = memo.get(&key).filter(|h| h.tool == *tool) {
        return (h.definition.clone(), h.hash.clone());
    }
    let definition: Arc<str> = pins::canonical(&pins::definition(tool)).into();
    let hash: Arc<str> = pins::hash(&definition).into();
    let fresh = Hashed {
        tool: tool.clone(),
        definition: definition.clone(),
        hash: hash.clone(),
    };
    memo.insert(key, fresh);
    (definition, hash)
}

/// Logs and counts a pinned tool's change that the policy let through.
fn log_change(server: &str, tool: &str, changed: Option<OnToolChange>) {
    match changed {
        Some(OnToolChange::Warn) => {
            warn!(
                server,
                tool, "tool definition changed; trusted as on_tool_change = \"warn\" says"
            );
            telemetry::tool_change(server, "warned");
        }
        Some(_) => {
            info!(
                server,
                tool, "tool definition changed; trusted as on_tool_change = \"accept\" says"
            );
            telemetry::tool_change(server, "accepted");
        }
        None => {}
    }
}

/// Logs and counts credentials found: kinds only.
fn record(key: &str, direction: Direction, kinds: &[leaks::Kind], action: &'static str) {
    if kinds.is_empty() {
        return;
    }
    let mut distinct = kinds.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    warn!(tool_key = key, direction = direction.as_str(), kinds = %distinct.join(","), count = kinds.len(), action, "credential in a tool call");
    for kind in kinds {
        telemetry::secret(direction.as_str(), kind, action);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 41: a refusal quoted every path whole.
    #[test]
    fn a_refusal_names_a_few_short_places() {
        assert_eq!(where_found(&["".into(), "/a/b".into()]), "at /, /a/b");
        let many: Vec<String> = (0..1000).map(|i| format!("/{}/{i}", "k".repeat(10_000))).collect();
        let said = where_found(&many);
        assert!(said.len() < 4096, "{} bytes", said.len());
        assert!(said.ends_with(", 990 more"), "{said}");
    }
}
