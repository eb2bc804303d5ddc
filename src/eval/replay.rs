//! `mcp-gateway eval --replay`: does learning from use lift search?
//!
//! The tune side of the benchmark (its tasks and steps, and
//! `paraphrases.jsonl`: requests written from each tool's own description,
//! never from the held-out text) is replayed as a project's history: each
//! call is a `tool_discovery`, then, when the right tool was among the
//! answers, a successful `tool_execute` of it, through the gateway's own
//! [`Learning`] over a throwaway store. The held-out tasks are then scored
//! with the prior that history taught, after 0, 10, 100 and 1,000 calls.
//! A run with a failing execute of the wrong tool after every call shows
//! that failures teach nothing.

use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{Asking, Bench, Error, Scores, evaluate_with, rank};
use crate::access::{Grants, Search};
use crate::auth::Caller;
use crate::catalog::View;
use crate::config::LearningConfig;
use crate::learning::Learning;
use crate::rank::SearchProvider;
use crate::store::Store;

/// When every replayed call happens (2026-11-01): one moment, so replays repeat exactly.
const REPLAYED_AT: i64 = 1_793_491_200;

/// The replayed call counts reported.
pub const CHECKPOINTS: [usize; 4] = [0, 10, 100, 1000];

/// One line of `paraphrases.jsonl`.
#[derive(Debug, Clone, Deserialize)]
pub struct Paraphrases {
    /// `server:tool`.
    pub tool: String,
    /// Requests this tool answers, written from its description.
    pub queries: Vec<String>,
}

/// Loads `dir/paraphrases.jsonl`.
pub fn load_paraphrases(dir: &Path) -> Result<Vec<Paraphrases>, Error> {
    super::read_jsonl(&dir.join("paraphrases.jsonl"))
}

/// One replayed call: what the agent asked, and the tool it went on to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The `tool_discovery` query.
    pub query: String,
    /// The right tool.
    pub tool: String,
}

/// The tune-side history, in a fixed shuffled order: tune tasks (their
/// first right tool), tune steps, and the paraphrases.
pub fn history(bench: &Bench, paraphrases: &[Paraphrases]) -> Vec<Call> {
    let mut calls = Vec::new();
    for t in bench.tasks.iter().filter(|t| t.split == "tune") {
        if t.kind == "single" {
            calls.extend(t.relevant.first().map(|tool| Call {
                query: t.query.clone(),
                tool: tool.clone(),
            }));
        } else {
            for (step, right) in t.steps.iter().zip(&t.step_relevant) {
                calls.extend(right.first().map(|tool| Call {
                    query: step.clone(),
                    tool: tool.clone(),
                }));
            }
        }
    }
    for p in paraphrases {
        calls.extend(p.queries.iter().map(|q| Call {
            query: q.clone(),
            tool: p.tool.clone(),
        }));
    }
    shuffle(&mut calls, 0x5eed);
    calls
}

/// Fisher–Yates with SplitMix64: the same order on every machine.
fn shuffle<T>(items: &mut [T], mut seed: u64) {
    let mut next = || {
        seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    for i in (1..items.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        items.swap(i, j);
    }
}

/// Held-out scores after some replayed calls.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Point {
    /// Which search ranked.
    pub search: String,
    /// Calls replayed before scoring.
    pub calls: usize,
    /// Whether a failing execute of the wrong tool followed every call whose top answer was wrong.
    pub with_failures: bool,
    /// Calls whose right tool was found, and so taught.
    pub taught: usize,
    /// Held-out single-tool tasks.
    pub single: Scores,
    /// Held-out multi-step tasks, one query per step.
    pub steps: Scores,
}

/// Replays [`history`] through `provider` and scores the held-out half at
/// each of [`CHECKPOINTS`] (within the history's length).
pub async fn replay(
    name: &str,
    provider: &impl SearchProvider,
    view: &View,
    bench: &Bench,
    history: &[Call],
    with_failures: bool,
) -> Result<Vec<Point>, Error> {
    let scratch = Scratch::new(name)?;
    let learning = Learning::new(scratch.store.clone(), LearningConfig::default())
        .map_err(scratch.fail())?
        .with_clock(|| REPLAYED_AT);
    let caller = scratch.caller()?;
    let (single, multi) = (bench.held_out("single"), bench.held_out("multi"));
    let mut points = Vec::new();
    let mut taught = 0;
    for (i, call) in std::iter::once(None).chain(history.iter().map(Some)).enumerate() {
        if let Some(call) = call {
            let session = format!("replay-{i}");
            let prior = learning.prior(&caller);
            let found = rank(provider, view, vec![call.query.clone()], prior.as_ref()).await;
            let results: Vec<(String, usize)> = found.iter().map(|r| (r.key.clone(), r.query)).collect();
            learning.discovered(&session, &caller, &session, &[view.query_terms(&call.query)], results);
            if with_failures && let Some(top) = found.first().filter(|r| r.key != call.tool) {
                learning.executed(&session, &caller, &top.key, false).await;
            }
            if found.iter().any(|r| r.key == call.tool) {
                learning.executed(&session, &caller, &call.tool, true).await;
                taught += 1;
            }
        }
        let calls = i;
        if CHECKPOINTS.contains(&calls) || calls == history.len() && calls < *CHECKPOINTS.last().expect("checkpoints") {
            let prior = learning.prior(&caller);
            points.push(Point {
                search: name.to_string(),
                calls,
                with_failures,
                taught,
                single: evaluate_with(provider, view, &single, Asking::Whole, prior.as_ref()).await,
                steps: evaluate_with(provider, view, &multi, Asking::Steps, prior.as_ref()).await,
            });
        }
        if calls >= *CHECKPOINTS.last().expect("checkpoints") {
            break;
        }
    }
    Ok(points)
}

/// A throwaway store for one replay, removed afterwards.
struct Scratch {
    store: Arc<Store>,
    path: std::path::PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Result<Self, Error> {
        let path = std::env::temp_dir().join(format!("mcp-gateway-replay-{}-{name}.db", std::process::id()));
        remove(&path);
        let store = Store::open(&path).map_err(|e| Error::Format {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Ok(Self {
            store: Arc::new(store),
            path,
        })
    }

    fn fail(&self) -> impl Fn(crate::store::Error) -> Error + '_ {
        |e| Error::Format {
            path: self.path.display().to_string(),
            message: e.to_string(),
        }
    }

    fn caller(&self) -> Result<Caller, Error> {
        let project = self
            .store
            .create_project("replay", Some(Search::Hybrid))
            .map_err(self.fail())?;
        Ok(Caller {
            project,
            token_id: None,
            grants: Arc::new(Grants::default()),
            credential: None,
            subject: None,
            issuer: None,
            generation: self.store.access_generation().map_err(self.fail())?,
        })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        self.store.close();
        remove(&self.path);
    }
}

fn remove(db: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rank::Bm25;
    use crate::search::bm25::Weights;

    #[test]
    fn the_history_is_the_tune_side_only_in_a_fixed_order() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data");
        let bench = Bench::load(&dir).unwrap();
        let paraphrases = load_paraphrases(&dir).unwrap();
        let calls = history(&bench, &paraphrases);
        assert_eq!(calls, history(&bench, &paraphrases));
        let held_out: Vec<&str> = bench
            .tasks
            .iter()
            .filter(|t| t.split == "holdout")
            .flat_map(|t| std::iter::once(t.query.as_str()).chain(t.steps.iter().map(String::as_str)))
            .collect();
        assert!(calls.iter().all(|c| !held_out.contains(&c.query.as_str())));
        // The paraphrases are no near copy either: none shares 40% of its words with a held-out text.
        for query in paraphrases.iter().flat_map(|p| &p.queries) {
            let near = held_out.iter().find(|h| word_overlap(query, h) >= 0.4);
            assert!(near.is_none(), "{query:?} is close to held-out {near:?}");
        }
        let view = bench.view(Weights::default(), None).unwrap();
        for p in &paraphrases {
            assert!(view.get(&p.tool).is_some(), "unknown tool {}", p.tool);
        }
        assert!(calls.len() >= 1000, "{} calls", calls.len());
    }

    /// Jaccard similarity of two texts' sets of lower-cased words.
    fn word_overlap(a: &str, b: &str) -> f64 {
        let words = |s: &str| -> std::collections::HashSet<String> {
            s.split(|c: char| !c.is_ascii_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_ascii_lowercase)
                .collect()
        };
        let (a, b) = (words(a), words(b));
        let union = a.union(&b).count();
        if union == 0 {
            0.0
        } else {
            a.intersection(&b).count() as f64 / union as f64
        }
    }

    /// Replayed use lifts held-out R@5 with BM25, and failing wrong executes change nothing.
    #[tokio::test]
    async fn replayed_use_lifts_held_out_recall_and_failures_teach_nothing() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data");
        let bench = Bench::load(&dir).unwrap();
        let calls = history(&bench, &load_paraphrases(&dir).unwrap());
        let view = bench.view(Weights::default(), None).unwrap();
        let learned = replay("bm25", &Bm25, &view, &bench, &calls, false).await.unwrap();
        let (before, after) = (&learned[0], learned.last().unwrap());
        assert_eq!((before.calls, after.calls), (0, 1000));
        assert!(
            after.single.recall_at_5 >= before.single.recall_at_5 + 0.05,
            "R@5 {:.3} -> {:.3}",
            before.single.recall_at_5,
            after.single.recall_at_5
        );
        let noisy = replay("bm25", &Bm25, &view, &bench, &calls, true).await.unwrap();
        for (quiet, noisy) in learned.iter().zip(&noisy) {
            assert_eq!(
                (&quiet.single, &quiet.steps),
                (&noisy.single, &noisy.steps),
                "after {} calls",
                quiet.calls
            );
        }
    }
}
