//! What learning asks of the store, and nothing more: the rows it keeps
//! (term associations, remembered meanings, discovery links) and the few
//! reads and queued writes [`crate::Learning`] makes. The store implements
//! [`LearningStore`] with its SQL (the store crate's `learned.rs`).

use std::future::Future;

/// One learned association: `term` led to `tool_key`, with its decayable weight.
#[derive(Debug, Clone, PartialEq)]
pub struct Association {
    /// An analyzed query term, or its salted hash.
    pub term: String,
    /// `server:tool`.
    pub tool_key: String,
    /// Sum of the weights of its uses ([`crate::terms::weight_of_use`]).
    pub weight: f64,
}

/// One remembered query of one tool (the memory of meanings, as stored).
#[derive(Debug, Clone, PartialEq)]
pub struct Remembered {
    /// `server:tool`.
    pub tool_key: String,
    /// The normalised query, or its salted hash.
    pub query_key: String,
    /// Its embedding's int8 codes and scale.
    pub vector: Vec<u8>,
    /// Sum of the weights of its uses.
    pub weight: f64,
    /// Order of last use (set by the store on writing).
    pub touched: i64,
}

/// One successful use to learn from.
#[derive(Debug, Clone, PartialEq)]
pub struct Use {
    /// The caller's project.
    pub project_id: i64,
    /// The terms of the query that found the tool (as stored).
    pub terms: Vec<String>,
    /// The tool run.
    pub tool_key: String,
    /// The use's weight ([`crate::terms::weight_of_use`]).
    pub weight: f64,
    /// Who claims the lesson (the session's salted key): each claimant
    /// teaches a tool once, whichever replica the execute reached.
    pub claim: Option<String>,
    /// The query's meaning, remembered with the tool.
    pub meaning: Option<Remembered>,
}

/// One discovery, as an execute on any replica may follow it.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// The discovery's request id.
    pub request_id: String,
    /// The caller's project.
    pub project_id: i64,
    /// A salted hash of the session key.
    pub session: String,
    /// Unix milliseconds.
    pub at: i64,
    /// Its queries (JSON: terms, and the meanings' keys).
    pub asked: String,
    /// Its answer: toolKeys with the query that found each (JSON).
    pub results: String,
    /// Its queries' embeddings, one row each, when it had them.
    pub vectors: Option<Vec<u8>>,
}

/// The store, as learning uses it. Reads run inline; writes are queued
/// behind the store's writer and may land a moment later.
pub trait LearningStore: Send + Sync + 'static {
    /// Why a read failed (learning then goes on without it).
    type Error: std::error::Error + Send + Sync + 'static;

    /// Whether other gateways (replicas) share this store, so links and
    /// lessons must go through it.
    fn is_shared(&self) -> bool;

    /// The salt hashed terms and session keys are made with (one per store).
    fn learning_salt(&self) -> Result<Vec<u8>, Self::Error>;

    /// What project `project_id` learned, as associations that weigh at
    /// least `least_weight` (the rest has decayed and awaits pruning).
    fn learned(&self, project_id: i64, least_weight: f64) -> Result<Vec<Association>, Self::Error>;

    /// The newest remembered queries of `project_id` (at most
    /// [`crate::retention::TOTAL`]) that weigh at least `least_weight`.
    fn meanings(&self, project_id: i64, least_weight: f64) -> Result<Vec<Remembered>, Self::Error>;

    /// The newest `limit` discoveries of `session` in `project_id` since
    /// `since` (unix milliseconds).
    fn links(&self, project_id: i64, session: &str, since: i64, limit: usize) -> Result<Vec<Link>, Self::Error>;

    /// Queues the pruning of `project_id`'s learning under `least_weight`,
    /// and of remembered queries past the newest [`crate::retention::TOTAL`].
    /// Never waits: when the writer is behind, the next load prunes.
    fn prune_learning(&self, project_id: i64, least_weight: f64);

    /// Queues a use to learn from; waits if the writer is behind. Kept once
    /// per claimant and tool when it names one.
    fn learn(&self, lesson: Use) -> impl Future<Output = ()> + Send;

    /// Queues `link`, so an execute on another replica can follow it.
    fn link(&self, link: Link) -> impl Future<Output = ()> + Send;
}
