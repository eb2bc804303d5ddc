//! What the store answered about callers, kept while the store's access
//! generation stays the same ([`store::Store::access_generation`]).
//! A request then costs one one-row read instead of the token, project and
//! grant reads, and a revocation or grant change anywhere applies from the
//! next request.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use store::access::{Grants, Project};

/// Tokens remembered at most; past it the cache starts again (a flood of
/// distinct valid tokens costs store reads, never memory).
const MAX_TOKENS: usize = 10_000;
/// How often a token's use is recorded at most (`last_used_at` is for people).
pub(super) const RECORD_USE_EVERY: Duration = Duration::from_secs(60);

/// Callers resolved at one access generation.
#[derive(Debug, Default)]
pub(super) struct Known {
    generation: i64,
    /// Gateway tokens that matched, by the SHA-256 of the whole token.
    tokens: HashMap<[u8; 32], KnownToken>,
    /// Projects by name.
    projects: HashMap<String, Project>,
    /// Grants by project id.
    grants: HashMap<i64, Arc<Grants>>,
}

#[derive(Debug)]
struct KnownToken {
    id: i64,
    project: Project,
    recorded: Instant,
}

/// The key a token is remembered by; the token itself is not kept.
pub(super) fn token_key(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl Known {
    /// Starts over when the store's generation moved past what is known.
    pub(super) fn follow(&mut self, generation: i64) {
        if generation != self.generation {
            *self = Known {
                generation,
                ..Known::default()
            };
        }
    }

    /// The generation what is known was read at.
    pub(super) fn generation(&self) -> i64 {
        self.generation
    }

    /// A remembered token's id and project, and whether its use is due to be
    /// recorded again (then it counts as recorded now).
    pub(super) fn token(&mut self, key: &[u8; 32], now: Instant) -> Option<(i64, Project, bool)> {
        let t = self.tokens.get_mut(key)?;
        let due = now.duration_since(t.recorded) >= RECORD_USE_EVERY;
        if due {
            t.recorded = now;
        }
        Some((t.id, t.project.clone(), due))
    }

    /// Remembers a token the store accepted (its use was just recorded).
    pub(super) fn remember_token(&mut self, key: [u8; 32], id: i64, project: &Project, now: Instant) {
        if self.tokens.len() >= MAX_TOKENS {
            self.tokens.clear();
        }
        let project = project.clone();
        self.tokens.insert(
            key,
            KnownToken {
                id,
                project,
                recorded: now,
            },
        );
    }

    /// A remembered project.
    pub(super) fn project(&self, name: &str) -> Option<Project> {
        self.projects.get(name).cloned()
    }

    /// Remembers a project that exists.
    pub(super) fn remember_project(&mut self, project: &Project) {
        self.projects.insert(project.name.clone(), project.clone());
    }

    /// A project's remembered grants.
    pub(super) fn grants(&self, project_id: i64) -> Option<Arc<Grants>> {
        self.grants.get(&project_id).cloned()
    }

    /// Remembers a project's grants.
    pub(super) fn remember_grants(&mut self, project_id: i64, grants: Arc<Grants>) {
        self.grants.insert(project_id, grants);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(id: i64) -> Project {
        Project {
            id,
            name: format!("p{id}"),
            search: None,
            created_at: String::new(),
            exposure: Default::default(),
            apps: Default::default(),
        }
    }

    #[test]
    fn a_new_generation_forgets_everything() {
        let mut k = Known::default();
        k.follow(3);
        let now = Instant::now();
        k.remember_token(token_key("mgw_1_a"), 1, &project(1), now);
        k.remember_project(&project(1));
        k.remember_grants(1, Arc::default());
        k.follow(3);
        assert!(k.token(&token_key("mgw_1_a"), now).is_some());
        assert!(
            k.token(&token_key("mgw_1_b"), now).is_none(),
            "another token is not known"
        );
        k.follow(4);
        assert_eq!(k.generation(), 4);
        assert!(k.token(&token_key("mgw_1_a"), now).is_none());
        assert!(k.project("p1").is_none() && k.grants(1).is_none());
    }

    #[test]
    fn a_tokens_use_is_due_once_a_minute() {
        let mut k = Known::default();
        let start = Instant::now();
        let key = token_key("mgw_1_a");
        k.remember_token(key, 1, &project(1), start);
        assert!(!k.token(&key, start + Duration::from_secs(59)).unwrap().2);
        assert!(k.token(&key, start + RECORD_USE_EVERY).unwrap().2);
        assert!(!k.token(&key, start + RECORD_USE_EVERY).unwrap().2, "recorded now");
    }
}
