//! Learning from use, at run time: each session's recent discoveries, so a
//! `tool_execute` can be linked to the `tool_discovery` that found its tool;
//! each project's learned prior ([`search::learning`]: query terms) and
//! memory of meanings ([`search::meanings`]: query embeddings), loaded from
//! the store once per access generation and taught as executes succeed.
//!
//! A project only ever reads and teaches its own prior: sessions are keyed
//! per caller, and a link is made only within one project. A discovery is
//! also linked through the store, so an execute that reaches another
//! replica (round-robin, stateless clients) teaches as well.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::auth::Caller;
use crate::config::{LINK_WINDOW, LearningConfig};
use crate::search::learning::{Learned, Prior, TermKeys, weight_of_use};
use crate::search::meanings::{self, Blend, Meanings};
use crate::search::semantic::{QueryVector, normalise_query};
use crate::store::{self, Store};

/// Discoveries remembered per session: an agent may search a few times
/// before it runs what one of them found.
const RECENT: usize = 4;
/// Sessions remembered at most; past this the stale ones go, then all.
const MAX_SESSIONS: usize = 10_000;
/// On a store replicas share, how old a project's loaded prior may grow
/// before it is read again: what the other replicas taught arrives by then.
const SHARED_REFRESH: Duration = Duration::from_secs(30);

/// What the audit row of a meta-tool call records about learning.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trail {
    /// A discovery's query terms as stored, JSON: one array per query.
    pub query_terms: Option<String>,
    /// A discovery's answered toolKeys, JSON.
    pub ranked_keys: Option<String>,
    /// An execute's discovery (request id) and its tool's rank there.
    pub follows: Option<(String, u32)>,
}

/// What one discovery asked, as learning takes it.
#[derive(Debug, Clone, Default)]
pub struct Asked {
    /// Each query as the caller wrote it.
    pub queries: Vec<String>,
    /// Each query's analyzed terms.
    pub terms: Vec<Vec<String>>,
    /// Each query's embedding, as hybrid search computed it; empty when no
    /// model ranked (BM25), and then no meaning is remembered.
    pub vectors: Vec<Arc<[f32]>>,
}

/// One query's meaning, as a lesson keeps it.
#[derive(Debug, Clone)]
struct Meaning {
    key: String,
    text: Option<String>,
    vector: QueryVector,
}

/// A discovery as linked through the store (`discovery_links.asked`).
#[derive(Debug, Serialize, Deserialize)]
struct Linked {
    terms: Vec<Vec<String>>,
    keys: Vec<String>,
    texts: Option<Vec<String>>,
}

/// One discovery, as a later execute may follow it.
struct Found {
    request_id: String,
    project_id: i64,
    at: Instant,
    /// Unix milliseconds, to order discoveries of several replicas.
    millis: i64,
    /// Stored term keys, one list per query.
    queries: Vec<Vec<String>>,
    /// Each query's meaning, when it had one.
    meanings: Vec<Option<Meaning>>,
    /// Answered toolKeys, best first, with the query that found each.
    results: Vec<(String, usize)>,
    /// Tools already learned from this discovery (once each).
    taught: HashSet<String>,
}

/// One project's associations and meanings, and the access generation and
/// time they were read at.
struct Loaded {
    generation: i64,
    at: Instant,
    memory: Memory,
}

/// A project's learning in memory.
#[derive(Clone)]
struct Memory {
    learned: Arc<RwLock<Learned>>,
    meanings: Arc<RwLock<Meanings>>,
}

/// The learning service of one gateway.
pub struct Learning {
    store: Arc<Store>,
    config: LearningConfig,
    keys: TermKeys,
    /// Salts session keys before they reach the store.
    salt: Arc<[u8]>,
    blend: Blend,
    /// Per project, what it learned, as loaded and taught since.
    projects: Mutex<HashMap<i64, Loaded>>,
    sessions: Mutex<HashMap<String, VecDeque<Found>>>,
    /// Unix seconds now (a fixed time in replays, so they repeat exactly).
    clock: fn() -> i64,
}

impl std::fmt::Debug for Learning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Learning").field("config", &self.config).finish()
    }
}

impl Learning {
    /// Learning over `store`, as `config` says.
    pub fn new(store: Arc<Store>, config: LearningConfig) -> Result<Self, store::Error> {
        let salt: Arc<[u8]> = store.learning_salt()?.into();
        let keys = if config.hash_terms {
            TermKeys::Hashed(salt.clone())
        } else {
            TermKeys::Text
        };
        Ok(Self {
            store,
            config,
            keys,
            salt,
            blend: Blend::default(),
            projects: Mutex::default(),
            sessions: Mutex::default(),
            clock: unix_now,
        })
    }

    /// The same service reading time from `clock` (unix seconds).
    pub fn with_clock(self, clock: fn() -> i64) -> Self {
        Self { clock, ..self }
    }

    /// The same service blending meanings by `blend` (for tuning).
    pub fn with_blend(self, blend: Blend) -> Self {
        Self { blend, ..self }
    }

    /// Whether discovery blends in what was learned.
    pub fn enabled(&self) -> bool {
        self.config.enabled
    }

    /// Whether discoveries should hand their query vectors over (see [`Asked`]).
    pub fn wants_meanings(&self) -> bool {
        self.config.enabled && self.config.meanings
    }

    /// The caller's project's prior for one discovery; `None` when learning
    /// is off or the store cannot be read (search goes on without it).
    pub fn prior(&self, caller: &Caller) -> Option<Prior> {
        if !self.config.enabled {
            return None;
        }
        let memory = match self.memory(caller.project.id, caller.generation) {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(project = caller.project.id, error = %e, "learned prior unavailable; searching without it");
                return None;
            }
        };
        Some(Prior {
            learned: memory.learned,
            meanings: self.config.meanings.then_some(memory.meanings),
            blend: self.blend,
            keys: self.keys.clone(),
            now: (self.clock)(),
        })
    }

    /// The project's associations and meanings, read from the store when
    /// this gateway has none, the access generation moved (a reset from any
    /// process), or, on a shared store, they are older than
    /// [`SHARED_REFRESH`]. Each read skips what decayed and has it pruned.
    fn memory(&self, project_id: i64, generation: i64) -> Result<Memory, store::Error> {
        if let Some(loaded) = self.projects.lock().expect("learning lock").get(&project_id)
            && loaded.generation == generation
            && (!self.store.is_shared() || loaded.at.elapsed() < SHARED_REFRESH)
        {
            return Ok(loaded.memory.clone());
        }
        let least = meanings::least_weight((self.clock)());
        let mut learned = Learned::default();
        for a in self.store.learned(project_id, least)? {
            learned.add(&a.term, &a.tool_key, a.weight);
        }
        let mut remembered = Meanings::default();
        if self.config.meanings {
            for m in self.store.meanings(project_id, least)? {
                remembered.load(&m.tool_key, m.query_key, m.query, &m.vector, m.weight, m.touched);
            }
        }
        self.store.prune_learning(project_id, least);
        let memory = Memory {
            learned: Arc::new(RwLock::new(learned)),
            meanings: Arc::new(RwLock::new(remembered)),
        };
        self.projects.lock().expect("learning lock").insert(
            project_id,
            Loaded {
                generation,
                at: Instant::now(),
                memory: memory.clone(),
            },
        );
        Ok(memory)
    }

    /// The store's key of a session: salted, so no session id or subject is kept.
    fn session_key(&self, session: &str) -> String {
        let digest = Sha256::new()
            .chain_update(&self.salt)
            .chain_update(b"session\0")
            .chain_update(session.as_bytes())
            .finalize();
        crate::text::hex(&digest[..16])
    }

    /// Remembers a discovery of `session` (what it `asked`, and its answer:
    /// toolKeys with the query that found each), here and in the store for
    /// the other replicas; returns what its audit row records.
    pub async fn discovered(
        &self,
        session: &str,
        caller: &Caller,
        request_id: &str,
        asked: &Asked,
        results: Vec<(String, usize)>,
    ) -> Trail {
        if !self.config.enabled {
            return Trail::default();
        }
        let queries: Vec<Vec<String>> = asked.terms.iter().map(|t| self.keys.keys(t)).collect();
        let ranked: Vec<&String> = results.iter().map(|(k, _)| k).collect();
        let trail = Trail {
            query_terms: serde_json::to_string(&queries).ok(),
            ranked_keys: serde_json::to_string(&ranked).ok(),
            follows: None,
        };
        let meanings: Vec<Option<Meaning>> = if self.config.meanings && asked.vectors.len() == asked.queries.len() {
            asked
                .queries
                .iter()
                .zip(&asked.vectors)
                .map(|(q, v)| Some(self.meaning(q, v)))
                .collect()
        } else {
            vec![None; queries.len()]
        };
        let found = Found {
            request_id: request_id.to_string(),
            project_id: caller.project.id,
            at: Instant::now(),
            millis: unix_millis(),
            queries,
            meanings,
            results,
            taught: HashSet::new(),
        };
        // Only a store replicas share is worth the write: on SQLite this gateway is alone.
        let link = self.store.is_shared().then(|| self.link(session, &found)).flatten();
        {
            let mut sessions = self.sessions.lock().expect("sessions lock");
            if sessions.len() >= MAX_SESSIONS && !sessions.contains_key(session) {
                sessions.retain(|_, found| found.back().is_some_and(|f| f.at.elapsed() < LINK_WINDOW));
                if sessions.len() >= MAX_SESSIONS {
                    sessions.clear();
                }
            }
            let recent = sessions.entry(session.to_string()).or_default();
            if recent.len() == RECENT {
                recent.pop_front();
            }
            recent.push_back(found);
        }
        if let Some(link) = link {
            self.store.link(link).await;
        }
        trail
    }

    /// `query`'s meaning as a lesson keeps it: keyed like its terms (text,
    /// or a salted hash), its text only when terms are kept as text.
    fn meaning(&self, query: &str, vector: &[f32]) -> Meaning {
        Meaning {
            key: self.keys.key(&normalise_query(query)),
            text: matches!(self.keys, TermKeys::Text).then(|| meanings::kept_text(query)),
            vector: QueryVector::new(vector),
        }
    }

    /// The store's row of discovery `found` of `session`, for executes on other replicas.
    fn link(&self, session: &str, found: &Found) -> Option<store::Link> {
        let with_meaning: Option<Vec<&Meaning>> = found.meanings.iter().map(Option::as_ref).collect();
        let with_meaning = with_meaning.filter(|m| !m.is_empty());
        let asked = Linked {
            terms: found.queries.clone(),
            keys: with_meaning.iter().flatten().map(|m| m.key.clone()).collect(),
            texts: with_meaning
                .as_ref()
                .filter(|_| matches!(self.keys, TermKeys::Text))
                .map(|m| m.iter().map(|m| m.text.clone().unwrap_or_default()).collect()),
        };
        Some(store::Link {
            request_id: found.request_id.clone(),
            project_id: found.project_id,
            session: self.session_key(session),
            at: found.millis,
            asked: serde_json::to_string(&asked).ok()?,
            results: serde_json::to_string(&found.results).ok()?,
            vectors: with_meaning.map(|m| m.iter().flat_map(|m| m.vector.to_bytes()).collect()),
        })
    }

    /// A discovery read back from its store row.
    fn found(link: store::Link) -> Option<Found> {
        let asked: Linked = serde_json::from_str(&link.asked).ok()?;
        let results: Vec<(String, usize)> = serde_json::from_str(&link.results).ok()?;
        let mut meanings = vec![None; asked.terms.len()];
        if let Some(bytes) = &link.vectors
            && !asked.keys.is_empty()
            && asked.keys.len() == meanings.len()
            && bytes.len() % asked.keys.len() == 0
        {
            let row = bytes.len() / asked.keys.len();
            for (i, (key, chunk)) in asked.keys.iter().zip(bytes.chunks(row)).enumerate() {
                meanings[i] = QueryVector::from_bytes(chunk).map(|vector| Meaning {
                    key: key.clone(),
                    text: asked.texts.as_ref().and_then(|t| t.get(i)).cloned(),
                    vector,
                });
            }
        }
        Some(Found {
            request_id: link.request_id,
            project_id: link.project_id,
            at: Instant::now(),
            millis: link.at,
            queries: asked.terms,
            meanings,
            results,
            taught: HashSet::new(),
        })
    }

    /// Links an execute of `tool_key` to the newest discovery of `session`
    /// (same project, within the window) that answered it: on a shared
    /// store, whichever replica answered it. When the call
    /// `succeeded`, that discovery's query teaches the project its terms and
    /// its meaning: once per tool and discovery, whichever replica the
    /// execute reached. A failed or refused call teaches nothing.
    pub async fn executed(&self, session: &str, caller: &Caller, tool_key: &str, succeeded: bool) -> Trail {
        if !self.config.enabled {
            return Trail::default();
        }
        let answered = |f: &Found| {
            f.project_id == caller.project.id
                && f.at.elapsed() < LINK_WINDOW
                && f.results.iter().any(|(k, _)| k == tool_key)
        };
        if self.store.is_shared() {
            self.follow_replicas(session, caller);
        }
        let (follows, lesson) = {
            let mut sessions = self.sessions.lock().expect("sessions lock");
            let Some(found) = sessions
                .get_mut(session)
                .and_then(|recent| recent.iter_mut().rev().find(|f| answered(f)))
            else {
                return Trail::default();
            };
            let rank = found
                .results
                .iter()
                .position(|(k, _)| k == tool_key)
                .expect("found above");
            let query = found.results[rank].1;
            let lesson = (succeeded && found.taught.insert(tool_key.to_string()))
                .then(|| {
                    let terms = found.queries.get(query).cloned().unwrap_or_default();
                    let meaning = found.meanings.get(query).cloned().flatten();
                    (!terms.is_empty() || meaning.is_some()).then_some((terms, meaning))
                })
                .flatten();
            ((found.request_id.clone(), rank as u32 + 1), lesson)
        };
        if let Some((terms, meaning)) = lesson {
            self.teach(caller, tool_key, &follows.0, terms, meaning).await;
        }
        Trail {
            follows: Some(follows),
            ..Trail::default()
        }
    }

    /// Adds to `session`'s recent discoveries those other replicas (or this
    /// one before a restart) linked in the store, newest last: an execute
    /// follows the newest discovery that answered its tool, wherever it ran.
    fn follow_replicas(&self, session: &str, caller: &Caller) {
        let since = unix_millis() - LINK_WINDOW.as_millis() as i64;
        let links = match self
            .store
            .links(caller.project.id, &self.session_key(session), since, RECENT)
        {
            Ok(links) => links,
            Err(e) => {
                tracing::warn!(project = caller.project.id, error = %e, "discovery links unavailable; this replica's own are followed");
                return;
            }
        };
        let mut sessions = self.sessions.lock().expect("sessions lock");
        let recent = sessions.entry(session.to_string()).or_default();
        for found in links.into_iter().filter_map(Self::found) {
            if !recent.iter().any(|f| f.request_id == found.request_id) {
                recent.push_back(found);
            }
        }
        recent.make_contiguous().sort_by_key(|f| f.millis);
        while recent.len() > RECENT {
            recent.pop_front();
        }
    }

    /// Records one lesson here and queues it to the store (which keeps it
    /// once per discovery and tool).
    async fn teach(
        &self,
        caller: &Caller,
        tool_key: &str,
        discovery: &str,
        terms: Vec<String>,
        meaning: Option<Meaning>,
    ) {
        let at = (self.clock)();
        let weight = weight_of_use(at);
        if let Ok(memory) = self.memory(caller.project.id, caller.generation) {
            memory
                .learned
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .record(&terms, tool_key, at);
            if let Some(m) = &meaning {
                memory.meanings.write().unwrap_or_else(|p| p.into_inner()).record(
                    tool_key,
                    m.key.clone(),
                    m.text.clone(),
                    &m.vector,
                    at,
                );
            }
        }
        self.store
            .learn(store::Use {
                project_id: caller.project.id,
                terms,
                tool_key: tool_key.to_string(),
                weight,
                // Replicas claim a lesson in the store; alone, the session's own record suffices.
                discovery: self.store.is_shared().then(|| discovery.to_string()),
                meaning: meaning.map(|m| store::Meaning {
                    tool_key: tool_key.to_string(),
                    query_key: m.key,
                    query: m.text,
                    vector: m.vector.to_bytes(),
                    weight,
                    touched: 0,
                }),
            })
            .await;
    }
}

/// Unix milliseconds: links are ordered by them (several discoveries a second are common).
fn unix_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::{Grants, Search};

    fn caller(store: &Store, project: &str) -> Caller {
        let p = match store.project(project).unwrap() {
            Some(p) => p,
            None => store.create_project(project, Some(Search::Hybrid)).unwrap(),
        };
        Caller {
            project: p,
            token_id: None,
            grants: Arc::new(Grants::default()),
            credential: None,
            subject: None,
            issuer: None,
            generation: store.access_generation().unwrap(),
        }
    }

    fn terms(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    /// A discovery of `queries` answered by BM25 (no vectors).
    fn asked(queries: &[&str]) -> Asked {
        Asked {
            queries: queries.iter().map(|q| q.to_string()).collect(),
            terms: queries.iter().map(|q| terms(q)).collect(),
            vectors: Vec::new(),
        }
    }

    fn boost(l: &Learning, c: &Caller, query: &str, tool: &str) -> Option<f32> {
        l.prior(c)?.boosts(&terms(query)).get(tool).map(|b| b.0)
    }

    #[tokio::test]
    async fn a_successful_execute_of_a_found_tool_teaches_its_query() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(&dir.path().join("gw.db")).unwrap());
        let l = Learning::new(store.clone(), LearningConfig::default()).unwrap();
        let a = caller(&store, "a");
        let results = vec![("fs:read".to_string(), 1), ("k8s:apply".to_string(), 0)];
        let trail = l
            .discovered("s1", &a, "d1", &asked(&["deploy", "read file"]), results)
            .await;
        assert_eq!(trail.query_terms.as_deref(), Some(r#"[["deploy"],["read","file"]]"#));
        assert_eq!(trail.ranked_keys.as_deref(), Some(r#"["fs:read","k8s:apply"]"#));

        // Not in the answer: no link. Another session: no link.
        assert_eq!(l.executed("s1", &a, "web:fetch", true).await, Trail::default());
        assert_eq!(l.executed("s2", &a, "k8s:apply", true).await, Trail::default());
        assert_eq!(boost(&l, &a, "deploy", "k8s:apply"), None);

        let trail = l.executed("s1", &a, "k8s:apply", true).await;
        assert_eq!(trail.follows, Some(("d1".to_string(), 2)));
        let once = boost(&l, &a, "deploy", "k8s:apply").expect("learned for its own query");
        assert_eq!(
            boost(&l, &a, "read", "k8s:apply"),
            None,
            "not for the other step's words"
        );
        // The same discovery teaches a tool once.
        l.executed("s1", &a, "k8s:apply", true).await;
        assert_eq!(boost(&l, &a, "deploy", "k8s:apply"), Some(once));
    }

    #[tokio::test]
    async fn a_failed_execute_teaches_nothing_and_projects_stay_apart() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(&dir.path().join("gw.db")).unwrap());
        let l = Learning::new(store.clone(), LearningConfig::default()).unwrap();
        let (a, b) = (caller(&store, "a"), caller(&store, "b"));
        let b = Caller {
            generation: store.access_generation().unwrap(),
            ..b
        };
        let a = Caller {
            generation: b.generation,
            ..a
        };
        l.discovered("s", &a, "d1", &asked(&["deploy"]), vec![("k8s:apply".into(), 0)])
            .await;
        let trail = l.executed("s", &a, "k8s:apply", false).await;
        assert_eq!(trail.follows, Some(("d1".to_string(), 1)), "linked, not learned");
        assert_eq!(boost(&l, &a, "deploy", "k8s:apply"), None);

        // b's execute in a's session key finds no discovery of b's.
        assert_eq!(l.executed("s", &b, "k8s:apply", true).await, Trail::default());
        l.discovered("s", &a, "d2", &asked(&["deploy"]), vec![("k8s:apply".into(), 0)])
            .await;
        l.executed("s", &a, "k8s:apply", true).await;
        assert!(boost(&l, &a, "deploy", "k8s:apply").is_some());
        assert_eq!(boost(&l, &b, "deploy", "k8s:apply"), None, "b never sees a's history");
    }

    #[tokio::test]
    async fn a_reset_from_another_process_applies_at_the_next_discovery() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gw.db");
        let store = Arc::new(Store::open(&path).unwrap());
        let l = Learning::new(store.clone(), LearningConfig::default()).unwrap();
        let a = caller(&store, "a");
        l.discovered("s", &a, "d1", &asked(&["deploy"]), vec![("k8s:apply".into(), 0)])
            .await;
        l.executed("s", &a, "k8s:apply", true).await;
        // Wait for the writer, then forget from a second store handle (another process).
        for _ in 0..100 {
            if !store.learned(a.project.id, 0.0).unwrap().is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Store::open(&path).unwrap().reset_learning("a").unwrap();
        let next = caller(&store, "a");
        assert_eq!(boost(&l, &next, "deploy", "k8s:apply"), None);
    }

    #[tokio::test]
    async fn hashed_terms_keep_no_query_text() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(&dir.path().join("gw.db")).unwrap());
        let config = LearningConfig {
            enabled: true,
            hash_terms: true,
            meanings: true,
        };
        let l = Learning::new(store.clone(), config).unwrap();
        let a = caller(&store, "a");
        let with_meaning = Asked {
            vectors: vec![unit(0)],
            ..asked(&["deploy"])
        };
        let trail = l
            .discovered("s", &a, "d1", &with_meaning, vec![("k8s:apply".into(), 0)])
            .await;
        assert!(!trail.query_terms.unwrap().contains("deploy"));
        l.executed("s", &a, "k8s:apply", true).await;
        // The meaning is kept (see docs/src/search.md, privacy), its text is not.
        let (_, why) = l.prior(&a).unwrap().pulls(&unit(0)).remove("k8s:apply").unwrap();
        assert_eq!(why, "asked like this once");
        for _ in 0..100 {
            if !store.meanings(a.project.id, 0.0).unwrap().is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let kept = store.meanings(a.project.id, 0.0).unwrap();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].query, None);
        assert!(!kept[0].query_key.contains("deploy"), "{}", kept[0].query_key);
        let (_, why) = l
            .prior(&a)
            .unwrap()
            .boosts(&terms("deploy"))
            .remove("k8s:apply")
            .unwrap();
        assert_eq!(why, "used once for 'deploy'");
    }

    /// A unit vector along `axis`, a little toward the last axis.
    fn unit(axis: usize) -> Arc<[f32]> {
        let mut v = vec![0f32; 8];
        v[axis] = 0.96;
        v[7] = 0.28;
        v.into()
    }

    #[tokio::test]
    async fn a_taught_meaning_pulls_a_new_phrasing_and_is_explained() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(&dir.path().join("gw.db")).unwrap());
        let l = Learning::new(store.clone(), LearningConfig::default()).unwrap();
        let a = caller(&store, "a");
        let asked = Asked {
            vectors: vec![unit(0)],
            ..asked(&["forecast for Berlin"])
        };
        for i in 0..3 {
            let d = format!("d{i}");
            l.discovered("s", &a, &d, &asked, vec![("weather:forecast".into(), 0)])
                .await;
            l.executed("s", &a, "weather:forecast", true).await;
        }
        let pulls = l.prior(&a).unwrap().pulls(&unit(0));
        let (boost, why) = &pulls["weather:forecast"];
        assert!(*boost > 0.1, "{boost}");
        assert_eq!(why, "asked like this 3 times: 'forecast for Berlin'");
        assert!(l.prior(&a).unwrap().pulls(&unit(1)).is_empty(), "another meaning");
        // Stored, once per discovery, and loaded by a fresh service.
        for _ in 0..100 {
            if store
                .meanings(a.project.id, 0.0)
                .unwrap()
                .first()
                .is_some_and(|m| m.weight > 2.0 * weight_of_use(0))
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let fresh = Learning::new(store.clone(), LearningConfig::default()).unwrap();
        assert_eq!(fresh.prior(&a).unwrap().pulls(&unit(0))["weather:forecast"].1, *why);
        // Reset forgets the meanings too.
        store.reset_learning("a").unwrap();
        assert!(l.prior(&caller(&store, "a")).unwrap().pulls(&unit(0)).is_empty());
    }

    /// Two gateways on one PostgreSQL store: a discovery answered by one is
    /// followed by an execute on the other (same caller, no session id), which
    /// teaches its terms and meaning once, however often the tool runs and
    /// whichever replica runs it.
    #[tokio::test]
    #[ignore = "full tier: needs PostgreSQL (scripts/setup)"]
    async fn an_execute_on_another_replica_follows_the_discovery_through_the_store() {
        let (_dir, at) = crate::store::test_database();
        let (one, two) = (
            Arc::new(Store::open_at(&at).unwrap()),
            Arc::new(Store::open_at(&at).unwrap()),
        );
        let (l1, l2) = (
            Learning::new(one.clone(), LearningConfig::default()).unwrap(),
            Learning::new(two.clone(), LearningConfig::default()).unwrap(),
        );
        let a = caller(&one, "a");
        let asked = Asked {
            vectors: vec![unit(0)],
            ..asked(&["forecast for Berlin"])
        };
        l1.discovered("caller:a", &a, "d1", &asked, vec![("weather:forecast".into(), 0)])
            .await;
        let mut trail = Trail::default();
        for _ in 0..100 {
            trail = l2.executed("caller:a", &a, "weather:forecast", true).await;
            if trail.follows.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(trail.follows, Some(("d1".to_string(), 1)));
        // Again on each replica: taught once.
        l2.executed("caller:a", &a, "weather:forecast", true).await;
        l1.executed("caller:a", &a, "weather:forecast", true).await;
        assert_eq!(
            l2.executed("other", &a, "weather:forecast", true).await,
            Trail::default()
        );
        let (_, why) = l2
            .prior(&a)
            .unwrap()
            .pulls(&unit(0))
            .remove("weather:forecast")
            .unwrap();
        assert_eq!(why, "asked like this once: 'forecast for Berlin'");
        for _ in 0..100 {
            if !one.meanings(a.project.id, 0.0).unwrap().is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // Time for a second lesson to land, were one (wrongly) queued.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let stored = one.meanings(a.project.id, 0.0).unwrap();
        assert_eq!(stored.len(), 1);
        assert!(
            (stored[0].weight / weight_of_use(unix_now()) - 1.0).abs() < 0.01,
            "once: {stored:?}"
        );
        let terms = one.learned(a.project.id, 0.0).unwrap();
        assert_eq!(terms.len(), 3, "forecast, for, berlin: {terms:?}");
        assert!(
            terms
                .iter()
                .all(|t| (t.weight / weight_of_use(unix_now()) - 1.0).abs() < 0.01)
        );
    }
}
