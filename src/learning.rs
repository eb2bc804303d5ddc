//! Learning from use, at run time: each session's recent discoveries, so a
//! `tool_execute` can be linked to the `tool_discovery` that found its tool;
//! each project's learned prior ([`search::learning`]), loaded from the store
//! once per access generation and taught as executes succeed.
//!
//! A project only ever reads and teaches its own prior: sessions are keyed
//! per caller, and a link is made only within one project.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use crate::auth::Caller;
use crate::config::LearningConfig;
use crate::search::learning::{Learned, Prior, TermKeys, weight_of_use};
use crate::store::{self, Store};

/// Discoveries remembered per session: an agent may search a few times
/// before it runs what one of them found.
const RECENT: usize = 4;
/// How long after a discovery an execute still counts as following it.
const LINK_WINDOW: Duration = Duration::from_secs(30 * 60);
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

/// One discovery, as a later execute may follow it.
struct Found {
    request_id: String,
    project_id: i64,
    at: Instant,
    /// Stored term keys, one list per query.
    queries: Vec<Vec<String>>,
    /// Answered toolKeys, best first, with the query that found each.
    results: Vec<(String, usize)>,
    /// Tools already learned from this discovery (once each).
    taught: HashSet<String>,
}

/// One project's associations, and the access generation and time they were read at.
struct Loaded {
    generation: i64,
    at: Instant,
    learned: Arc<RwLock<Learned>>,
}

/// The learning service of one gateway.
pub struct Learning {
    store: Arc<Store>,
    config: LearningConfig,
    keys: TermKeys,
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
        let keys = if config.hash_terms {
            TermKeys::Hashed(store.learning_salt()?.into())
        } else {
            TermKeys::Text
        };
        Ok(Self {
            store,
            config,
            keys,
            projects: Mutex::default(),
            sessions: Mutex::default(),
            clock: unix_now,
        })
    }

    /// The same service reading time from `clock` (unix seconds).
    pub fn with_clock(self, clock: fn() -> i64) -> Self {
        Self { clock, ..self }
    }

    /// Whether discovery blends in what was learned.
    pub fn enabled(&self) -> bool {
        self.config.enabled
    }

    /// The caller's project's prior for one discovery; `None` when learning
    /// is off or the store cannot be read (search goes on without it).
    pub fn prior(&self, caller: &Caller) -> Option<Prior> {
        if !self.config.enabled {
            return None;
        }
        let learned = match self.learned(caller.project.id, caller.generation) {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(project = caller.project.id, error = %e, "learned prior unavailable; searching without it");
                return None;
            }
        };
        Some(Prior {
            learned,
            keys: self.keys.clone(),
            now: (self.clock)(),
        })
    }

    /// The project's associations, read from the store when this gateway has
    /// none, the access generation moved (a reset from any process), or, on a
    /// shared store, they are older than [`SHARED_REFRESH`].
    fn learned(&self, project_id: i64, generation: i64) -> Result<Arc<RwLock<Learned>>, store::Error> {
        if let Some(loaded) = self.projects.lock().expect("learning lock").get(&project_id)
            && loaded.generation == generation
            && (!self.store.is_shared() || loaded.at.elapsed() < SHARED_REFRESH)
        {
            return Ok(loaded.learned.clone());
        }
        let mut learned = Learned::default();
        for a in self.store.learned(project_id)? {
            learned.add(&a.term, &a.tool_key, a.weight);
        }
        let learned = Arc::new(RwLock::new(learned));
        self.projects.lock().expect("learning lock").insert(
            project_id,
            Loaded {
                generation,
                at: Instant::now(),
                learned: learned.clone(),
            },
        );
        Ok(learned)
    }

    /// Remembers a discovery of `session` (its analyzed terms per query, and
    /// its answer: toolKeys with the query that found each); returns what its
    /// audit row records.
    pub fn discovered(
        &self,
        session: &str,
        caller: &Caller,
        request_id: &str,
        terms: &[Vec<String>],
        results: Vec<(String, usize)>,
    ) -> Trail {
        if !self.config.enabled {
            return Trail::default();
        }
        let queries: Vec<Vec<String>> = terms.iter().map(|t| self.keys.keys(t)).collect();
        let trail = Trail {
            query_terms: serde_json::to_string(&queries).ok(),
            ranked_keys: serde_json::to_string(&results.iter().map(|(k, _)| k).collect::<Vec<_>>()).ok(),
            follows: None,
        };
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
        recent.push_back(Found {
            request_id: request_id.to_string(),
            project_id: caller.project.id,
            at: Instant::now(),
            queries,
            results,
            taught: HashSet::new(),
        });
        trail
    }

    /// Links an execute of `tool_key` to the newest discovery of `session`
    /// (same project, within the window) that answered it. When the call
    /// `succeeded`, that discovery's query teaches the project: once per
    /// tool and discovery. A failed or refused call teaches nothing.
    pub async fn executed(&self, session: &str, caller: &Caller, tool_key: &str, succeeded: bool) -> Trail {
        if !self.config.enabled {
            return Trail::default();
        }
        let (follows, lesson) = {
            let mut sessions = self.sessions.lock().expect("sessions lock");
            let Some(found) = sessions.get_mut(session).and_then(|recent| {
                recent.iter_mut().rev().find(|f| {
                    f.project_id == caller.project.id
                        && f.at.elapsed() < LINK_WINDOW
                        && f.results.iter().any(|(k, _)| k == tool_key)
                })
            }) else {
                return Trail::default();
            };
            let rank = found
                .results
                .iter()
                .position(|(k, _)| k == tool_key)
                .expect("found above");
            let query = found.results[rank].1;
            let lesson = (succeeded && found.taught.insert(tool_key.to_string()))
                .then(|| found.queries.get(query).cloned())
                .flatten()
                .filter(|terms| !terms.is_empty());
            ((found.request_id.clone(), rank as u32 + 1), lesson)
        };
        if let Some(terms) = lesson {
            let at = (self.clock)();
            if let Ok(learned) = self.learned(caller.project.id, caller.generation) {
                learned
                    .write()
                    .unwrap_or_else(|p| p.into_inner())
                    .record(&terms, tool_key, at);
            }
            self.store
                .learn(store::Use {
                    project_id: caller.project.id,
                    terms,
                    tool_key: tool_key.to_string(),
                    weight: weight_of_use(at),
                })
                .await;
        }
        Trail {
            follows: Some(follows),
            ..Trail::default()
        }
    }
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
        let trail = l.discovered("s1", &a, "d1", &[terms("deploy"), terms("read file")], results);
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
        l.discovered("s", &a, "d1", &[terms("deploy")], vec![("k8s:apply".into(), 0)]);
        let trail = l.executed("s", &a, "k8s:apply", false).await;
        assert_eq!(trail.follows, Some(("d1".to_string(), 1)), "linked, not learned");
        assert_eq!(boost(&l, &a, "deploy", "k8s:apply"), None);

        // b's execute in a's session key finds no discovery of b's.
        assert_eq!(l.executed("s", &b, "k8s:apply", true).await, Trail::default());
        l.discovered("s", &a, "d2", &[terms("deploy")], vec![("k8s:apply".into(), 0)]);
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
        l.discovered("s", &a, "d1", &[terms("deploy")], vec![("k8s:apply".into(), 0)]);
        l.executed("s", &a, "k8s:apply", true).await;
        // Wait for the writer, then forget from a second store handle (another process).
        for _ in 0..100 {
            if !store.learned(a.project.id).unwrap().is_empty() {
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
        };
        let l = Learning::new(store.clone(), config).unwrap();
        let a = caller(&store, "a");
        let trail = l.discovered("s", &a, "d1", &[terms("deploy")], vec![("k8s:apply".into(), 0)]);
        assert!(!trail.query_terms.unwrap().contains("deploy"));
        l.executed("s", &a, "k8s:apply", true).await;
        let (_, why) = l
            .prior(&a)
            .unwrap()
            .boosts(&terms("deploy"))
            .remove("k8s:apply")
            .unwrap();
        assert_eq!(why, "used once for 'deploy'");
    }
}
