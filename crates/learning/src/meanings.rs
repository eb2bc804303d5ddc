//! Learning what past requests meant: a project's memory of the queries
//! that found the tools it then ran (their embeddings, by tool), and the
//! pull a new query feels from the remembered ones it resembles. The term
//! prior ([`crate::terms`]) counts a query's words; this remembers its
//! meaning, so "what's the weather like tomorrow" finds the tool "forecast
//! for Berlin" taught, with no word in common.
//!
//! Pure: the store keeps the rows, [`crate::Learning`] teaches and loads,
//! and the ranking (the gateway's `rank::local`) blends the pulls in.

use std::collections::HashMap;
use std::sync::Arc;

use int8_bert::{QueryVector, Vectors};

use crate::retention::{PER_TOOL, TOTAL};
use crate::terms::{CAP, weight_of_use};

/// A remembered query whose (decayed) uses fall under this is forgotten:
/// one use, after about four half-lives (four months).
pub(crate) const MIN_USES: f64 = 0.05;

/// The blend, set once on the replayed history itself (`eval --replay
/// --tune-meanings`: 72 settings, each scored by how often a replayed call
/// that rephrases a need an earlier call taught found its tool in the top
/// 5; see docs/src/search.md), never on the held-out half.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Blend {
    /// Similarity under which a remembered query does not pull at all.
    pub floor: f32,
    /// Nearest remembered queries that vote.
    pub neighbours: usize,
    /// Pseudo-votes shared by no tool: one close query pulls less than several.
    pub smoothing: f64,
    /// The most the meaning pull moves a relevance toward 1.
    pub cap: f32,
    /// Pseudo-uses a learned lift must outweigh to take first place, for
    /// the term prior and the meanings alike ([`crate::prior::trusted`],
    /// [`crate::order`]): one use is a hint, and a lift reaches first place
    /// with its full size only through repeated use.
    pub evidence: f64,
}

impl Default for Blend {
    fn default() -> Self {
        Self {
            floor: 0.3,
            neighbours: 4,
            smoothing: 0.05,
            cap: CAP,
            evidence: EVIDENCE,
        }
    }
}

/// See [`Blend::evidence`]; set with the blend, on the replayed calls alone.
pub const EVIDENCE: f64 = 5.0;

/// One remembered query of one tool.
#[derive(Debug, Clone)]
struct Slot {
    tool: Arc<str>,
    /// The query as it is keyed: its normalised text, or a salted hash of it.
    key: String,
    /// Sum of [`weight_of_use`] over its uses (decay applied on reading).
    weight: f64,
    /// Order of last use: the newest are kept.
    touched: i64,
}

/// What one project's use taught about meanings: remembered queries by tool,
/// their embeddings in one int8 matrix a discovery scans.
#[derive(Debug, Default)]
pub struct Meanings {
    vectors: Vectors,
    slots: Vec<Slot>,
    at: HashMap<(Arc<str>, String), usize>,
    per_tool: HashMap<Arc<str>, usize>,
    newest: i64,
}

/// The pull of past meanings toward one tool, for one query.
#[derive(Debug, Clone, PartialEq)]
pub struct Pull {
    /// `server:tool`.
    pub tool: String,
    /// 0..[`Blend::cap`].
    pub boost: f32,
    /// Decayed uses of the tool's remembered queries among the neighbours.
    pub uses: f64,
}

impl Meanings {
    /// Remembered queries held.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Bytes held, roughly (vectors, keys, maps).
    pub fn heap_bytes(&self) -> usize {
        let slots: usize = self
            .slots
            .iter()
            .map(|s| std::mem::size_of::<Slot>() + s.key.capacity())
            .sum();
        // The key map holds an Arc and a copy of each key, plus hashing overhead.
        let map: usize = self.slots.iter().map(|s| 48 + s.key.len()).sum();
        self.vectors.heap_bytes() + slots + map + self.per_tool.len() * 48
    }

    /// Adds a row as the store kept it (loading): `vector` as
    /// [`QueryVector::to_bytes`] made it, `weight` the sum of
    /// [`weight_of_use`] over its uses, `touched` its order of last use.
    /// Rows beyond the caps, or of another vector length, are skipped.
    pub fn load(&mut self, tool: &str, key: String, vector: &[u8], weight: f64, touched: i64) {
        let Some(vector) = QueryVector::from_bytes(vector) else {
            return;
        };
        self.put(tool, key, &vector, weight, touched);
    }

    /// One successful use of `tool` after a query keyed `key` (meaning
    /// `vector`) at unix time `at`.
    pub fn record(&mut self, tool: &str, key: String, vector: &QueryVector, at: i64) {
        let touched = self.newest + 1;
        self.put(tool, key, vector, weight_of_use(at), touched);
    }

    fn put(&mut self, tool: &str, key: String, vector: &QueryVector, weight: f64, touched: i64) {
        self.newest = self.newest.max(touched);
        let tool: Arc<str> = match self.per_tool.get_key_value(tool) {
            Some((t, _)) => t.clone(),
            None => tool.into(),
        };
        if let Some(&i) = self.at.get(&(tool.clone(), key.clone())) {
            let slot = &mut self.slots[i];
            slot.weight += weight;
            slot.touched = slot.touched.max(touched);
            return;
        }
        if !self.vectors.push(vector) {
            return;
        }
        self.at.insert((tool.clone(), key.clone()), self.slots.len());
        *self.per_tool.entry(tool.clone()).or_default() += 1;
        self.slots.push(Slot {
            tool: tool.clone(),
            key,
            weight,
            touched,
        });
        if self.per_tool[&tool] > PER_TOOL {
            self.evict(|s| *s.tool == *tool);
        }
        if self.slots.len() > TOTAL {
            self.evict(|_| true);
        }
    }

    /// Drops the least recently used slot among those `which` picks.
    fn evict(&mut self, which: impl Fn(&Slot) -> bool) {
        let Some(i) = (0..self.slots.len())
            .filter(|&i| which(&self.slots[i]))
            .min_by_key(|&i| self.slots[i].touched)
        else {
            return;
        };
        let gone = self.slots.swap_remove(i);
        self.vectors.swap_remove(i as u32);
        self.at.remove(&(gone.tool.clone(), gone.key));
        if let Some(moved) = self.slots.get(i) {
            self.at.insert((moved.tool.clone(), moved.key.clone()), i);
        }
        match self.per_tool.get_mut(&gone.tool) {
            Some(n) if *n > 1 => *n -= 1,
            _ => {
                self.per_tool.remove(&gone.tool);
            }
        }
    }

    /// The tools past meanings pull a query meaning `query` toward,
    /// strongest first. The `blend.neighbours` remembered queries nearest to
    /// it vote, each for its tool, with its decayed uses times its closeness
    /// above the floor; a tool's pull is its share of the votes, smoothed by
    /// pseudo-votes for none: close phrasings that agree pull, a loose
    /// resemblance or a phrasing taught to many tools pulls little.
    pub fn pulls(&self, query: &QueryVector, now: i64, blend: &Blend) -> Vec<Pull> {
        if self.slots.is_empty() || blend.neighbours == 0 {
            return Vec::new();
        }
        let mut near: Vec<(f32, usize)> = (0..self.slots.len())
            .filter_map(|i| {
                let s = self.vectors.cosine(i as u32, query);
                (s > blend.floor).then_some((s, i))
            })
            .collect();
        if near.len() > blend.neighbours {
            near.select_nth_unstable_by(blend.neighbours - 1, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            near.truncate(blend.neighbours);
        }
        near.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let decay = decay(now);
        // Per tool: (votes, uses).
        let mut by_tool: HashMap<&str, (f64, f64)> = HashMap::new();
        let mut all = blend.smoothing;
        for &(s, i) in &near {
            let slot = &self.slots[i];
            let closeness = closeness(s, blend.floor);
            let uses = slot.weight * decay;
            let vote = uses * f64::from(closeness);
            all += vote;
            let e = by_tool.entry(&slot.tool).or_insert((0.0, 0.0));
            e.0 += vote;
            e.1 += uses;
        }
        let mut out: Vec<Pull> = by_tool
            .into_iter()
            .map(|(tool, (votes, uses))| Pull {
                tool: tool.to_string(),
                boost: blend.cap * (votes / all) as f32,
                uses,
            })
            .collect();
        out.sort_by(|a, b| b.boost.total_cmp(&a.boost).then_with(|| a.tool.cmp(&b.tool)));
        out
    }
}

/// How far above `floor` a similarity is, as 0..1.
fn closeness(similarity: f32, floor: f32) -> f32 {
    ((similarity - floor) / (1.0 - floor)).clamp(0.0, 1.0)
}

/// Weight to uses as of unix time `now` (see [`crate::terms`]).
fn decay(now: i64) -> f64 {
    1.0 / weight_of_use(now)
}

/// The least weight a kept row may have at unix time `now`: rows under it
/// have decayed past [`MIN_USES`] and are pruned. The term prior uses it too.
pub fn least_weight(now: i64) -> f64 {
    MIN_USES * weight_of_use(now)
}

/// "asked like this 7 times": what was learned, never the words it was
/// learned from. They were another caller's (issue #71): a password in
/// plain words, a name, or an instruction written for a model would reach
/// every later caller's model.
pub fn explain(uses: f64) -> String {
    match uses.round().max(1.0) as u64 {
        1 => "asked like this once".to_string(),
        n => format!("asked like this {n} times"),
    }
}

/// The combined learned lift of a tool: the term prior's and the meaning
/// pull's, added, never past [`CAP`] (so a new tool that fits the words well
/// is still never buried, see `terms::a_new_tool_that_fits_well_is_never_buried`).
pub fn combine(term: f32, meaning: f32) -> f32 {
    (term + meaning).min(CAP)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terms::{HALF_LIFE_SECS, boosted};

    const NOW: i64 = 1_767_225_600 + 100 * 86_400;

    /// A unit vector near `axis` (0..8), `tilt` of the way toward axis 7.
    fn v(axis: usize, tilt: f32) -> QueryVector {
        let mut x = [0f32; 8];
        x[axis] = 1.0 - tilt;
        x[7] += tilt;
        let n = x.iter().map(|a| a * a).sum::<f32>().sqrt();
        QueryVector::new(&x.map(|a| a / n))
    }

    fn teach(m: &mut Meanings, tool: &str, key: &str, vector: &QueryVector, times: usize) {
        for _ in 0..times {
            m.record(tool, key.into(), vector, NOW);
        }
    }

    #[test]
    fn nothing_remembered_pulls_nothing_and_unlike_queries_pull_nothing() {
        let blend = Blend::default();
        assert!(Meanings::default().pulls(&v(0, 0.0), NOW, &blend).is_empty());
        let mut m = Meanings::default();
        teach(&mut m, "weather:forecast", "forecast for berlin", &v(0, 0.0), 1);
        assert!(m.pulls(&v(1, 0.0), NOW, &blend).is_empty(), "orthogonal");
    }

    #[test]
    fn a_close_phrasing_pulls_and_repeats_pull_harder_within_the_cap() {
        let blend = Blend::default();
        let mut m = Meanings::default();
        teach(&mut m, "weather:forecast", "forecast for berlin", &v(0, 0.0), 1);
        let once = m.pulls(&v(0, 0.2), NOW, &blend);
        assert_eq!(once[0].tool, "weather:forecast");
        assert!(once[0].boost > 0.0);
        teach(&mut m, "weather:forecast", "forecast for berlin", &v(0, 0.0), 6);
        assert_eq!(m.len(), 1, "the same query is one row, used 7 times");
        let seven = &m.pulls(&v(0, 0.2), NOW, &blend)[0];
        assert!(seven.boost > once[0].boost && seven.boost <= blend.cap, "{seven:?}");
        assert_eq!(explain(seven.uses), "asked like this 7 times");
        assert_eq!(explain(1.0), "asked like this once");
        // Closer pulls harder.
        let far = &m.pulls(&v(0, 0.4), NOW, &blend)[0];
        assert!(far.boost < seven.boost, "{far:?} vs {seven:?}");
    }

    #[test]
    fn a_phrasing_taught_to_many_tools_pulls_each_weakly() {
        let blend = Blend::default();
        let mut m = Meanings::default();
        for tool in ["fs:read", "fs:write", "fs:move", "fs:stat"] {
            teach(&mut m, tool, "a file", &v(2, 0.0), 3);
        }
        teach(&mut m, "k8s:apply", "deploy", &v(3, 0.0), 3);
        let spread = m.pulls(&v(2, 0.0), NOW, &blend)[0].boost;
        let focused = m.pulls(&v(3, 0.0), NOW, &blend)[0].boost;
        assert!(focused > 2.0 * spread, "{focused} vs {spread}");
    }

    #[test]
    fn old_meanings_fade() {
        let blend = Blend::default();
        let mut m = Meanings::default();
        m.record("old:tool", "a".into(), &v(0, 0.0), NOW - 120 * 86_400);
        m.record("old:tool", "a".into(), &v(0, 0.0), NOW - 120 * 86_400);
        m.record("new:tool", "b".into(), &v(0, 0.01), NOW);
        let p = m.pulls(&v(0, 0.0), NOW, &blend);
        assert_eq!(p[0].tool, "new:tool", "{p:?}");
        assert!((p[1].uses - 2.0 / 16.0).abs() < 1e-6, "four half-lives: {}", p[1].uses);
        assert!(
            least_weight(NOW) > weight_of_use(NOW - 200 * 86_400),
            "a single use of 200 days ago is pruned"
        );
        let lifetime = -MIN_USES.log2() * HALF_LIFE_SECS / 86_400.0;
        assert!(
            (lifetime - 129.7).abs() < 0.5,
            "an unused query lasts about four months: {lifetime}"
        );
    }

    #[test]
    fn the_memory_keeps_the_newest_per_tool_and_in_all() {
        let mut m = Meanings::default();
        for i in 0..PER_TOOL + 5 {
            m.record("a:tool", format!("q{i}"), &v(i % 7, 0.1), NOW);
        }
        assert_eq!(m.len(), PER_TOOL);
        assert!(
            !m.at.contains_key(&(Arc::from("a:tool"), "q0".to_string())),
            "the oldest went"
        );
        assert!(m.at.contains_key(&(Arc::from("a:tool"), format!("q{}", PER_TOOL + 4))));
        // Use keeps a query: q5 used again outlives q6.
        m.record("a:tool", "q5".into(), &v(0, 0.1), NOW);
        m.record("a:tool", "fresh".into(), &v(0, 0.1), NOW);
        assert!(m.at.contains_key(&(Arc::from("a:tool"), "q5".to_string())));
        assert!(!m.at.contains_key(&(Arc::from("a:tool"), "q6".to_string())));
        for t in 0..TOTAL / PER_TOOL + 2 {
            for i in 0..PER_TOOL {
                m.record(&format!("s:t{t}"), format!("q{i}"), &v(i % 7, 0.1), NOW);
            }
        }
        assert_eq!(m.len(), TOTAL);
        assert!(
            !m.per_tool.contains_key("a:tool"),
            "the least recently used tool went first"
        );
        // Every index entry points at its own slot.
        for (i, s) in m.slots.iter().enumerate() {
            assert_eq!(m.at[&(s.tool.clone(), s.key.clone())], i);
        }
        let bytes = m.heap_bytes();
        assert!(bytes > TOTAL * (8 + 4) && bytes < TOTAL * 400, "8 dimensions: {bytes}");
    }

    /// However often a phrasing was used for a tool, a new tool that fits
    /// the query well (relevance 0.6) still ranks above the familiar one
    /// that the words and meaning alone found poorly (0.1): both pulls
    /// together stay within the term prior's cap.
    #[test]
    fn a_new_tool_that_fits_well_is_never_buried() {
        let blend = Blend::default();
        let mut m = Meanings::default();
        teach(&mut m, "old:deploy", "deploy", &v(0, 0.0), 1000);
        let pull = m.pulls(&v(0, 0.0), NOW, &blend)[0].boost;
        assert!(pull <= CAP);
        assert!(boosted(0.1, combine(CAP, pull)) < 0.6);
        assert_eq!(combine(0.1, 0.2), 0.3);
    }

    #[test]
    fn rows_load_as_they_were_kept() {
        let mut m = Meanings::default();
        let weight = weight_of_use(NOW) * 3.0;
        m.load("w:f", "k".into(), &v(0, 0.0).to_bytes(), weight, 9);
        m.load("w:f", "k2".into(), &[1, 2], weight, 9);
        assert_eq!(m.len(), 1);
        let p = &m.pulls(&v(0, 0.0), NOW, &Blend::default())[0];
        assert_eq!(explain(p.uses), "asked like this 3 times");
        m.record("w:f", "new".into(), &v(1, 0.0), NOW);
        assert_eq!(m.slots[1].touched, 10, "after the newest loaded");
    }
}
