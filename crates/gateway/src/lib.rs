//! The gateway's core: the two meta-tools as plain functions, scoped to a
//! [`Caller`]: [`Gateway::call`], one call from its caller to its answer and
//! audit row, and [`Gateway::discover`], the search itself; and what they
//! ask: the catalog, ranking, auth, the vault, security, rate limits,
//! operator actions.
//!
//! The MCP server and `mcp-gateway call` take [`Gateway::call`], and
//! `mcp-gateway search` and the console's playground ask
//! [`Gateway::discover`], so each behaves exactly like `tool_execute` and
//! `tool_discovery`. It knows
//! the downstream layer and the engines beneath it; it may not know its
//! faces (MCP's wire sessions, HTTP, the console), nor which built-in
//! servers exist: the entry point hands those to [`Gateway::start`].

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::CallToolResponse;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

mod admission;
mod args;
mod audit;
pub mod auth;
mod call;
pub mod catalog;
mod discover;
mod error;
mod execute;
mod hidden;
mod limits;
mod meta_tools;
pub mod operator;
pub mod rank;
pub mod ratelimit;
mod rounds_over_session;
mod rounds_parked;
mod route;
mod savings;
mod script;
mod sealed;
pub mod security;
mod startup;
mod tasks;
pub mod typescript;
pub mod vault;

pub use args::{
    DEFAULT_RESULTS, DiscoverArgs, ExecuteArgs, MAX_QUERIES, MAX_QUERY_CHARS, MAX_RESULTS, OneOrMany, Retry, parse_args,
};
pub use audit::{AUDIT_WAIT, AuditState};
pub use call::{CallRequest, MetaCall, Refused};
pub use discover::{Discovery, Found};
pub use error::ExecuteError;
pub use execute::outcome_of;
pub use hidden::HiddenTool;
pub use meta_tools::{built_meta_tools, meta_tools};
pub use tasks::{TaskAnswer, TaskRequest};

use crate::auth::{Authenticator, Caller};
use crate::catalog::{Catalog, Shaping};
use crate::security::Security;
use crate::vault::Vault;
use config::{AuditMode, Config};
use downstream::Registry;
use learning::{Learning, Trail};
use search::cloud::CloudSearch;
use search::semantic;
use store::{self, Store};
use vocab::outcome::Outcome;
use vocab::wire::DISCOVERY;

/// How long a one-shot command waits for tool embeddings (a first
/// embedding of a large catalog takes minutes; `serve` never waits).
const ONE_SHOT_EMBEDDING_WAIT: Duration = Duration::from_secs(30);

/// Everything a request needs: servers, catalog, callers, audit.
#[derive(Debug, Clone)]
pub struct Gateway {
    registry: Arc<Registry>,
    catalog: Arc<Catalog>,
    auth: Authenticator,
    store: Arc<Store>,
    vault: Arc<Vault>,
    cloud: Option<Arc<CloudSearch>>,
    learning: Arc<Learning<Store>>,
    security: Arc<Security>,
    /// Calls parked between a 2026-07-28 caller's rounds.
    parked: rounds_parked::ParkedCalls,
    /// Code mode's scripts running now, under the gateway-wide caps.
    scripts: admission::Scripts,
    /// Whether answers wait for their audit rows.
    audit: AuditMode,
    /// `[startup] wait_ms`, in milliseconds (a reload may change it).
    startup_wait: Arc<std::sync::atomic::AtomicU64>,
    /// Sessions whose tool listing a discovery has counted as saved.
    listed: Arc<savings::Listed>,
    /// `[[limits]]`, swapped on reload.
    limits: Arc<arc_swap::ArcSwap<config::Limits>>,
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
    /// The gateway's own error code, when it refused or failed the call itself.
    pub code: Option<&'static str>,
    /// Results of a discovery.
    pub result_count: Option<u64>,
    /// What learning from use links to this call.
    pub trail: Trail,
    /// Where the call's audit row stands.
    pub audit: AuditState,
    /// A discovery's o200k tokens saved ([`savings`]).
    pub saved_tokens: Option<i64>,
    /// A script's bytes of tool results kept out of the model's context.
    pub kept_bytes: Option<i64>,
}

impl Answer {
    /// An answer that ended as `outcome`, with nothing learned or counted.
    pub(crate) fn new(result: impl Into<CallToolResponse>, outcome: Outcome) -> Self {
        Answer {
            result: result.into(),
            outcome,
            code: None,
            result_count: None,
            trail: Trail::default(),
            audit: AuditState::Due,
            saved_tokens: None,
            kept_bytes: None,
        }
    }

    /// The gateway's refusal of a call, under `code`.
    pub(crate) fn refused(result: impl Into<CallToolResponse>, outcome: Outcome, code: &'static str) -> Self {
        Answer {
            code: Some(code),
            ..Answer::new(result, outcome)
        }
    }

    /// Arguments `tool` cannot take: refused, failed.
    pub(crate) fn usage(tool: &str, message: &str) -> Self {
        Answer::refused(
            args::usage_error(tool, message),
            Outcome::Failed,
            args::INVALID_ARGUMENTS,
        )
    }

    /// An execute's error as the caller reads it; `resolved` is the catalog's key the error is about.
    pub(crate) fn failed(error: ExecuteError, resolved: Option<&str>) -> Self {
        let (outcome, code) = (error.outcome(), error.code());
        let audit = match error {
            ExecuteError::NotAudited(_) => AuditState::StartRefused,
            _ => AuditState::Due,
        };
        Answer {
            audit,
            ..Answer::refused(error.into_result_for(resolved), outcome, code)
        }
    }
}

impl Gateway {
    /// Opens the store, starts every enabled server (`builtins` serves the
    /// built-in ones) and the catalog maintainer. Servers connect
    /// concurrently in the background; the catalog fills as they come up.
    pub fn start(
        config: &Config,
        builtins: Arc<dyn downstream::Builtins>,
        ct: CancellationToken,
    ) -> Result<Running, StartError> {
        telemetry::install();
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
        if config.audit == AuditMode::Strict {
            match store.strict_audit()? {
                store::StrictAudit::Journal { dir, replayed } => tracing::info!(
                    journal = %dir.display(),
                    replayed,
                    "strict audit: rows are journaled before calls go on"
                ),
                store::StrictAudit::Commits => tracing::info!("strict audit: rows commit before calls go on"),
            }
        }
        let auth = Authenticator::new(store.clone(), doors(config, None));
        auth.prepare_anonymous(config.servers.iter().map(|s| s.name.as_str()))?;
        let tracker = TaskTracker::new();
        let registry = Registry::start(&config.servers, &tracker, &ct, store.clone(), builtins);
        let security = Arc::new(Security::new(store.clone(), config.security.clone()));
        let catalog = Catalog::new(&registry, shaping(config), security.clone(), semantic.ready())?;
        let changed = registry.changed().clone();
        tracker.spawn(security.clone().follow(move || changed.notify_one(), ct.child_token()));
        if let Some(why) = hybrid_off {
            catalog.set_hybrid_off(why);
        }
        tracker.spawn(catalog.clone().maintain(registry.clone(), ct.child_token()));
        let cloud = config.cloud.clone().map(|c| Arc::new(CloudSearch::new(c)));
        let vault = Arc::new(Vault::new(store.clone()));
        let learning = Arc::new(Learning::new(store.clone(), config.learning.clone())?);
        tracker.spawn(vault::list_through_projects(
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
                parked: rounds_parked::ParkedCalls::default(),
                scripts: admission::Scripts::default(),
                audit: config.audit,
                startup_wait: Arc::new(startup::millis(config.startup_wait).into()),
                limits: Arc::new(arc_swap::ArcSwap::from_pointee(config.limits.clone())),
                listed: Arc::default(),
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
        // Who gets in follows the file at once: removing `[auth]` locks the gateway.
        let verifier = self.auth.oauth().filter(|_| old.oauth == new.oauth);
        self.auth.set_doors(doors(new, verifier));
        self.auth
            .prepare_anonymous(new.servers.iter().map(|s| s.name.as_str()))?;
        self.catalog.set_shaping(shaping(new));
        self.limits.store(Arc::new(new.limits.clone()));
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

    /// The defences against hostile servers, credential screening among them.
    pub fn security(&self) -> &Arc<Security> {
        &self.security
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
        vault::list_for_projects(&self.registry, &self.vault).await;
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
    pub fn oauth(&self) -> Option<Arc<oauth::Verifier>> {
        self.auth.oauth()
    }

    /// Whether callers without a token get in.
    pub fn allows_anonymous(&self) -> bool {
        self.auth.allows_anonymous()
    }

    /// What `project`'s callers may see and run (the operator's pages ask
    /// it for each project, as the faces ask it for each caller).
    pub fn view_for_project(&self, project: &str) -> Result<catalog::View, store::Error> {
        Ok(self.catalog.view_of(&self.auth.caller_for_project(project)?))
    }

    /// The caller an operator acts as with `--project` on the command line.
    pub fn caller_for_project(&self, project: &str) -> Result<Caller, store::Error> {
        self.auth.caller_for_project(project)
    }
}

/// Who `config` lets in; `verifier` is the running one, kept (with its
/// keys and cache) when `[auth.oauth]` is unchanged.
fn doors(config: &Config, verifier: Option<Arc<oauth::Verifier>>) -> auth::Doors {
    auth::Doors {
        anonymous_project: config.anonymous_project.clone(),
        oauth: verifier.or_else(|| config.oauth.clone().map(|c| Arc::new(oauth::Verifier::new(c)))),
    }
}

/// The rules and overrides of `config`, as the catalog applies them.
fn shaping(config: &Config) -> Shaping {
    Shaping {
        rules: config.rules.clone(),
        overrides: config.overrides.clone(),
    }
}
