//! The hybrid provider: BM25F blended with the embedding model's cosine
//! similarity, the query embedded while the word half runs.

use std::sync::Arc;

use super::{SearchProvider, local};
use crate::catalog::View;
use search::semantic::{DEFAULT_ALPHA, Semantic};
use search::{Ranked, Request};

/// The hybrid provider: BM25F blended with this model's cosine similarity.
#[derive(Debug, Clone)]
pub struct Hybrid {
    semantic: Arc<Semantic>,
    alpha: f32,
}

impl Hybrid {
    /// Hybrid search with the default blend.
    pub fn new(semantic: Arc<Semantic>) -> Self {
        Self::with_alpha(semantic, DEFAULT_ALPHA)
    }

    /// Hybrid search with `alpha` of BM25 (for tuning).
    pub fn with_alpha(semantic: Arc<Semantic>, alpha: f32) -> Self {
        Self { semantic, alpha }
    }
}

impl SearchProvider for Hybrid {
    async fn search(&self, view: &View, request: &Request) -> Result<Vec<Ranked>, String> {
        let still_computing = || "tool embeddings are still being computed".to_string();
        if !view.has_vectors() {
            return Err(still_computing());
        }
        let kept: Option<Vec<Arc<[f32]>>> = self.semantic.recall_queries(&request.queries).into_iter().collect();
        if let Some(vectors) = kept {
            return local::hybrid(view, request, &vectors, self.alpha).ok_or_else(still_computing);
        }
        let (semantic, queries) = (self.semantic.clone(), request.queries.clone());
        let (sent, embedding) = tokio::sync::oneshot::channel();
        // Straight onto the encoder's pool, where it runs anyway: one hop
        // there and one back (through tokio's blocking pool it was two more).
        rayon::spawn(move || {
            let _ = sent.send(semantic.embed_queries(&queries));
        });
        // The word half needs no vectors: it runs here while the model embeds.
        let lexical = local::hybrid_lexical(view, request);
        let vectors = embedding
            .await
            .map_err(|_| "the embedding thread ended".to_string())?
            .map_err(|e| e.to_string())?;
        local::hybrid_blend(view, request, lexical, &vectors, self.alpha).ok_or_else(still_computing)
    }
}
