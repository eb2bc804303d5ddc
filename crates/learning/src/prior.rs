//! A project's learned prior as one discovery reads it: the term prior's
//! boosts and the memory of meanings' pulls, each explained and weighed by
//! its evidence, and the rule by which a ranking places what they lift.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use int8_bert::QueryVector;

use crate::meanings::{self, Blend, Meanings, combine};
use crate::terms::{Learned, TermKeys, explain};

/// A project's learned prior as one discovery reads it.
#[derive(Debug, Clone)]
pub struct Prior {
    /// The project's associations (the gateway adds to them as calls succeed).
    pub learned: Arc<RwLock<Learned>>,
    /// The project's memory of meanings, when kept (`[search.learning] meanings`).
    pub meanings: Option<Arc<RwLock<Meanings>>>,
    /// How meanings pull.
    pub blend: Blend,
    /// How its terms are keyed.
    pub keys: TermKeys,
    /// Unix time of the discovery.
    pub now: i64,
}

impl Prior {
    /// Boosts for a query of analyzed `terms`, by tool, each with its
    /// explanation (naming the term as the query wrote it).
    pub fn boosts(&self, terms: &[String]) -> HashMap<String, (Lift, String)> {
        let keys = self.keys.keys(terms);
        let learned = self.learned.read().unwrap_or_else(|p| p.into_inner());
        learned
            .boosts(&keys, self.now)
            .into_iter()
            .map(|b| {
                let why = explain(b.uses, &terms[b.term]);
                (b.tool, (Lift::new(b.boost, b.uses, self.blend.evidence), why))
            })
            .collect()
    }

    /// Pulls of the remembered meanings toward tools, for a query embedded
    /// as the unit vector `query`, by tool, each with its explanation.
    pub fn pulls(&self, query: &[f32]) -> HashMap<String, (Lift, String)> {
        let Some(meanings) = &self.meanings else {
            return HashMap::new();
        };
        let meanings = meanings.read().unwrap_or_else(|p| p.into_inner());
        if meanings.is_empty() {
            return HashMap::new();
        }
        meanings
            .pulls(&QueryVector::new(query), self.now, &self.blend)
            .into_iter()
            .map(|p| {
                let why = meanings::explain(p.uses);
                (p.tool, (Lift::new(p.boost, p.uses, self.blend.evidence), why))
            })
            .collect()
    }
}

/// A tool's learned lift for one query (0..[`crate::terms::CAP`]): as
/// learned, and as far as its evidence carries it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Lift {
    /// As learned: one use may already reach the cap.
    pub full: f32,
    /// Weighed by its evidence ([`trusted`]): what may take first place.
    pub trusted: f32,
}

impl Lift {
    /// A lift of `full` from `uses` (decayed), against `evidence` pseudo-uses.
    pub fn new(full: f32, uses: f64, evidence: f64) -> Self {
        Self {
            full,
            trusted: trusted(full, uses, evidence),
        }
    }

    /// The term prior's lift and the meanings' added, never past the cap ([`combine`]).
    pub fn plus(self, other: Lift) -> Self {
        Self {
            full: combine(self.full, other.full),
            trusted: combine(self.trusted, other.trusted),
        }
    }
}

/// One candidate as a ranking scores it: its relevance lifted by the full
/// [`Lift`], and by the trusted one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored<T> {
    /// Relevance with the full lift.
    pub full: f32,
    /// Relevance with the trusted lift.
    pub trusted: f32,
    /// What is ranked.
    pub item: T,
}

/// `scored` best first, the best `keep`, each with the relevance it shows.
///
/// Evidence guards first place only: it goes to the best trusted score, so
/// one wrong run (or one careless caller) does not overturn a clearly better
/// match. The rest follow by the full lift, so a hint still brings a tool
/// into view below it; none shows more relevance than the first. `tie`
/// orders equal scores, so the cut never depends on a hash map's order.
pub fn order<T>(mut scored: Vec<Scored<T>>, keep: usize, tie: impl Fn(&T, &T) -> Ordering) -> Vec<(f32, T)> {
    let best = |a: &Scored<T>, b: &Scored<T>, by: fn(&Scored<T>) -> f32| {
        by(b).total_cmp(&by(a)).then_with(|| tie(&a.item, &b.item))
    };
    let first = (0..scored.len()).min_by(|&a, &b| best(&scored[a], &scored[b], |s| s.trusted));
    let Some(first) = first.filter(|_| keep > 0) else {
        return Vec::new();
    };
    let first = scored.swap_remove(first);
    let rest = keep - 1;
    let by_full = |a: &Scored<T>, b: &Scored<T>| best(a, b, |s| s.full);
    if rest < scored.len() {
        if rest > 0 {
            scored.select_nth_unstable_by(rest - 1, by_full);
        }
        scored.truncate(rest);
    }
    scored.sort_by(by_full);
    // A trusted lift is never more than the full one.
    let top = first.full;
    std::iter::once((top, first.item))
        .chain(scored.into_iter().map(|s| (s.full.min(top), s.item)))
        .collect()
}

/// A learned `lift` as far as its evidence carries it: `uses` (decayed)
/// against `evidence` pseudo-uses. One use lifts a sixth as much as a
/// well-worn association (with the default 5), so one wrong run, or one
/// careless caller, does not overturn a clearly better match; repeated,
/// consistent use grows it toward the full lift.
pub(crate) fn trusted(lift: f32, uses: f64, evidence: f64) -> f32 {
    if evidence <= 0.0 {
        return lift;
    }
    lift * (uses / (uses + evidence)) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scored(full: f32, trusted: f32, item: u32) -> Scored<u32> {
        Scored { full, trusted, item }
    }

    fn ordered(scored: Vec<Scored<u32>>, keep: usize) -> Vec<(f32, u32)> {
        order(scored, keep, |a, b| a.cmp(b))
    }

    #[test]
    fn without_lifts_the_order_is_by_relevance_then_the_tie() {
        let plain = |r, i| scored(r, r, i);
        let got = ordered(vec![plain(0.2, 3), plain(0.5, 1), plain(0.2, 0), plain(0.9, 2)], 3);
        assert_eq!(got, vec![(0.9, 2), (0.5, 1), (0.2, 0)]);
        assert!(ordered(vec![plain(0.4, 1)], 0).is_empty());
        assert!(ordered(Vec::new(), 5).is_empty());
    }

    /// A tool one use lifted past the best match comes second, not first, and
    /// shows no more relevance than the first; evidence lets it take first.
    #[test]
    fn evidence_guards_first_place_and_a_hint_lifts_below_it() {
        let right = scored(0.6, 0.6, 0);
        let hinted = scored(0.8, 0.3, 1);
        let other = scored(0.5, 0.5, 2);
        assert_eq!(
            ordered(vec![other, hinted, right], 3),
            vec![(0.6, 0), (0.6, 1), (0.5, 2)]
        );
        assert_eq!(ordered(vec![other, hinted, right], 1), vec![(0.6, 0)]);
        let earned = scored(0.8, 0.7, 1);
        assert_eq!(
            ordered(vec![other, earned, right], 3),
            vec![(0.8, 1), (0.6, 0), (0.5, 2)]
        );
    }

    #[test]
    fn one_use_is_a_hint_and_repeated_use_earns_the_lift() {
        assert_eq!(trusted(0.4, 1.0, 0.0), 0.4, "no evidence asked: as learned");
        let once = trusted(0.4, 1.0, 3.0);
        assert!((once - 0.1).abs() < 1e-6, "{once}");
        let often = trusted(0.4, 30.0, 3.0);
        assert!(often > 0.36 && often < 0.4, "{often}");
        assert!(trusted(0.4, 2.0, 3.0) > once && trusted(0.4, 2.0, 3.0) < often);
    }

    fn terms(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    const NOW: i64 = 1_767_225_600 + 100 * 86_400;

    #[test]
    fn hashed_terms_keep_no_text_but_still_match() {
        let hashed = TermKeys::Hashed(Arc::from(&b"salt"[..]));
        let k = hashed.key("deploy");
        assert_eq!(k.len(), 32);
        assert!(!k.contains("deploy"));
        assert_eq!(k, hashed.key("deploy"));
        assert_ne!(k, TermKeys::Hashed(Arc::from(&b"other"[..])).key("deploy"));
        let mut l = Learned::default();
        l.record(&hashed.keys(&terms("deploy")), "k8s:apply", NOW);
        let prior = Prior {
            learned: Arc::new(RwLock::new(l)),
            meanings: None,
            blend: Blend::default(),
            keys: hashed,
            now: NOW,
        };
        let (boost, why) = &prior.boosts(&terms("deploy")).remove("k8s:apply").unwrap();
        assert!(boost.full > 0.0 && boost.trusted < boost.full, "{boost:?}");
        assert_eq!(why, "used once for 'deploy'");
    }
}
