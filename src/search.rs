//! Tool search: which tools fit a query, among those a caller may see.
//!
//! Two [`SearchProvider`]s, chosen per project (`projects.optimization`):
//! [`bm25`] (local, always available) and [`cloud`] (a remote
//! `POST /catalog/search` that falls back to BM25 on any failure).

pub mod bm25;
pub mod cloud;

pub use bm25::Error;

use crate::catalog::View;

/// A query: one or more phrasings of the need, plus optional background.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The model's phrasings; a tool matching several ranks higher.
    pub queries: Vec<String>,
    /// Background text: weak evidence.
    pub context: Option<String>,
    /// How many results at most.
    pub limit: usize,
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
}

/// A way of ranking the tools of a view.
pub trait SearchProvider {
    /// Ranks the tools of `view` for `request`, best first. An error means
    /// this provider could not answer (the caller may fall back).
    fn search(&self, view: &View, request: &Request) -> impl Future<Output = Result<Vec<Ranked>, String>> + Send;
}

/// The local BM25F provider over the snapshot's index.
#[derive(Debug, Clone, Copy, Default)]
pub struct Bm25;

impl SearchProvider for Bm25 {
    async fn search(&self, view: &View, request: &Request) -> Result<Vec<Ranked>, String> {
        Ok(view.search(request))
    }
}
