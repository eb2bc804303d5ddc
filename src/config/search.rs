//! `[search]`'s validated sections: the local embedding model and the cloud service.

use std::path::PathBuf;
use std::time::Duration;

/// The folder `mcp-gateway model install` fills by default, beside the config.
pub const DEFAULT_MODEL_DIR: &str = "data/models/all-MiniLM-L6-v2";

/// Where tool embeddings are cached by default, beside the config.
pub const DEFAULT_CACHE_PATH: &str = "data/embeddings.db";

/// Validated `[search.semantic]`.
#[derive(Debug, Clone, PartialEq)]
pub struct SemanticConfig {
    /// A sentence-transformers style folder: config.json, tokenizer.json, model.safetensors.
    pub model_dir: PathBuf,
    /// The embeddings cache (SQLite).
    pub cache_path: PathBuf,
    /// Fetch the model in the background when it is missing.
    pub auto_install: bool,
}

/// `[search.cloud]`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct CloudConfig {
    /// Base URL; the endpoint is `{url}/catalog/search`.
    pub url: String,
    /// Bearer token, if the service wants one.
    pub token: Option<String>,
    /// Per-request timeout.
    pub timeout: Duration,
}
