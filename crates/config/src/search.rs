//! `[search]`'s validated sections: the local embedding model and the cloud service.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::{DEFAULT_CLOUD_TIMEOUT, Error, Invalid, interpolate, section};

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

/// `[search]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSearch {
    /// The cloud provider used by projects whose search is `cloud`.
    pub cloud: Option<Spanned<RawCloud>>,
    /// The local embedding model used by projects whose search is `hybrid`.
    pub semantic: Option<Spanned<RawSemantic>>,
    /// Learning from use.
    pub learning: Option<Spanned<RawLearning>>,
}

/// `[search.semantic]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSemantic {
    /// Load the model if it is there (default true).
    pub enabled: Option<bool>,
    /// Model folder, relative to this file (default `data/models/all-MiniLM-L6-v2`).
    pub model_dir: Option<String>,
    /// Embeddings cache, relative to this file (default `data/embeddings.db`).
    pub cache_path: Option<String>,
    /// Fetch the model in the background when it is missing (default true).
    pub auto_install: Option<bool>,
}

/// `[search.learning]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLearning {
    /// Learn from each project's use (default true).
    pub enabled: Option<bool>,
    /// `"text"` (default) or `"hashed"`: how query terms are kept.
    pub terms: Option<Spanned<String>>,
    /// Remember the meaning (embedding) of the queries that taught (default true).
    pub meanings: Option<bool>,
}

/// Validated `[search.learning]`: learning from use (the `learning` crate).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LearningConfig {
    /// Learn from use and blend it into ranking (default true).
    pub enabled: bool,
    /// Keep query terms as salted hashes instead of text.
    pub hash_terms: bool,
    /// Remember the embeddings of the queries that taught, and let new
    /// queries that mean the same pull (default true).
    pub meanings: bool,
}

impl Default for LearningConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            hash_terms: false,
            meanings: true,
        }
    }
}

/// `[search.cloud]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCloud {
    /// Base URL; the gateway calls `{url}/catalog/search`.
    pub url: String,
    /// Bearer token (use `${ENV}`).
    pub token: Option<String>,
    /// Per-request timeout in milliseconds (default 5000); BM25 answers after it.
    pub timeout_ms: Option<u64>,
}

/// `[search]`, validated.
pub(super) struct Sections {
    pub cloud: Option<CloudConfig>,
    pub semantic: Option<SemanticConfig>,
    pub learning: LearningConfig,
}

/// Validates `[search]`; paths are relative to `base`.
pub(super) fn validate(raw: RawSearch, base: &Path, invalid: &impl Invalid) -> Result<Sections, Error> {
    let cloud = match raw.cloud {
        None => None,
        Some(c) => {
            let span = c.span();
            let c = c.into_inner();
            let bad = |key: &str, m: String| invalid(span.clone(), format!("search.cloud.{key}"), m);
            let url = interpolate(&c.url).map_err(|m| bad("url", m))?;
            match url.parse::<::http::Uri>() {
                Ok(u) if matches!(u.scheme_str(), Some("http" | "https")) && u.host().is_some() => {}
                _ => {
                    return Err(bad(
                        "url",
                        format!("'{}' is not an http:// or https:// URL", vocab::mask::url(&url)),
                    ));
                }
            }
            let token = c
                .token
                .map(|t| interpolate(&t))
                .transpose()
                .map_err(|m| bad("token", m))?;
            let timeout = match c.timeout_ms {
                Some(0) => return Err(bad("timeout_ms", "must be at least 1 millisecond".into())),
                Some(ms) => Duration::from_millis(ms),
                None => DEFAULT_CLOUD_TIMEOUT,
            };
            Some(CloudConfig {
                url,
                token: token.filter(|t| !t.is_empty()),
                timeout,
            })
        }
    };

    let (span, semantic) = section(raw.semantic);
    let path = |key: &str, value: Option<String>, default: &str| match value {
        Some(p) => interpolate(&p)
            .map(|p| base.join(p))
            .map_err(|m| invalid(span.clone(), format!("search.semantic.{key}"), m)),
        None => Ok(base.join(default)),
    };
    let semantic = match semantic.enabled {
        Some(false) => None,
        _ => Some(SemanticConfig {
            model_dir: path("model_dir", semantic.model_dir, DEFAULT_MODEL_DIR)?,
            cache_path: path("cache_path", semantic.cache_path, DEFAULT_CACHE_PATH)?,
            auto_install: semantic.auto_install.unwrap_or(true),
        }),
    };

    let (_, learning) = section(raw.learning);
    let hash_terms = match learning.terms {
        None => false,
        Some(t) => match t.get_ref().as_str() {
            "text" => false,
            "hashed" => true,
            other => {
                return Err(invalid(
                    t.span(),
                    "search.learning.terms".into(),
                    format!("must be \"text\" or \"hashed\", not \"{other}\""),
                ));
            }
        },
    };
    let learning = LearningConfig {
        enabled: learning.enabled.unwrap_or(true),
        hash_terms,
        meanings: learning.meanings.unwrap_or(true),
    };

    Ok(Sections {
        cloud,
        semantic,
        learning,
    })
}
