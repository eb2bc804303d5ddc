//! Query embeddings kept for the next time the same words come: an agent
//! asks again and again in one conversation, and a query costs ~4 ms of
//! inference against about a millisecond for the rest of a search.
//!
//! Two generations instead of a linked list: new and reused entries go to
//! the young map; when it is full it becomes the old one and the previous
//! old one is dropped. Least recently used goes first, give or take one
//! generation, with no per-entry bookkeeping.

use std::collections::HashMap;
use std::sync::Arc;

/// A bounded map from normalised query to its unit vector.
#[derive(Debug)]
pub(super) struct QueryCache {
    young: HashMap<String, Arc<[f32]>>,
    old: HashMap<String, Arc<[f32]>>,
    per_generation: usize,
}

impl QueryCache {
    /// Holds between `capacity / 2` and `capacity` queries.
    pub(super) fn new(capacity: usize) -> Self {
        Self {
            young: HashMap::new(),
            old: HashMap::new(),
            per_generation: (capacity / 2).max(1),
        }
    }

    /// The vector of `key` (normalised), if kept; a hit counts as a use.
    pub(super) fn get(&mut self, key: &str) -> Option<Arc<[f32]>> {
        if let Some(v) = self.young.get(key) {
            return Some(v.clone());
        }
        let v = self.old.remove(key)?;
        self.insert(key.to_string(), v.clone());
        Some(v)
    }

    /// Keeps `vector` for `key` (normalised).
    pub(super) fn insert(&mut self, key: String, vector: Arc<[f32]>) {
        if self.young.len() >= self.per_generation {
            self.old = std::mem::take(&mut self.young);
        }
        self.young.insert(key, vector);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: f32) -> Arc<[f32]> {
        Arc::from(vec![x])
    }

    #[test]
    fn recently_used_queries_stay_and_the_rest_go() {
        let mut c = QueryCache::new(4);
        c.insert("a".into(), v(1.0));
        c.insert("b".into(), v(2.0));
        c.insert("c".into(), v(3.0)); // a, b age
        assert_eq!(c.get("a").as_deref(), Some(&[1.0][..])); // a is young again
        c.insert("d".into(), v(4.0)); // c, a age; b is dropped
        assert!(c.get("b").is_none());
        assert!(c.get("a").is_some() && c.get("c").is_some() && c.get("d").is_some());
    }
}
