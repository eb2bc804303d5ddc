//! What the gateway kept out of models' context, counted as calls happen.
//!
//! - **Tokens (o200k), per session.** Without the gateway a client lists
//!   every tool its caller may see, once per conversation. With it, the
//!   session lists the two meta-tools and reads each discovery's tools. So a
//!   session's first discovery saves the full listing less the meta-tools
//!   and the tools it returned; each later one costs the tools it returned.
//!   On an exposure that lists tools directly nothing is saved by listing.
//! - **Bytes, per script.** A code-mode script's calls return results into
//!   the script, not the model; what the model reads is the script's answer.
//!
//! Both go on the call's audit row (`mcp-gateway usage`, the console) and
//! to Prometheus.

use std::collections::HashSet;
use std::sync::Mutex;

use super::Found;
use super::meta_tools::meta_tokens;
use crate::auth::Caller;

/// Sessions remembered as credited with their listing; past this the
/// memory starts again (a session may then be credited twice).
const SESSIONS: usize = 10_000;

/// The sessions whose listing a discovery has counted.
#[derive(Debug, Default)]
pub(super) struct Listed(Mutex<HashSet<String>>);

impl Listed {
    /// Whether this is `session`'s first counted discovery (and remembers it).
    fn first(&self, session: &str) -> bool {
        let mut seen = self.0.lock().expect("listed sessions lock");
        if seen.len() >= SESSIONS && !seen.contains(session) {
            seen.clear();
        }
        seen.insert(session.to_string())
    }
}

/// Tokens a discovery saved: `all` (every tool the caller may see, as
/// listed) less `meta` (the two meta-tools) and `returned` (the tools the
/// discovery answered) for a session's first discovery on the meta
/// exposure; less `returned` alone otherwise.
pub(super) fn saved(first_on_meta: bool, all: i64, meta: i64, returned: i64) -> i64 {
    match first_on_meta {
        true => all - meta - returned,
        false => -returned,
    }
}

/// Bytes of tool results a script read (`received`) that its answer
/// (`answered` bytes) did not carry to the model.
pub(super) fn kept(received: u64, answered: u64) -> i64 {
    received.saturating_sub(answered) as i64
}

impl super::Gateway {
    /// Tokens `caller`'s discovery in `session` saved, having `found` these
    /// tools; `None` while the catalog's tokens are still being counted.
    /// Counted on the caller's whole view, whatever `servers` narrowed the
    /// search to, and only for an answer a model reads (not a script's search).
    pub(super) fn discovery_saved(&self, caller: &Caller, session: &str, found: &[Found]) -> Option<i64> {
        let (all, returned) = self
            .catalog
            .view_of(caller)
            .listed_tokens(found.iter().map(|f| f.tool_key.as_str()))?;
        let on_meta = !caller.project.exposure.lists_tools();
        let first = on_meta && self.listed.first(session);
        let tokens = saved(first, all, meta_tokens(), returned);
        telemetry::tokens_saved(&caller.project.name, tokens);
        Some(tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_saves_the_listing_once_and_pays_for_what_it_reads() {
        assert_eq!(saved(true, 40_000, 600, 2_000), 37_400);
        assert_eq!(saved(false, 40_000, 600, 2_000), -2_000);
        let listed = Listed::default();
        assert!(listed.first("s1") && !listed.first("s1") && listed.first("s2"));
        assert_eq!(kept(10_000, 300), 9_700);
        assert_eq!(kept(100, 300), 0, "an answer larger than what it read keeps nothing");
    }
}
