//! The two meta-tools as plain functions: [`Gateway::discover`] and
//! [`Gateway::execute`], scoped to a [`Caller`], with their answers and audit
//! rows. The MCP server and the CLI both call these, so `mcp-gateway search`
//! and `call` behave exactly like `tool_discovery` and `tool_execute`.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, JsonObject, ToolAnnotations};
use serde::Serialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

mod args;
mod audit;
mod error;
mod rounds;
mod sealed;
mod startup;
mod target;
mod tasks;

pub use args::{
    DEFAULT_RESULTS, DiscoverArgs, ExecuteArgs, MAX_QUERIES, MAX_QUERY_CHARS, MAX_RESULTS, OneOrMany, Retry, parse_args,
};
pub use audit::AUDIT_WAIT;
pub use error::ExecuteError;
pub use tasks::{TaskAnswer, TaskRequest};

use crate::auth::{self, Authenticator, Caller};
use crate::catalog::Catalog;
use crate::config::{AuditMode, Config};
use crate::credentials::{self, Vault};
use crate::downstream::{self, Registry};
use crate::learning::{Learning, Trail};
use crate::rank::{Bm25, Hybrid, SearchProvider};
use crate::search::cloud::CloudSearch;
use crate::search::semantic;
use crate::search::{self, Ranked};
use crate::security::Security;
use crate::store::{self, Outcome, Search, Store};
use crate::wire::{self, DISCOVERY, EXECUTE, split_key};

/// How long a one-shot command waits for tool embeddings (a first
/// embedding of a large catalog takes minutes; `serve` never waits).
const ONE_SHOT_EMBEDDING_WAIT: Duration = Duration::from_secs(30);

/// One `tool_discovery` result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Found {
    /// `server:tool`, the key `tool_execute` takes.
    pub tool_key: String,
    /// The tool's own name.
    pub tool_name: String,
    /// The server it runs on.
    pub server_name: String,
    /// The tool's description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// 0..1; a fixed map of the BM25 score, comparable across queries.
    /// Three decimals, held as the f64 that prints that way: an f32 widened
    /// on the way into JSON would print as 0.08399999886751175.
    pub relevance: f64,
    /// Why it was picked: matched terms and fields (BM25), or the cloud's reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
    /// Tags the operator's rules give the tool.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// JSON Schema of the arguments.
    pub input_schema: Arc<JsonObject>,
    /// JSON Schema of `structuredContent`, when the tool declares one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Arc<JsonObject>>,
    /// Behaviour hints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Which of the request's queries found it (for learning from use).
    #[serde(skip)]
    pub query: usize,
}

/// Bytes of `value` as JSON, counted without building the text.
fn json_size(value: &impl serde::Serialize) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// Everything a request needs: servers, catalog, callers, audit.
#[derive(Debug, Clone)]
pub struct Gateway {
    registry: Arc<Registry>,
    catalog: Arc<Catalog>,
    auth: Authenticator,
    store: Arc<Store>,
    vault: Arc<Vault>,
    cloud: Option<Arc<CloudSearch>>,
    learning: Arc<Learning>,
    security: Arc<Security>,
    rounds: rounds::Rounds,
    /// Whether answers wait for their audit rows.
    audit: AuditMode,
    /// `[startup] wait_ms`, in milliseconds (a reload may change it).
    startup_wait: Arc<std::sync::atomic::AtomicU64>,
}

/// Why the gateway could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The store could not be opened or prepared.
    #[error(transparent)]
    Store(#[from] store::Error),
    /// The catalog could not be built.
    #[error(transparent)]
    Catalog(#[from] crate::catalog::Error),
    /// The search index could not be built.
    #[error(transparent)]
    Search(#[from] search::Error),
    /// The embedding model is there but unusable.
    #[error(transparent)]
    Semantic(#[from] semantic::Error),
}

/// A running gateway core plus what it takes to stop it.
#[derive(Debug)]
pub struct Running {
    /// Handle for requests.
    pub gateway: Gateway,
    tracker: TaskTracker,
    ct: CancellationToken,
    /// The model to fetch, when it is missing and may be fetched.
    fetch: Option<semantic::SemanticConfig>,
}

impl Running {
    /// Fetches a missing embedding model in the background (`serve` does;
    /// one-shot commands do not), then puts hybrid search to work.
    pub fn fetch_missing_model(&mut self) {
        let Some(config) = self.fetch.take() else { return };
        let (catalog, ct) = (self.gateway.catalog.clone(), self.ct.child_token());
        catalog.set_hybrid_off(semantic::FETCHING);
        self.tracker.spawn(async move {
            tokio::select! {
                model = semantic::fetch(config) => match model {
                    Ok(model) => catalog.set_semantic(model),
                    Err(why) => catalog.set_hybrid_off(why),
                },
                _ = ct.cancelled() => {}
            }
        });
    }

    /// Stops every downstream (children get their grace period), waits for
    /// them, and flushes the audit log.
    pub async fn shutdown(self) {
        self.ct.cancel();
        self.tracker.close();
        if tokio::time::timeout(Duration::from_secs(20), self.tracker.wait())
            .await
            .is_err()
        {
            tracing::warn!("some downstream servers did not stop in time");
        }
        let store = self.gateway.store.clone();
        let _ = tokio::task::spawn_blocking(move || store.close()).await;
    }
}

/// What [`Gateway::reload`] did.
#[derive(Debug)]
pub struct Reloaded {
    /// Servers added, removed, restarted.
    pub servers: downstream::Changes,
    /// Changed settings that take effect only after a restart.
    pub needs_restart: Vec<&'static str>,
}

/// The outcome of one meta-tool call, for the audit log and the caller.
#[derive(Debug)]
pub struct Answer {
    /// What the caller gets.
    pub result: CallToolResponse,
    /// How it ended.
    pub outcome: Outcome,
    /// Results of a discovery.
    pub result_count: Option<u64>,
    /// What learning from use links to this call.
    pub trail: Trail,
}

impl Gateway {
    /// Opens the store, starts every enabled server and the catalog
    /// maintainer. Servers connect concurrently in the background; the
    /// catalog fills as they come up.
    pub fn start(config: &Config, ct: CancellationToken) -> Result<Running, StartError> {
        crate::telemetry::install();
        let semantic = semantic::start(config.semantic.as_ref())?;
        let (fetch, hybrid_off) = match &semantic {
            semantic::Start::Fetch(c) => (
                Some(c.clone()),
                Some(format!(
                    "no embedding model in {} yet: `serve` fetches it on first start (or run `mcp-gateway model install`)",
                    c.model_dir.display()
                )),
            ),
            semantic::Start::Off(why) => (None, Some(why.clone())),
            semantic::Start::Ready(_) => (None, None),
        };
        let store = Arc::new(Store::open_at(&config.store)?);
        store.set_durable_audit(config.audit == AuditMode::Strict);
        let oauth = config.oauth.clone().map(|c| Arc::new(crate::oauth::Verifier::new(c)));
        let auth = Authenticator::new(store.clone(), config.anonymous_project.clone(), oauth);
        auth.prepare_anonymous(config.servers.iter().map(|s| s.name.as_str()))?;
        let tracker = TaskTracker::new();
        let registry = Registry::start(&config.servers, &tracker, &ct, store.clone());
        let security = Arc::new(Security::new(store.clone(), config.security.clone()));
        let catalog = Catalog::new(&registry, config.rules.clone(), security.clone(), semantic.ready())?;
        tracker.spawn(security.clone().follow(registry.changed().clone(), ct.child_token()));
        if let Some(why) = hybrid_off {
            catalog.set_hybrid_off(why);
        }
        tracker.spawn(catalog.clone().maintain(registry.clone(), ct.child_token()));
        let cloud = config.cloud.clone().map(|c| Arc::new(CloudSearch::new(c)));
        let vault = Arc::new(Vault::new(store.clone()));
        let learning = Arc::new(Learning::new(store.clone(), config.learning.clone())?);
        tracker.spawn(credentials::list_through_projects(
            registry.clone(),
            vault.clone(),
            ct.child_token(),
        ));
        Ok(Running {
            gateway: Gateway {
                registry,
                catalog,
                auth,
                vault,
                store,
                cloud,
                learning,
                security,
                rounds: rounds::Rounds::default(),
                audit: config.audit,
                startup_wait: Arc::new(startup::millis(config.startup_wait).into()),
            },
            tracker,
            ct,
            fetch,
        })
    }

    /// Applies a new configuration to the running gateway: tool rules, and
    /// servers started, stopped or restarted as [`Registry::apply`] decides.
    /// Settings read only at start are named in [`Reloaded::needs_restart`].
    pub fn reload(&self, old: &Config, new: &Config) -> Result<Reloaded, store::Error> {
        self.auth
            .prepare_anonymous(new.servers.iter().map(|s| s.name.as_str()))?;
        self.catalog.set_rules(new.rules.clone());
        self.security.set_config(new.security.clone());
        self.startup_wait
            .store(startup::millis(new.startup_wait), std::sync::atomic::Ordering::Relaxed);
        self.registry.changed().notify_one();
        Ok(Reloaded {
            servers: self.registry.apply(&new.servers),
            needs_restart: old.needs_restart(new),
        })
    }

    /// The downstream servers.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The tool catalog.
    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    /// The store.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// Waits until every server has connected or failed once, then makes sure
    /// the catalog reflects that (for one-shot CLI commands and tests).
    pub async fn ready(&self) {
        self.registry.settled().await;
        credentials::lend_listings(&self.registry, &self.vault).await;
        if let Err(e) = self.catalog.refresh(&self.registry) {
            tracing::error!(error = %e, "catalog rebuild failed");
        }
        // A one-shot `search` answers as the server would: with hybrid, once
        // the tools are embedded (from the disk cache, usually at once).
        if !self.catalog.embedded(ONE_SHOT_EMBEDDING_WAIT).await {
            tracing::warn!("tool embeddings are not ready yet; BM25 answers this command");
        }
    }

    /// The caller behind `token` (or anonymous), narrowed by `_meta.projectId`.
    pub fn caller(&self, token: Option<&str>, project_hint: Option<&str>) -> Result<Caller, auth::Error> {
        self.auth.caller(token, project_hint)
    }

    /// The caller behind any token, OAuth access tokens included (see
    /// [`Authenticator::authenticate`]).
    pub async fn authenticate(&self, token: Option<&str>, project_hint: Option<&str>) -> Result<Caller, auth::Error> {
        self.auth.authenticate(token, project_hint).await
    }

    /// The OAuth verifier, when `[auth.oauth]` is configured.
    pub fn oauth(&self) -> Option<&Arc<crate::oauth::Verifier>> {
        self.auth.oauth()
    }

    /// Whether callers without a token get in.
    pub fn allows_anonymous(&self) -> bool {
        self.auth.allows_anonymous()
    }

    /// The caller an operator acts as with `--project` on the command line.
    pub fn caller_for_project(&self, project: &str) -> Result<Caller, store::Error> {
        self.auth.caller_for_project(project)
    }

    /// `tool_discovery`: ranked tools the caller may use, by the project's
    /// search; the cloud falls back to BM25 and says why.
    pub async fn discover(&self, caller: &Caller, args: &DiscoverArgs) -> Result<Discovery, String> {
        let queries = args.queries()?;
        let limit = match args.max_results {
            None => DEFAULT_RESULTS,
            Some(n) if (1..=MAX_RESULTS as i64).contains(&n) => n as usize,
            Some(n) => return Err(format!("maxResults must be between 1 and {MAX_RESULTS}, got {n}")),
        };
        let starting = match caller.project.optimization {
            Some(_) => self.wait_for_starting(&caller.grants, None).await,
            None => Vec::new(),
        };
        let view = self.catalog.visible_to(caller.grants.clone());
        let request = search::Request {
            queries,
            context: args.context.clone(),
            limit,
            // Local searches blend it in; the cloud ranks on its own.
            prior: self.learning.prior(caller),
        };
        let (ranked, provider, notice) = match (caller.project.optimization, &self.cloud) {
            (None, _) => {
                let notice = format!(
                    "the tool catalog is off for project '{}'; an operator can turn it on with \
                     `mcp-gateway project set-search {} bm25`",
                    caller.project.name, caller.project.name
                );
                return Ok(Discovery {
                    results: Vec::new(),
                    provider: None,
                    notice: Some(notice),
                    starting,
                    terms: Vec::new(),
                });
            }
            (Some(Search::Bm25), _) => (Bm25.search(&view, &request).await?, Search::Bm25, None),
            (Some(Search::Hybrid), _) => {
                let (ranked, provider, why_not) = self.local(&view, &request).await?;
                (ranked, provider, why_not.map(|why| format!("{why}; BM25 answered")))
            }
            (Some(Search::Cloud), None) => {
                let (ranked, provider, _) = self.local(&view, &request).await?;
                let why = format!(
                    "cloud search is not configured ([search.cloud]); {} answered",
                    provider.label()
                );
                (ranked, provider, Some(why))
            }
            (Some(Search::Cloud), Some(cloud)) => match cloud.search(&view, &request).await {
                Ok(ranked) => (ranked, Search::Cloud, None),
                Err(reason) => {
                    tracing::warn!(project = caller.project.id, reason = %reason, "cloud search failed; local search answers");
                    crate::telemetry::search_fallback("cloud");
                    let (ranked, provider, _) = self.local(&view, &request).await?;
                    let why = format!("cloud search failed ({reason}); {} answered", provider.label());
                    (ranked, provider, Some(why))
                }
            },
        };
        let results = ranked
            .into_iter()
            .filter_map(|r| {
                let entry = view.get(&r.key)?;
                Some(Found {
                    tool_key: entry.key.clone(),
                    tool_name: entry.tool.name.to_string(),
                    server_name: entry.server.clone(),
                    description: entry.tool.description.as_deref().map(str::to_string),
                    relevance: wire::score(r.relevance),
                    explanation: r.explanation,
                    tags: entry.tags.clone(),
                    input_schema: entry.tool.input_schema.clone(),
                    output_schema: entry.tool.output_schema.clone(),
                    annotations: entry.tool.annotations.clone(),
                    query: r.query,
                })
            })
            .collect();
        let terms = if self.learning.enabled() {
            request.queries.iter().map(|q| view.query_terms(q)).collect()
        } else {
            Vec::new()
        };
        let notice = match (starting.is_empty(), notice) {
            (true, notice) => notice,
            (false, None) => Some(startup::notice(&starting)),
            (false, Some(notice)) => Some(format!("{}\n{notice}", startup::notice(&starting))),
        };
        Ok(Discovery {
            results,
            provider: Some(provider),
            notice,
            starting,
            terms,
        })
    }

    /// The best local search: hybrid when the model and this snapshot's tool
    /// embeddings are ready, else BM25 and why hybrid did not answer.
    async fn local(
        &self,
        view: &crate::catalog::View,
        request: &search::Request,
    ) -> Result<(Vec<Ranked>, Search, Option<String>), String> {
        let why_not = match self.catalog.semantic() {
            None => format!("hybrid search is off: {}", self.catalog.hybrid_off()),
            Some(model) => match Hybrid::new(model).search(view, request).await {
                Ok(ranked) => return Ok((ranked, Search::Hybrid, None)),
                Err(why) => {
                    crate::telemetry::search_fallback("hybrid");
                    format!("hybrid search could not answer ({why})")
                }
            },
        };
        Ok((Bm25.search(view, request).await?, Search::Bm25, Some(why_not)))
    }

    /// `tool_execute`: validates and forwards one call; the downstream result
    /// comes back unchanged. `meta` is forwarded as the call's `_meta`;
    /// `origin` says where the downstream's progress goes and whom its
    /// mid-call requests may be put to.
    pub async fn execute(
        &self,
        caller: &Caller,
        args: ExecuteArgs,
        meta: Option<JsonObject>,
        origin: downstream::CallOrigin,
    ) -> Result<CallToolResponse, ExecuteError> {
        let mut view = self.catalog.visible_to(caller.grants.clone());
        if view.get(&args.tool_key).is_none()
            && let Some((server, _)) = split_key(&args.tool_key)
        {
            // Its server may still be in its first connection: wait for it, then look again.
            if !self.wait_for_starting(&caller.grants, Some(server)).await.is_empty() {
                return Err(ExecuteError::Starting {
                    key: args.tool_key.clone(),
                    server: server.to_string(),
                });
            }
            view = self.catalog.visible_to(caller.grants.clone());
        }
        let entry = view
            .get(&args.tool_key)
            .ok_or_else(|| match view.held(&args.tool_key) {
                Some(held) => ExecuteError::Held {
                    key: args.tool_key.clone(),
                    why: held.why.clone(),
                },
                None => ExecuteError::NotFound(args.tool_key.clone()),
            })?;
        let arguments = match args.arguments {
            None | Some(Value::Null) => Value::Object(JsonObject::new()),
            Some(v) => v,
        };
        entry
            .check_arguments(&arguments)
            .map_err(|violations| ExecuteError::Invalid {
                key: entry.key.clone(),
                violations,
            })?;
        let Value::Object(mut arguments) = arguments else {
            return Err(ExecuteError::Invalid {
                key: entry.key.clone(),
                violations: vec!["arguments must be an object".into()],
            });
        };
        let server = self
            .registry
            .get(&entry.server)
            .ok_or_else(|| ExecuteError::NotFound(args.tool_key.clone()))?;
        self.security
            .screen_arguments(&caller.project.name, &server.config, &entry.key, &mut arguments)?;
        let mut meta = meta.unwrap_or_default();
        let request_id = meta
            .get(wire::REQUEST_ID_META)
            .and_then(Value::as_str)
            .map(str::to_string);
        let target = self.target(caller, &server, &mut meta).await?;
        let span = tracing::info_span!(
            "downstream",
            otel.name = %format!("tools/call {}", entry.key),
            otel.kind = "client",
            server = %server.name(),
            tool_key = %entry.key,
            outcome = tracing::field::Empty,
        );
        crate::traces::propagate(&span, &mut meta);
        let mut params = CallToolRequestParams::new(entry.tool.name.clone()).with_arguments(arguments);
        let (responses, state) = (args.retry.input_responses, args.retry.request_state);
        params.input_responses = responses.clone();
        params.request_state = state.clone();
        params.meta = (!meta.is_empty()).then(|| meta.into());
        let too_large = |bytes| {
            let limit = server.config.max_result_bytes;
            tracing::warn!(tool_key = %entry.key, bytes, limit, "result refused: too large");
            ExecuteError::TooLarge {
                key: entry.key.clone(),
                bytes,
                limit,
            }
        };
        let caller_polls = origin.tasks;
        // The trace a crash cannot erase: written, in strict mode durably,
        // before the server is called (its outcome row replaces it).
        if let Some(request_id) = &request_id {
            let key = Some(entry.key.clone());
            let row = Self::audit_row(
                request_id,
                Some(caller),
                EXECUTE,
                key,
                Outcome::Started,
                Duration::ZERO,
                None,
                Trail::default(),
            );
            self.audit(row, true).await.map_err(ExecuteError::NotAudited)?;
        }
        let called = if origin.input_requests.is_some() {
            // A 2025 downstream's mid-call requests come back as input requests (rounds.rs).
            let key = self
                .vault
                .key_or_create()
                .map_err(|e| ExecuteError::Task(e.to_string()))?;
            let (project, subject) = (caller.project.id, caller.subject.as_deref());
            let call =
                match self
                    .rounds
                    .resume(&key, project, subject, &entry.key, state.as_deref(), responses.as_ref())?
                {
                    Some(parked) => parked,
                    None => rounds::Call::start(target.clone(), params, origin, span.clone()),
                };
            self.rounds
                .next(call, &key, project, subject, &entry.key)
                .instrument(span.clone())
                .await
        } else {
            target.call_tool(params, origin).instrument(span.clone()).await
        };
        span.record(
            "outcome",
            match &called {
                Ok(CallToolResponse::Complete(r)) if r.is_error == Some(true) => Outcome::ToolError.as_str(),
                Ok(CallToolResponse::Complete(_)) => Outcome::Ok.as_str(),
                // A task or an input request: the call goes on.
                Ok(_) => "pending",
                Err(downstream::Error::Timeout { .. }) => Outcome::Timeout.as_str(),
                Err(_) => Outcome::Failed.as_str(),
            },
        );
        let mut result = called.map_err(|e| match e {
            downstream::Error::TooLarge { bytes, .. } => too_large(bytes),
            downstream::Error::SignInRequired { server } => {
                ExecuteError::Credential(credentials::Error::SignInRequired {
                    project: caller.project.name.clone(),
                    server,
                    why: "the server takes only a project's own sign-in, and this project has none".into(),
                })
            }
            e => e.into(),
        })?;
        if let CallToolResponse::Task(created) = result {
            if caller_polls {
                return self.adopt_task(caller, &entry.key, created);
            }
            result = tasks::wait(&target, &created).await?;
        }
        if let CallToolResponse::Complete(r) = &mut result {
            let bytes = json_size(r);
            if bytes > server.config.max_result_bytes {
                return Err(too_large(bytes));
            }
            self.security
                .screen_result(&caller.project.name, &server.config, &entry.key, r)?;
        }
        Ok(result)
    }

    /// `tool_discovery` from raw arguments to the answer the caller sees.
    /// `session` names the caller's session, so a later execute in it can
    /// be linked to this discovery (learning from use).
    pub async fn answer_discovery(
        &self,
        caller: &Caller,
        arguments: Option<JsonObject>,
        session: &str,
        request_id: &str,
    ) -> Answer {
        let discovery = match parse_args::<DiscoverArgs>(arguments) {
            Ok(args) => self.discover(caller, &args).await,
            Err(e) => Err(e),
        };
        match discovery {
            Ok(d) => {
                let count = d.results.len() as u64;
                let found = d.results.iter().map(|f| (f.tool_key.clone(), f.query)).collect();
                let trail = self.learning.discovered(session, caller, request_id, &d.terms, found);
                let mut r = CallToolResult::success(vec![ContentBlock::text(d.summary())]);
                r.structured_content = Some(serde_json::to_value(&d).unwrap_or_default());
                Answer {
                    result: r.into(),
                    outcome: Outcome::Ok,
                    result_count: Some(count),
                    trail,
                }
            }
            Err(e) => Answer {
                result: usage_error(DISCOVERY, &e).into(),
                outcome: Outcome::Failed,
                result_count: None,
                trail: Trail::default(),
            },
        }
    }

    /// `tool_execute` from raw arguments to the answer the caller sees.
    pub async fn answer_execute(
        &self,
        caller: &Caller,
        args: Result<ExecuteArgs, String>,
        meta: Option<JsonObject>,
        origin: downstream::CallOrigin,
        session: &str,
    ) -> Answer {
        let args = match args {
            Ok(a) => a,
            Err(e) => {
                return Answer {
                    result: usage_error(EXECUTE, &e).into(),
                    outcome: Outcome::Failed,
                    result_count: None,
                    trail: Trail::default(),
                };
            }
        };
        let tool_key = args.tool_key.clone();
        let (result, outcome) = match self.execute(caller, args, meta, origin).await {
            Ok(result) => {
                let outcome = match &result {
                    CallToolResponse::Complete(r) if r.is_error == Some(true) => Outcome::ToolError,
                    _ => Outcome::Ok,
                };
                (result, outcome)
            }
            Err(e) => {
                let outcome = match &e {
                    ExecuteError::NotFound(_) | ExecuteError::Held { .. } | ExecuteError::Secret(_) => Outcome::Denied,
                    ExecuteError::Downstream(downstream::Error::Timeout { .. }) => Outcome::Timeout,
                    _ => Outcome::Failed,
                };
                (e.into_result().into(), outcome)
            }
        };
        // Only a finished, successful call teaches: not one still asking for input.
        let succeeded = outcome == Outcome::Ok && matches!(result, CallToolResponse::Complete(_));
        let trail = match outcome {
            Outcome::Denied => Trail::default(),
            _ => self.learning.executed(session, caller, &tool_key, succeeded).await,
        };
        Answer {
            result,
            outcome,
            result_count: None,
            trail,
        }
    }
}

/// What `tool_discovery` returns as `structuredContent`.
#[derive(Debug, Clone, Serialize)]
pub struct Discovery {
    /// Ranked tools.
    pub results: Vec<Found>,
    /// Which search answered (`bm25`); absent when the catalog is off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<Search>,
    /// Why results are empty or partial (servers still starting), or came from a fallback.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// Servers the caller may see that were still starting when it answered:
    /// asked again shortly, it finds their tools too.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub starting: Vec<String>,
    /// The analyzed terms of each query (for learning from use).
    #[serde(skip)]
    pub terms: Vec<Vec<String>>,
}

impl Discovery {
    /// The readable twin of the structured results, for clients that show text only.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        if let Some(n) = &self.notice {
            out.push_str(n);
            out.push('\n');
        }
        if self.results.is_empty() {
            if self.provider.is_some() && self.starting.is_empty() {
                out.push_str("No matching tools. Try other words, or one query per step, each a complete need.");
            } else if self.provider.is_some() {
                out.push_str("No matching tools among the servers running now.");
            }
            return out;
        }
        out.push_str(&format!(
            "{} tool(s) found. Run one with tool_execute {{ toolKey, arguments }}.\n",
            self.results.len()
        ));
        for f in &self.results {
            let description = f.description.as_deref().unwrap_or("").lines().next().unwrap_or("");
            out.push_str(&format!("\n- {} ({:.2}): {}", f.tool_key, f.relevance, description));
            let params: Vec<&str> = f
                .input_schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().map(String::as_str).collect())
                .unwrap_or_default();
            if !params.is_empty() {
                out.push_str(&format!(" [args: {}]", params.join(", ")));
            }
        }
        out
    }
}

/// Parses a meta-tool's arguments.
fn usage_error(tool: &str, message: &str) -> CallToolResult {
    let mut r = CallToolResult::error(vec![ContentBlock::text(format!("invalid {tool} arguments: {message}"))]);
    r.structured_content = Some(json!({ "error": { "code": "INVALID_ARGUMENTS", "message": message } }));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discover_args_accept_string_or_list() {
        let one: DiscoverArgs = serde_json::from_value(json!({"query": "x"})).unwrap();
        assert!(matches!(one.query, OneOrMany::One(_)));
        let many: DiscoverArgs = serde_json::from_value(json!({"query": ["a", "b"], "maxResults": 3})).unwrap();
        assert!(matches!(many.query, OneOrMany::Many(ref v) if v.len() == 2));
        assert!(serde_json::from_value::<DiscoverArgs>(json!({"query": 5})).is_err());
        assert!(serde_json::from_value::<DiscoverArgs>(json!({"query": "x", "limit": 5})).is_err());
    }

    #[test]
    fn discovery_queries_are_capped_before_any_search() {
        let args = |v: Value| serde_json::from_value::<DiscoverArgs>(v).unwrap();
        let many: Vec<String> = (0..10_000).map(|i| format!("query {i}")).collect();
        let e = args(json!({ "query": many })).queries().unwrap_err();
        assert!(
            e.starts_with("tool_discovery takes at most 20 queries; got 10000"),
            "{e}"
        );
        let steps: Vec<String> = (0..MAX_QUERIES).map(|i| format!("step {i}")).collect();
        assert_eq!(args(json!({ "query": steps })).queries().unwrap().len(), MAX_QUERIES);
        let long = "a".repeat(MAX_QUERY_CHARS + 1);
        let e = args(json!({ "query": long })).queries().unwrap_err();
        assert!(e.contains("at most 4096 characters of queries in all; got 4097"), "{e}");
        let halves = ["é".repeat(MAX_QUERY_CHARS / 2), "é".repeat(MAX_QUERY_CHARS / 2)];
        assert!(
            args(json!({ "query": halves })).queries().is_ok(),
            "characters, not bytes"
        );
        let e = args(json!({ "query": "x", "context": long })).queries().unwrap_err();
        assert!(e.contains("at most 4096 characters of context"), "{e}");
        let e = args(json!({ "query": ["", " "] })).queries().unwrap_err();
        assert!(e.starts_with("query is empty"), "{e}");
    }

    #[test]
    fn errors_carry_engine_codes() {
        let e = ExecuteError::Invalid {
            key: "a:b".into(),
            violations: vec!["x".into()],
        };
        assert_eq!(e.code(), "TOOL_VALIDATION_ERROR");
        let r = e.into_result();
        assert_eq!(r.is_error, Some(true));
        assert_eq!(r.structured_content.unwrap()["error"]["violations"][0], "x");
        assert_eq!(ExecuteError::NotFound("k".into()).code(), "TOOL_NOT_FOUND");
    }
}
