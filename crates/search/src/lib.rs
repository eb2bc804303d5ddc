//! The search engines, which know tools only as documents: [`bm25`] (a
//! BM25F index, tantivy), [`semantic`] (the local embedding model and tool
//! vectors) and [`cloud`] (a remote `POST /catalog/search` client); what a
//! project's use teaches comes in as a `learning::Prior`. Which tools a caller
//! may see, and how the engines' scores are blended and fused for it, is
//! the gateway's `rank` module's business.

pub mod bm25;
pub mod cloud;
pub mod semantic;

pub use bm25::Error;

/// A query: one or more phrasings of the need, plus optional background.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The model's phrasings; a tool matching several ranks higher.
    pub queries: Vec<String>,
    /// Background text: weak evidence.
    pub context: Option<String>,
    /// How many results at most.
    pub limit: usize,
    /// What the project's use taught, blended into local rankings.
    pub prior: Option<learning::Prior>,
}

/// One tool a provider picked.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    /// `server:tool`, always inside the caller's view.
    pub key: String,
    /// 0..1.
    pub relevance: f32,
    /// Why it was picked (matched terms and fields, or the provider's reason).
    pub explanation: Option<String>,
    /// Which of the request's queries found it (its best, after fusion).
    pub query: usize,
}
