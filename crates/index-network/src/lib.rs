//! Index Network discovery, a built-in downstream server named `index`.
//!
//! It runs in process behind the same MCP seam as any child or remote server
//! (the gateway's downstream layer), so the catalog, search, rules and grants
//! treat it like the others. Its tools call the Index Protocol API with a
//! token exchanged from the caller's own bearer token:
//!
//! * `extract_intent`: text → intents (`POST /discover/new`).
//! * `discover_filter`: intents (existing, or extracted first) → matching
//!   people (`POST /discover/filter`), each with a VibeCheck synthesis
//!   (`POST /synthesis/vibecheck`), as cards for chat and for the widget.
//! * `discover_connections`: the same pipeline behind `{ text, maxConnections }`.
//! * `archive_intent`: removes one of the caller's intents
//!   (`PATCH /intents/{id}/archive`); for the intent display's Remove
//!   buttons alone (`_meta.ui.visibility: ["app"]`).
//!
//! A crate of its own: it knows `config` and `vocab`, and nothing of the
//! gateway, which serves it as any MCP server, over an in-memory pipe, and
//! mounts its widgets' route.

mod args;
mod cards;
mod protocol;
mod sample;
mod telemetry;
mod vibecheck;
pub mod widget;

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tracing::{info, warn};

use args::FilterInput;
pub use config::index_network::{IndexConfig, SERVER_NAME};
use protocol::{Error, FilterRequest, Filtered, Protocol, Session};
use vocab::keys::RequestId;
use vocab::wire::{CALLER_TOKEN_META, MCP_APPS_META, REQUEST_ID_META};
use widget::Widget;

/// What ChatGPT shows while each tool runs and once it has (invoking, invoked).
const EXTRACTING: (&str, &str) = ("Analyzing intents…", "Intents analyzed");
const FILTERING: (&str, &str) = ("Rendering discovery cards", "Rendered discovery cards");
const CONNECTING: (&str, &str) = ("Finding connections…", "Found connections");
const ARCHIVING: (&str, &str) = ("Removing the intent…", "Intent removed");
/// Polls of `/discover/filter` while fresh intents find their matches.
const POLL_TRIES: u64 = 8;

/// The in-process MCP server.
#[derive(Debug, Clone)]
pub struct IndexServer {
    protocol: Protocol,
    config: Arc<IndexConfig>,
}

/// What `discover_filter` found, ready to answer with.
struct Found {
    filtered: protocol::Filtered,
    checks: Vec<vibecheck::VibeCheck>,
    /// Intents created from the input, when it chained.
    generated: Option<Vec<protocol::Intent>>,
    intent_ids: Vec<String>,
    /// Fresh intents whose matches may still be computed.
    still_arriving: bool,
}

/// A tool call with its arguments checked.
enum Call {
    Extract(args::IntentInput),
    Filter(FilterInput),
    Connections(args::ConnectionsInput),
    Archive(String),
}

/// Why a tool call failed; becomes an `isError` result.
enum Failure {
    Invalid(Vec<String>),
    Api(Error),
    NoIntents,
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Api(e)
    }
}

impl Failure {
    fn into_result(self) -> CallToolResult {
        let (text, auth) = match self {
            Failure::Invalid(problems) => (format!("Invalid arguments:\n- {}", problems.join("\n- ")), false),
            Failure::NoIntents => ("No intents were generated from the provided input; describe what you are looking for in more detail, or pass intentIds.".to_string(), false),
            Failure::Api(e) => (e.to_string(), e.needs_auth()),
        };
        let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
        if auth {
            result.meta = Some(
                serde_json::from_value(json!({
                    "mcp/www_authenticate": "Bearer realm=\"index\", error=\"invalid_token\", scope=\"privy:token:exchange\""
                }))
                .expect("a JSON object"),
            );
        }
        result
    }
}

impl IndexServer {
    /// A server for `config`.
    pub fn new(config: Arc<IndexConfig>) -> Self {
        Self {
            protocol: Protocol::new(config.clone()),
            config,
        }
    }

    fn tools() -> Vec<Tool> {
        let schema = |v: Value| -> Arc<JsonObject> {
            match v {
                Value::Object(o) => Arc::new(o),
                _ => unreachable!("schemas are objects"),
            }
        };
        let uuids = |what: &str| json!({ "type": "array", "maxItems": args::MAX_FILTER_ITEMS, "description": what, "items": { "type": "string", "format": "uuid" } });
        let intent_input_props = json!({
            "fullInputText": { "type": "string", "description": "The text to extract intents from: what the user wants, offers or is working on" },
            "rawText": { "type": "string", "description": "The user's own words, used as the instruction" },
            "conversationHistory": { "type": "string", "description": "Relevant earlier conversation" },
            "userMemory": { "type": "string", "description": "What you know about the user" }
        });
        // Each may create intents on the user's profile (discover_filter when
        // it chains from intentInput): none is read-only, none destroys.
        let writes = ToolAnnotations::new()
            .read_only(false)
            .destructive(false)
            .idempotent(false)
            .open_world(true);
        let mut extract = Tool::new(
            "extract_intent",
            "Extract a person's intents (what they want, offer or are working on) from conversation text and save them to their Index Network profile.",
            schema(
                json!({ "type": "object", "properties": intent_input_props, "required": ["fullInputText"], "additionalProperties": false }),
            ),
        );
        extract.title = Some("Extract Intent".into());
        extract.annotations = Some(writes.clone());
        extract.meta = Some(tool_meta(&widget::INTENTS, EXTRACTING));

        let mut filter = Tool::new(
            "discover_filter",
            "Find people to connect or collaborate with on Index Network who match the user's intents, with a VibeCheck summary of what could happen between them. Pass intentIds, or intentInput.fullInputText to extract intents first; filter by users, indexes (communities) or sources; paginate with page and limit.",
            schema(json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "intentIds": uuids("Existing intents to match from"),
                    "userIds": uuids("Only these users"),
                    "indexIds": uuids("Only within these indexes (communities)"),
                    "sources": {
                        "type": "array", "maxItems": args::MAX_FILTER_ITEMS, "description": "Only intents that came from these sources",
                        "items": { "type": "object", "additionalProperties": false, "required": ["type", "id"], "properties": {
                            "type": { "type": "string", "enum": args::SOURCE_TYPES },
                            "id": { "type": "string", "format": "uuid" }
                        } }
                    },
                    "excludeDiscovered": { "type": "boolean", "description": "Leave out people already connected (default true)" },
                    "page": { "type": "integer", "minimum": 1, "description": "1-based page (default 1)" },
                    "limit": { "type": "integer", "minimum": 1, "maximum": config::index_network::MAX_LIMIT, "description": "Results per page (default 50)" },
                    "intentInput": { "type": "object", "description": "Conversation input to extract intents from when no intentIds are given", "properties": intent_input_props, "required": ["fullInputText"], "additionalProperties": false },
                    "vibecheck": { "type": "object", "additionalProperties": false, "properties": {
                        "characterLimit": { "type": "integer", "minimum": 1, "description": "Longest synthesis, in characters" },
                        "concurrency": { "type": "integer", "minimum": 1, "maximum": config::index_network::MAX_CONCURRENCY, "description": "Syntheses generated in parallel (default 2)" }
                    } },
                    "mock": { "type": "boolean", "description": "Answer with sample people, sending nothing to Index and creating nothing (to try the cards)" }
                }
            })),
        );
        filter.title = Some("Discover Filter".into());
        filter.annotations = Some(writes.clone());
        filter.meta = Some(tool_meta(&widget::DISCOVER, FILTERING));

        let mut connections = Tool::new(
            "discover_connections",
            "Find people worth meeting for what the user describes: extracts intents from the text, finds matching people on Index Network and explains each connection.",
            schema(json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["text"],
                "properties": {
                    "text": { "type": "string", "minLength": 1, "description": "What the user is looking for or working on" },
                    "maxConnections": { "type": "integer", "minimum": 1, "maximum": config::index_network::MAX_LIMIT, "description": "How many people to return (default 10)" }
                }
            })),
        );
        connections.title = Some("Discover Connections".into());
        connections.annotations = Some(writes);
        connections.meta = Some(tool_meta(&widget::CONNECTIONS, CONNECTING));

        let mut archive = Tool::new(
            "archive_intent",
            "Remove one of the user's intents from their Index Network profile (archived: the Index website can restore it).",
            schema(json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["intentId"],
                "properties": { "intentId": { "type": "string", "format": "uuid", "description": "The intent to remove" } }
            })),
        );
        archive.title = Some("Remove Intent".into());
        archive.annotations = Some(
            ToolAnnotations::new()
                .read_only(false)
                .destructive(true)
                .idempotent(true)
                .open_world(true),
        );
        // The intent display's Remove button calls it, by the name the host
        // listed: hosts keep it from the model, and the gateway from discovery.
        archive.meta = Some(meta(json!({
            "ui": { "visibility": ["app"] },
            "openai/visibility": "private",
            "openai/widgetAccessible": true,
            "openai/toolInvocation/invoking": ARCHIVING.0,
            "openai/toolInvocation/invoked": ARCHIVING.1,
        })));
        vec![extract, filter, connections, archive]
    }

    async fn extract_intent(&self, input: args::IntentInput, session: Session) -> Result<CallToolResult, Failure> {
        let payload = args::intent_payload(&input, self.config.payload_limits);
        let mut extracted = self.protocol.discover_new(&session, payload).await?;
        extracted.intents.iter_mut().for_each(cards::redact_intent);
        info!(tool = "extract_intent", request_id = %session.request_id, intents = extracted.intents.len(), "index invocation");
        let text = if extracted.intents.is_empty() {
            "No intents were generated from the provided input.".to_string()
        } else {
            let lines: Vec<String> = extracted
                .intents
                .iter()
                .enumerate()
                .map(|(i, intent)| {
                    let text = intent.summary.as_deref().unwrap_or(&intent.payload);
                    format!("{}. {}", i + 1, vocab::text::truncate(text, 200))
                })
                .collect();
            format!(
                "Extracted {} intent{}:\n{}",
                extracted.intents.len(),
                if extracted.intents.len() == 1 { "" } else { "s" },
                lines.join("\n")
            )
        };
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(serde_json::to_value(&extracted).unwrap_or_default());
        result.meta = Some(self.result_meta(&widget::INTENTS, EXTRACTING));
        Ok(result)
    }

    /// Intents for free text: `/discover/new`, then their IDs.
    async fn intents_from(
        &self,
        session: &Session,
        input: &args::IntentInput,
    ) -> Result<Vec<protocol::Intent>, Failure> {
        let payload = args::intent_payload(input, self.config.payload_limits);
        let mut extracted = self.protocol.discover_new(session, payload).await?;
        extracted.intents.iter_mut().for_each(cards::redact_intent);
        Ok(extracted.intents)
    }

    /// `/discover/filter`; right after chaining, an empty answer is polled
    /// with growing delays (matches of fresh intents are computed in the
    /// background) until two polls agree or the budget is spent. The flag
    /// says whether matches may still be arriving.
    async fn filter(
        &self,
        session: &Session,
        body: &FilterRequest<'_>,
        fresh: bool,
    ) -> Result<(Filtered, bool), Error> {
        let started = Instant::now();
        let mut filtered = self.protocol.discover_filter(session, body).await?;
        info!(request_id = %session.request_id, results = filtered.results.len(), latency_ms = started.elapsed().as_millis() as u64, "discover/filter");
        if !fresh || !filtered.results.is_empty() {
            return Ok((filtered, false));
        }
        let deadline = started + self.config.match_wait;
        let mut previous = None;
        for n in 0..POLL_TRIES {
            let delay = Duration::from_millis(300 + 200 * n);
            if Instant::now() + delay > deadline {
                break;
            }
            tokio::time::sleep(delay).await;
            match self.protocol.discover_filter(session, body).await {
                Ok(next) => {
                    let count = next.results.len();
                    filtered = next;
                    if count > 0 && previous == Some(count) {
                        return Ok((filtered, false));
                    }
                    previous = Some(count);
                }
                Err(e) => {
                    warn!(request_id = %session.request_id, error = %e, "polling discover/filter failed; answering with what arrived");
                    break;
                }
            }
        }
        info!(request_id = %session.request_id, results = filtered.results.len(), polls = ?previous, "matches of fresh intents may still be arriving");
        Ok((filtered, true))
    }

    async fn discover_filter(&self, input: FilterInput, session: Session) -> Result<CallToolResult, Failure> {
        let (intent_ids, generated) = match &input.intent_input {
            Some(chain) if input.intent_ids.is_empty() => {
                let intents = self.intents_from(&session, chain).await?;
                if intents.is_empty() {
                    return Err(Failure::NoIntents);
                }
                (intents.iter().map(|i| i.id.clone()).collect(), Some(intents))
            }
            _ => (input.intent_ids.clone(), None),
        };
        let body = FilterRequest {
            intent_ids: &intent_ids,
            user_ids: input.user_ids.as_deref(),
            index_ids: input.index_ids.as_deref(),
            sources: input.sources.as_deref(),
            exclude_discovered: input.exclude_discovered.unwrap_or(true),
            page: input.page,
            limit: input.limit,
        };
        let (filtered, still_arriving) = self.filter(&session, &body, generated.is_some()).await?;
        let settings = self.vibecheck_settings(&input);
        let (checks, tally) = vibecheck::run_all(
            &self.protocol,
            &session,
            &filtered.results,
            &intent_ids,
            input.index_ids.as_deref(),
            &settings,
        )
        .await;
        info!(
            tool = "discover_filter",
            request_id = %session.request_id,
            intents_resolved = intent_ids.len(),
            chained = generated.is_some(),
            matches = filtered.results.len(),
            vibecheck_success = tally.success,
            vibecheck_failures = tally.failures,
            vibecheck_retries = tally.retries,
            filters_summary = %filters_summary(&input),
            "index invocation"
        );
        let found = Found {
            filtered,
            checks,
            generated,
            intent_ids,
            still_arriving,
        };
        Ok(self.filter_answer(&input, found, ""))
    }

    /// `discover_filter` with `mock: true`: the sample answer (`sample.rs`),
    /// built as a real one is; nothing is sent to Index.
    fn sample_filter(&self, input: &FilterInput) -> CallToolResult {
        let filtered = sample::filtered(input.page);
        let found = Found {
            checks: sample::vibechecks(&filtered.results),
            filtered,
            generated: None,
            intent_ids: input.intent_ids.clone(),
            still_arriving: false,
        };
        self.filter_answer(input, found, sample::NOTE)
    }

    /// The answer to `discover_filter` for what was found: cards, summary
    /// (after `note`), page hints, every e-mail address hidden.
    fn filter_answer(&self, input: &FilterInput, found: Found, note: &str) -> CallToolResult {
        let Found {
            mut filtered,
            checks,
            generated,
            intent_ids,
            still_arriving,
        } = found;
        let cards = self.cards(&filtered.results, &checks);
        let summary = cards::summary(&cards::Facts {
            generated: generated.as_ref().map(Vec::len),
            intents: intent_ids.len(),
            matches: filtered.results.len(),
            pagination: filtered.pagination,
            unavailable: checks.iter().filter(|c| c.unavailable()).count(),
            checked: checks.iter().filter(|c| c.status != vibecheck::Status::Skipped).count(),
            still_arriving,
            names: cards.iter().map(|c| c.header.title.clone()).collect(),
        });
        let summary = format!("{note}{summary}");
        filtered.results.iter_mut().for_each(cards::redact);
        let markup: Vec<&str> = cards.iter().map(|c| c.markup.as_str()).collect();
        let text = format!(
            "{summary}\n\n{}",
            if markup.is_empty() {
                "No matches found.".to_string()
            } else {
                markup.join("\n\n")
            }
        );
        let next_arguments = json!({
            "intentIds": intent_ids,
            "userIds": input.user_ids,
            "indexIds": input.index_ids,
            "sources": input.sources,
            "excludeDiscovered": input.exclude_discovered,
            "limit": input.limit,
            "vibecheck": input.concurrency.or(input.character_limit).map(|_| json!({ "characterLimit": input.character_limit, "concurrency": input.concurrency })),
            "mock": input.mock.then_some(true),
        });
        let next_arguments = prune_nulls(next_arguments);
        let mut structured = serde_json::to_value(&filtered).unwrap_or_default();
        structured["vibechecks"] = json!(checks);
        structured["generatedIntents"] = json!(generated);
        structured["cardsMarkup"] = json!(markup);
        structured["cards"] = json!(cards);
        structured["pageHint"] = cards::page_hint(&filtered.pagination, &next_arguments);
        structured["summary"] = json!(summary);
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(structured);
        result.meta = Some(self.result_meta(&widget::DISCOVER, FILTERING));
        result
    }

    async fn archive_intent(&self, intent_id: String, session: Session) -> Result<CallToolResult, Failure> {
        self.protocol.archive_intent(&session, &intent_id).await?;
        info!(tool = "archive_intent", request_id = %session.request_id, "index invocation");
        let mut result = CallToolResult::success(vec![ContentBlock::text("Intent removed.")]);
        result.structured_content = Some(json!({ "archived": intent_id }));
        Ok(result)
    }

    async fn discover_connections(
        &self,
        input: args::ConnectionsInput,
        session: Session,
    ) -> Result<CallToolResult, Failure> {
        let intents = self
            .intents_from(
                &session,
                &args::IntentInput {
                    full_input_text: input.text.clone(),
                    ..Default::default()
                },
            )
            .await?;
        let intent_ids: Vec<String> = intents.iter().map(|i| i.id.clone()).collect();
        let empty = |text: &str| {
            let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
            r.structured_content = Some(
                json!({ "connections": [], "intentsExtracted": intent_ids.len(), "connectionsFound": 0, "summary": text }),
            );
            r.meta = Some(self.result_meta(&widget::CONNECTIONS, CONNECTING));
            r
        };
        if intent_ids.is_empty() {
            return Ok(empty(
                "No intents found in the input; describe what you are looking for in more detail.",
            ));
        }
        let body = FilterRequest {
            intent_ids: &intent_ids,
            user_ids: None,
            index_ids: None,
            sources: None,
            exclude_discovered: true,
            page: 1,
            limit: input.max_connections,
        };
        let (mut filtered, still_arriving) = self.filter(&session, &body, true).await?;
        if filtered.results.is_empty() {
            let note = if still_arriving {
                "; matches for your new intents may still be arriving, try again in a few seconds"
            } else {
                ""
            };
            return Ok(empty(&format!("No connections found{note}.")));
        }
        let settings = self.vibecheck_settings(&FilterInput::default());
        let (checks, tally) = vibecheck::run_all(
            &self.protocol,
            &session,
            &filtered.results,
            &intent_ids,
            None,
            &settings,
        )
        .await;
        info!(
            tool = "discover_connections",
            request_id = %session.request_id,
            intents_resolved = intent_ids.len(),
            matches = filtered.results.len(),
            vibecheck_success = tally.success,
            vibecheck_failures = tally.failures,
            vibecheck_retries = tally.retries,
            "index invocation"
        );
        let cards = self.cards(&filtered.results, &checks);
        filtered.results.iter_mut().for_each(cards::redact);
        // Avatars as the cards have them: only from the origins the widget's CSP declares.
        let connections: Vec<Value> = filtered
            .results
            .iter()
            .zip(&checks)
            .zip(&cards)
            .map(|((m, c), card)| {
                json!({
                    "id": m.user.id,
                    "user": { "id": m.user.id, "name": m.user.name, "avatar": card.header.avatar, "intro": m.user.intro },
                    "synthesis": vocab::mask::hide_emails(&c.synthesis),
                    "matchedIntents": m.intents.iter().map(|i| json!({ "id": i.intent.id, "payload": vocab::text::truncate(&i.intent.payload, 500), "summary": i.intent.summary })).collect::<Vec<_>>(),
                    "totalStake": m.total_stake,
                    "actions": card.actions,
                })
            })
            .collect();
        let n = connections.len();
        let names: Vec<String> = cards.iter().map(|c| c.header.title.clone()).collect();
        let mut summary = format!(
            "Found {n} connection{}: {}",
            if n == 1 { "" } else { "s" },
            cards::first_names(&names, n)
        );
        let unavailable = checks.iter().filter(|c| c.unavailable()).count();
        if unavailable > 0 {
            summary.push_str(&format!(" (VibeCheck unavailable for {unavailable})"));
        }
        let markup: Vec<String> = cards.into_iter().map(|c| c.markup).collect();
        let mut result = CallToolResult::success(vec![ContentBlock::text(format!(
            "{summary}.\n\n{}",
            markup.join("\n\n")
        ))]);
        result.structured_content = Some(json!({
            "connections": connections,
            "intentsExtracted": intent_ids.len(),
            "connectionsFound": n,
            "summary": summary,
        }));
        let mut meta = self.result_meta(&widget::CONNECTIONS, CONNECTING);
        meta.insert(
            "openai/toolInvocation/invoked".into(),
            format!("Found {n} connection{}", if n == 1 { "" } else { "s" }).into(),
        );
        result.meta = Some(meta);
        Ok(result)
    }

    /// One card per match, in order; avatars only from `[index] avatar_origins`.
    fn cards(&self, results: &[protocol::Match], checks: &[vibecheck::VibeCheck]) -> Vec<cards::Card> {
        results
            .iter()
            .zip(checks)
            .map(|(m, c)| cards::card(m, c, |url| self.config.avatar_allowed(url)))
            .collect()
    }

    /// A result's `_meta`: its tool's, and its template embedded for ChatGPT.
    fn result_meta(&self, widget: &Widget, invocation: (&str, &str)) -> rmcp::model::MetaObject {
        let mut keys = tool_meta(widget, invocation);
        keys.insert("openai.com/widget".into(), widget.embedded(&self.config.avatar_origins));
        keys
    }

    fn vibecheck_settings(&self, input: &FilterInput) -> vibecheck::Settings {
        vibecheck::Settings {
            concurrency: input.concurrency.unwrap_or(self.config.vibecheck_concurrency) as usize,
            throttle: self.config.vibecheck_throttle,
            retry_delays: self.config.vibecheck_retry_delays.clone(),
            character_limit: input.character_limit,
        }
    }
}

impl ServerHandler for IndexServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build());
        info.server_info = Implementation::new("index-network", env!("CARGO_PKG_VERSION"));
        info
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(Self::tools()))
    }

    async fn list_resources(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let origins = &self.config.avatar_origins;
        Ok(ListResourcesResult::with_all_items(
            widget::ALL.iter().map(|w| w.resource(origins)).collect(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let Some(widget) = Widget::by_uri(&request.uri) else {
            return Err(ErrorData::resource_not_found(
                format!("no resource '{}'", request.uri),
                None,
            ));
        };
        let mcp_apps = ctx.meta.get(MCP_APPS_META).and_then(Value::as_bool);
        Ok(ReadResourceResult::new(vec![widget.contents(mcp_apps, &self.config.avatar_origins)]).into())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.as_ref();
        let args = request.arguments.unwrap_or_default();
        // Arguments are checked before the token is spent on an exchange.
        let call = match name {
            "extract_intent" => args::extract_intent(&args).map(Call::Extract),
            "discover_filter" => args::discover_filter(&args).map(Call::Filter),
            "discover_connections" => {
                args::discover_connections(&args, self.config.max_connections).map(Call::Connections)
            }
            "archive_intent" => args::archive_intent(&args).map(Call::Archive),
            other => return Err(ErrorData::invalid_params(format!("unknown tool '{other}'"), None)),
        };
        let meta_str = |k: &str| ctx.meta.get(k).and_then(Value::as_str);
        let request_id = meta_str(REQUEST_ID_META).map_or_else(|| RequestId::fresh().to_string(), str::to_string);
        let outcome = async {
            let call = call.map_err(Failure::Invalid)?;
            if let Call::Filter(input) = &call
                && input.mock
            {
                return Ok(self.sample_filter(input));
            }
            let session = self.protocol.exchange(meta_str(CALLER_TOKEN_META), &request_id).await?;
            match call {
                Call::Extract(input) => self.extract_intent(input, session).await,
                Call::Filter(input) => self.discover_filter(input, session).await,
                Call::Connections(input) => self.discover_connections(input, session).await,
                Call::Archive(intent_id) => self.archive_intent(intent_id, session).await,
            }
        };
        let result = match outcome.await {
            Ok(r) => r,
            Err(failure) => {
                if let Failure::Api(e) = &failure {
                    warn!(tool = name, request_id, error = %e, "index tool failed");
                }
                failure.into_result()
            }
        };
        Ok(result.into())
    }
}

/// A tool's `_meta`: its widget's template keys and what ChatGPT shows while it runs.
fn tool_meta(widget: &Widget, (invoking, invoked): (&str, &str)) -> rmcp::model::MetaObject {
    let mut keys = widget.tool_meta();
    keys["openai/toolInvocation/invoking"] = invoking.into();
    keys["openai/toolInvocation/invoked"] = invoked.into();
    meta(keys)
}

fn meta(v: Value) -> rmcp::model::MetaObject {
    match v {
        Value::Object(o) => o.into(),
        _ => unreachable!("meta is an object"),
    }
}

/// `intentIds=2 userIds=0 …`: which filters were used, never their values.
fn filters_summary(input: &FilterInput) -> String {
    let n = |v: &Option<Vec<String>>| v.as_ref().map_or(0, Vec::len);
    format!(
        "intentIds={} userIds={} indexIds={} sources={} page={} limit={}",
        input.intent_ids.len(),
        n(&input.user_ids),
        n(&input.index_ids),
        input.sources.as_ref().map_or(0, Vec::len),
        input.page,
        input.limit
    )
}

fn prune_nulls(mut v: Value) -> Value {
    if let Value::Object(o) = &mut v {
        o.retain(|_, x| !x.is_null());
        for x in o.values_mut() {
            *x = prune_nulls(std::mem::take(x));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tool_names_its_own_widget_and_is_annotated_for_its_writes() {
        let tools = IndexServer::tools();
        for (name, widget) in [
            ("extract_intent", &widget::INTENTS),
            ("discover_filter", &widget::DISCOVER),
            ("discover_connections", &widget::CONNECTIONS),
        ] {
            let t = tools.iter().find(|t| t.name == name).unwrap();
            let meta = t.meta.as_ref().unwrap();
            assert_eq!(meta.get("openai/outputTemplate"), Some(&json!(widget.uri)), "{name}");
            assert_eq!(meta.get("ui"), Some(&json!({ "resourceUri": widget.uri })), "{name}");
            assert_eq!(meta.get("openai/widgetAccessible"), Some(&json!(true)), "{name}");
            // Every one may create intents on the user's profile.
            let a = t.annotations.as_ref().unwrap();
            assert_eq!(a.read_only_hint, Some(false), "{name} writes");
            assert_eq!(a.destructive_hint, Some(false), "{name} only adds");
            assert_eq!(a.open_world_hint, Some(true), "{name}");
        }
        for t in &tools {
            jsonschema::validator_for(&Value::Object((*t.input_schema).clone())).unwrap();
            for key in ["openai/toolInvocation/invoking", "openai/toolInvocation/invoked"] {
                let s = t.meta.as_ref().unwrap().get(key).unwrap().as_str().unwrap();
                assert!(s.chars().count() <= 64, "{key} of {} is too long", t.name);
            }
        }
    }

    /// Issue #72 (5): the intent display's Remove buttons call
    /// `archive_intent`, a tool for the App alone (listed for Apps, kept from
    /// the model and discovery) that says it destroys.
    #[test]
    fn archive_intent_is_for_the_intent_display_alone() {
        let tools = IndexServer::tools();
        let t = tools.iter().find(|t| t.name == "archive_intent").unwrap();
        let ui = &t.meta.as_deref().unwrap()["ui"];
        assert_eq!(ui["visibility"], json!(["app"]), "for its App alone");
        assert!(ui.get("resourceUri").is_none(), "it renders nothing itself");
        let a = t.annotations.as_ref().unwrap();
        assert_eq!((a.destructive_hint, a.idempotent_hint), (Some(true), Some(true)));
        assert_eq!(t.input_schema["required"], json!(["intentId"]));
    }

    #[test]
    fn prune_drops_nulls_deeply() {
        assert_eq!(
            prune_nulls(json!({ "a": null, "b": { "c": null, "d": 1 } })),
            json!({ "b": { "d": 1 } })
        );
    }
}
