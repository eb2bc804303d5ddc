//! The learning service, at run time: each session's recent discoveries, so
//! a `tool_execute` can be linked to the `tool_discovery` that found its
//! tool; each project's term prior ([`crate::terms`]) and memory of meanings
//! ([`crate::meanings`]), loaded through [`LearningStore`] once per access
//! generation and taught as executes succeed.
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

use config::LearningConfig;
use int8_bert::QueryVector;
use vocab::text::normalise_query;

use crate::meanings::{self, Blend, Meanings};
use crate::prior::Prior;
use crate::retention::LINK_WINDOW;
use crate::store::{LearningStore, Link, Remembered, Use};
use crate::terms::{Learned, TermKeys, weight_of_use};

/// Discoveries remembered per session: an agent may search a few times
/// before it runs what one of them found.
const RECENT: usize = 4;
/// Tools one session teaches at most (a session past it is a script, not an agent).
const TAUGHT_PER_SESSION: usize = 256;
/// Sessions remembered at most; past this the stale ones go, then all.
const MAX_SESSIONS: usize = 10_000;
/// On a store replicas share, how old a project's loaded prior may grow
/// before it is read again: what the other replicas taught arrives by then.
const SHARED_REFRESH: Duration = Duration::from_secs(30);

/// Whose learning a call reads and teaches: the caller's project, and the
/// access generation its credential was checked at (a reset moves it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scope {
    /// The caller's project.
    pub project_id: i64,
    /// The access generation the caller was admitted at.
    pub generation: i64,
}

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
    vector: QueryVector,
}

/// A discovery as linked through the store (`discovery_links.asked`).
#[derive(Debug, Serialize, Deserialize)]
struct Linked {
    terms: Vec<Vec<String>>,
    keys: Vec<String>,
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
}

/// One session, as learning follows it.
#[derive(Default)]
struct Session {
    /// Its recent discoveries, oldest first.
    recent: VecDeque<Found>,
    /// The tools it taught: a session teaches a tool once, so one agent
    /// running the same tool again and again is one use, not many.
    taught: HashSet<String>,
}

/// One project's associations and meanings, and the access generation and
/// time they were read at.
struct Loaded {
    generation: i64,
    at: Instant,
    memory: Held,
}

/// A project's learning, held in memory.
#[derive(Clone)]
struct Held {
    learned: Arc<RwLock<Learned>>,
    meanings: Arc<RwLock<Meanings>>,
}

/// The learning service of one gateway, over the store `S`.
pub struct Learning<S> {
    store: Arc<S>,
    config: LearningConfig,
    keys: TermKeys,
    /// Salts session keys before they reach the store.
    salt: Arc<[u8]>,
    blend: Blend,
    /// Per project, what it learned, as loaded and taught since.
    projects: Mutex<HashMap<i64, Loaded>>,
    sessions: Mutex<HashMap<String, Session>>,
    /// Unix seconds now (a fixed time in replays, so they repeat exactly).
    clock: fn() -> i64,
}

impl<S> std::fmt::Debug for Learning<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Learning").field("config", &self.config).finish()
    }
}

impl<S: LearningStore> Learning<S> {
    /// Learning over `store`, as `config` says.
    pub fn new(store: Arc<S>, config: LearningConfig) -> Result<Self, S::Error> {
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
    pub fn prior(&self, scope: Scope) -> Option<Prior> {
        if !self.config.enabled {
            return None;
        }
        let memory = match self.memory(scope) {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(project = scope.project_id, error = %e, "learned prior unavailable; searching without it");
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
    fn memory(&self, scope: Scope) -> Result<Held, S::Error> {
        let Scope { project_id, generation } = scope;
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
                remembered.load(&m.tool_key, m.query_key, &m.vector, m.weight, m.touched);
            }
        }
        self.store.prune_learning(project_id, least);
        let memory = Held {
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
        vocab::text::hex(&digest[..16])
    }

    /// Remembers a discovery of `session` (what it `asked`, and its answer:
    /// toolKeys with the query that found each), here and in the store for
    /// the other replicas; returns what its audit row records.
    pub async fn discovered(
        &self,
        session: &str,
        scope: Scope,
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
            project_id: scope.project_id,
            at: Instant::now(),
            millis: unix_millis(),
            queries,
            meanings,
            results,
        };
        // Only a store replicas share is worth the write: on SQLite this gateway is alone.
        let link = self.store.is_shared().then(|| self.link(session, &found)).flatten();
        {
            let mut sessions = self.sessions.lock().expect("sessions lock");
            if sessions.len() >= MAX_SESSIONS && !sessions.contains_key(session) {
                sessions.retain(|_, s| s.recent.back().is_some_and(|f| f.at.elapsed() < LINK_WINDOW));
                if sessions.len() >= MAX_SESSIONS {
                    sessions.clear();
                }
            }
            let recent = &mut sessions.entry(session.to_string()).or_default().recent;
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
    /// or a salted hash).
    fn meaning(&self, query: &str, vector: &[f32]) -> Meaning {
        Meaning {
            key: self.keys.key(&normalise_query(query)),
            vector: QueryVector::new(vector),
        }
    }

    /// The store's row of discovery `found` of `session`, for executes on other replicas.
    fn link(&self, session: &str, found: &Found) -> Option<Link> {
        let with_meaning: Option<Vec<&Meaning>> = found.meanings.iter().map(Option::as_ref).collect();
        let with_meaning = with_meaning.filter(|m| !m.is_empty());
        let asked = Linked {
            terms: found.queries.clone(),
            keys: with_meaning.iter().flatten().map(|m| m.key.clone()).collect(),
        };
        Some(Link {
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
    fn found(link: Link) -> Option<Found> {
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
        })
    }

    /// Links an execute of `tool_key` to the newest discovery of `session`
    /// (same project, within the window) that answered it: on a shared
    /// store, whichever replica answered it. When the call
    /// `succeeded`, that discovery's query teaches the project its terms and
    /// its meaning: once per tool and session, whichever replica the execute
    /// reached, so how far a lesson lifts grows with the sessions that agree
    /// ([`crate::prior`]). A failed or refused call teaches nothing.
    pub async fn executed(&self, session: &str, scope: Scope, tool_key: &str, succeeded: bool) -> Trail {
        if !self.config.enabled {
            return Trail::default();
        }
        let answered = |f: &Found| {
            f.project_id == scope.project_id
                && f.at.elapsed() < LINK_WINDOW
                && f.results.iter().any(|(k, _)| k == tool_key)
        };
        if self.store.is_shared() {
            self.follow_replicas(session, scope);
        }
        let (follows, lesson) = {
            let mut sessions = self.sessions.lock().expect("sessions lock");
            let Some(state) = sessions.get_mut(session) else {
                return Trail::default();
            };
            let Some(found) = state.recent.iter().rev().find(|f| answered(f)) else {
                return Trail::default();
            };
            let rank = found
                .results
                .iter()
                .position(|(k, _)| k == tool_key)
                .expect("found above");
            let query = found.results[rank].1;
            let first = state.taught.len() < TAUGHT_PER_SESSION && !state.taught.contains(tool_key);
            let lesson = (succeeded && first)
                .then(|| {
                    let terms = found.queries.get(query).cloned().unwrap_or_default();
                    let meaning = found.meanings.get(query).cloned().flatten();
                    (!terms.is_empty() || meaning.is_some()).then_some((terms, meaning))
                })
                .flatten();
            let follows = (found.request_id.clone(), rank as u32 + 1);
            if lesson.is_some() {
                state.taught.insert(tool_key.to_string());
            }
            (follows, lesson)
        };
        if let Some((terms, meaning)) = lesson {
            // Replicas claim a lesson in the store by the session's key; alone, the session's own record suffices.
            let claim = self.store.is_shared().then(|| self.session_key(session));
            self.teach(scope, tool_key, claim, terms, meaning).await;
        }
        Trail {
            follows: Some(follows),
            ..Trail::default()
        }
    }

    /// Adds to `session`'s recent discoveries those other replicas (or this
    /// one before a restart) linked in the store, newest last: an execute
    /// follows the newest discovery that answered its tool, wherever it ran.
    fn follow_replicas(&self, session: &str, scope: Scope) {
        let since = unix_millis() - LINK_WINDOW.as_millis() as i64;
        let links = match self
            .store
            .links(scope.project_id, &self.session_key(session), since, RECENT)
        {
            Ok(links) => links,
            Err(e) => {
                tracing::warn!(project = scope.project_id, error = %e, "discovery links unavailable; this replica's own are followed");
                return;
            }
        };
        let mut sessions = self.sessions.lock().expect("sessions lock");
        let recent = &mut sessions.entry(session.to_string()).or_default().recent;
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
    /// once per `claim`, the session's key, and tool).
    async fn teach(
        &self,
        scope: Scope,
        tool_key: &str,
        claim: Option<String>,
        terms: Vec<String>,
        meaning: Option<Meaning>,
    ) {
        let at = (self.clock)();
        let weight = weight_of_use(at);
        if let Ok(memory) = self.memory(scope) {
            memory
                .learned
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .record(&terms, tool_key, at);
            if let Some(m) = &meaning {
                memory.meanings.write().unwrap_or_else(|p| p.into_inner()).record(
                    tool_key,
                    m.key.clone(),
                    &m.vector,
                    at,
                );
            }
        }
        self.store
            .learn(Use {
                project_id: scope.project_id,
                terms,
                tool_key: tool_key.to_string(),
                weight,
                claim,
                meaning: meaning.map(|m| Remembered {
                    tool_key: tool_key.to_string(),
                    query_key: m.key,
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
