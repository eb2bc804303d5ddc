//! The term prior: which tools a project ran, successfully, after a
//! discovery found them, and for which query terms. Each such run is a
//! positive for every (term, tool) pair of the query that found the tool.
//! Counts decay with time, are smoothed, and add a bounded boost to ranking
//! that the result explains ("used 12 times for 'deploy'").
//!
//! Pure: the store keeps the counts, [`crate::Learning`] links executes to
//! their discoveries, and the gateway's `rank::local` applies the boosts.

use std::collections::HashMap;
use std::sync::Arc;

use sha2::{Digest, Sha256};

/// A use loses half its weight in this time.
pub(crate) const HALF_LIFE_SECS: f64 = 30.0 * 86_400.0;

/// Weights are kept relative to this moment (2026-01-01T00:00:00Z), so adding
/// a use is an addition and decay is applied once, on reading.
const EPOCH: i64 = 1_767_225_600;

/// The most a learned prior moves a tool's relevance toward 1 (see
/// [`boosted`]): a new tool that fits the query well still outranks a
/// familiar one that fits it poorly. Set once, not tuned on the held-out
/// half that `mcp-gateway eval --replay` scores.
pub const CAP: f32 = 0.5;

/// Pseudo-uses shared by the other tools: one use makes a weak association,
/// a dozen a strong one.
const SMOOTHING: f64 = 1.0;

/// The weight of one use at unix time `at`.
pub fn weight_of_use(at: i64) -> f64 {
    2f64.powf((at - EPOCH) as f64 / HALF_LIFE_SECS)
}

/// Weight to uses as of unix time `now`.
fn decay(now: i64) -> f64 {
    2f64.powf(-((now - EPOCH) as f64) / HALF_LIFE_SECS)
}

/// A relevance (0..1) moved toward 1 by `boost` (0..1): stays within 0..1
/// and keeps the order of equal boosts.
pub fn boosted(relevance: f32, boost: f32) -> f32 {
    relevance + boost * (1.0 - relevance)
}

/// What one project's use taught: per query term, the tools run after it.
#[derive(Debug, Default, Clone)]
pub struct Learned {
    by_term: HashMap<String, Term>,
}

#[derive(Debug, Default, Clone)]
struct Term {
    total: f64,
    tools: HashMap<String, f64>,
}

/// The pull of past use toward one tool, for one query.
#[derive(Debug, Clone, PartialEq)]
pub struct Boost {
    /// `server:tool`.
    pub tool: String,
    /// 0..[`CAP`].
    pub boost: f32,
    /// Index, in the query's terms, of the term that pulls hardest.
    pub term: usize,
    /// How many (decayed) uses that term has for the tool.
    pub uses: f64,
}

impl Learned {
    /// Adds `weight` (see [`weight_of_use`]) to (`term`, `tool`).
    pub fn add(&mut self, term: &str, tool: &str, weight: f64) {
        let t = self.by_term.entry(term.to_string()).or_default();
        t.total += weight;
        *t.tools.entry(tool.to_string()).or_default() += weight;
    }

    /// One successful use of `tool` for a query of `terms`, at unix time `at`.
    pub fn record(&mut self, terms: &[String], tool: &str, at: i64) {
        let w = weight_of_use(at);
        for term in terms {
            self.add(term, tool, w);
        }
    }

    /// The tools past use pulls a query of `terms` toward, strongest first.
    /// A tool's pull is the mean over the query's terms of its smoothed share
    /// of each term's uses: terms without history count as none, so a long
    /// query needs several familiar terms, and a term used for many tools
    /// pulls each of them weakly.
    pub fn boosts(&self, terms: &[String], now: i64) -> Vec<Boost> {
        if terms.is_empty() || self.by_term.is_empty() {
            return Vec::new();
        }
        let decay = decay(now);
        let mut pull: HashMap<&str, (f64, usize, f64, f64)> = HashMap::new();
        for (i, term) in terms.iter().enumerate() {
            let Some(t) = self.by_term.get(term) else { continue };
            let total = t.total * decay + SMOOTHING;
            for (tool, w) in &t.tools {
                let uses = w * decay;
                let share = uses / total;
                let e = pull.entry(tool).or_insert((0.0, i, 0.0, uses));
                e.0 += share;
                if share > e.2 {
                    (e.1, e.2, e.3) = (i, share, uses);
                }
            }
        }
        let n = terms.len() as f64;
        let mut out: Vec<Boost> = pull
            .into_iter()
            .map(|(tool, (sum, term, _, uses))| Boost {
                tool: tool.to_string(),
                boost: CAP * (sum / n) as f32,
                term,
                uses,
            })
            .collect();
        out.sort_by(|a, b| b.boost.total_cmp(&a.boost).then_with(|| a.tool.cmp(&b.tool)));
        out
    }
}

/// "used 12 times for 'deploy'".
pub fn explain(uses: f64, term: &str) -> String {
    let n = uses.round().max(1.0) as u64;
    let times = if n == 1 {
        "once".to_string()
    } else {
        format!("{n} times")
    };
    format!("used {times} for '{term}'")
}

/// How query terms are kept: as text, or as salted hashes when the operator
/// wants no query text stored (`[search.learning] terms = "hashed"`).
#[derive(Clone, Default)]
pub enum TermKeys {
    /// The analyzed term itself.
    #[default]
    Text,
    /// The first 16 bytes of SHA-256(salt ‖ term), hex.
    Hashed(Arc<[u8]>),
}

impl std::fmt::Debug for TermKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TermKeys::Text => "Text",
            TermKeys::Hashed(_) => "Hashed",
        })
    }
}

impl TermKeys {
    /// The stored key of `term`.
    pub fn key(&self, term: &str) -> String {
        match self {
            TermKeys::Text => term.to_string(),
            TermKeys::Hashed(salt) => {
                let digest = Sha256::new()
                    .chain_update(salt)
                    .chain_update(term.as_bytes())
                    .finalize();
                vocab::text::hex(&digest[..16])
            }
        }
    }

    /// The stored keys of `terms`, in order.
    pub fn keys(&self, terms: &[String]) -> Vec<String> {
        terms.iter().map(|t| self.key(t)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    const NOW: i64 = EPOCH + 100 * 86_400;

    #[test]
    fn nothing_learned_pulls_nothing() {
        assert!(Learned::default().boosts(&terms("deploy app"), NOW).is_empty());
        let mut l = Learned::default();
        l.record(&terms("deploy"), "k8s:apply", NOW);
        assert!(l.boosts(&[], NOW).is_empty());
        assert!(l.boosts(&terms("weather"), NOW).is_empty());
    }

    #[test]
    fn more_uses_pull_harder_but_never_past_the_cap() {
        let mut l = Learned::default();
        l.record(&terms("deploy"), "k8s:apply", NOW);
        let once = l.boosts(&terms("deploy"), NOW)[0].boost;
        for _ in 0..11 {
            l.record(&terms("deploy"), "k8s:apply", NOW);
        }
        let b = &l.boosts(&terms("deploy"), NOW)[0];
        assert!(b.boost > once && b.boost <= CAP, "{once} < {} <= {CAP}", b.boost);
        assert_eq!(explain(b.uses, "deploy"), "used 12 times for 'deploy'");
        assert_eq!(explain(1.0, "x"), "used once for 'x'");
    }

    #[test]
    fn a_term_used_for_many_tools_pulls_each_weakly() {
        let mut l = Learned::default();
        for tool in ["fs:read", "fs:write", "fs:move", "fs:stat"] {
            for _ in 0..3 {
                l.record(&terms("file"), tool, NOW);
            }
        }
        for _ in 0..3 {
            l.record(&terms("deploy"), "k8s:apply", NOW);
        }
        let spread = l.boosts(&terms("file"), NOW)[0].boost;
        let focused = l.boosts(&terms("deploy"), NOW)[0].boost;
        assert!(focused > 2.0 * spread, "{focused} vs {spread}");
    }

    #[test]
    fn agreeing_terms_pull_harder_than_one() {
        let mut l = Learned::default();
        for _ in 0..5 {
            l.record(&terms("open issue github"), "gh:create_issue", NOW);
            l.record(&terms("list pull github"), "gh:list_prs", NOW);
        }
        let b = l.boosts(&terms("open issue github"), NOW);
        assert_eq!(b[0].tool, "gh:create_issue");
        assert!(b[0].boost > 2.0 * b[1].boost, "{b:?}");
    }

    #[test]
    fn old_uses_fade() {
        let mut l = Learned::default();
        l.record(&terms("deploy"), "old:tool", NOW - 120 * 86_400);
        l.record(&terms("deploy"), "old:tool", NOW - 120 * 86_400);
        l.record(&terms("deploy"), "new:tool", NOW);
        let b = l.boosts(&terms("deploy"), NOW);
        assert_eq!(b[0].tool, "new:tool", "{b:?}");
        let old = b.iter().find(|b| b.tool == "old:tool").unwrap();
        assert!((old.uses - 2.0 / 16.0).abs() < 1e-6, "four half-lives: {}", old.uses);
    }

    /// However often a tool was used for a word, a new tool that fits the
    /// query well (relevance 0.6: right almost every time, README) still
    /// ranks above it when the words alone found it poorly (relevance 0.1).
    #[test]
    fn a_new_tool_that_fits_well_is_never_buried() {
        let mut l = Learned::default();
        for _ in 0..1_000 {
            l.record(&terms("deploy"), "old:deploy", NOW);
        }
        let familiar = &l.boosts(&terms("deploy"), NOW)[0];
        assert!(familiar.uses > 999.0);
        assert!(boosted(0.1, familiar.boost) < 0.6, "{}", boosted(0.1, familiar.boost));
        assert!(boosted(0.0, familiar.boost) <= 0.5);
    }

    #[test]
    fn boosted_relevance_stays_in_range_and_in_order() {
        assert_eq!(boosted(0.0, 0.0), 0.0);
        assert_eq!(boosted(1.0, CAP), 1.0);
        assert!(boosted(0.3, 0.2) > 0.3 && boosted(0.3, 0.2) < 1.0);
        assert!(boosted(0.6, 0.1) > boosted(0.5, 0.1));
    }
}
