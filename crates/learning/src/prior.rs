//! A project's learned prior as one discovery reads it: the term prior's
//! boosts and the memory of meanings' pulls, each explained, for the
//! gateway's ranking to blend in.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use int8_bert::QueryVector;

use crate::meanings::{self, Blend, Meanings};
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
    pub fn boosts(&self, terms: &[String]) -> HashMap<String, (f32, String)> {
        let keys = self.keys.keys(terms);
        let learned = self.learned.read().unwrap_or_else(|p| p.into_inner());
        learned
            .boosts(&keys, self.now)
            .into_iter()
            .map(|b| {
                let why = explain(b.uses, &terms[b.term]);
                (b.tool, (trusted(b.boost, b.uses, self.blend.evidence), why))
            })
            .collect()
    }

    /// Pulls of the remembered meanings toward tools, for a query embedded
    /// as the unit vector `query`, by tool, each with its explanation.
    pub fn pulls(&self, query: &[f32]) -> HashMap<String, (f32, String)> {
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
                let why = meanings::explain(p.uses, p.text.as_deref());
                (p.tool, (trusted(p.boost, p.uses, self.blend.evidence), why))
            })
            .collect()
    }
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
        assert!(*boost > 0.0);
        assert_eq!(why, "used once for 'deploy'");
    }
}
