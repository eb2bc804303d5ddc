//! `discover_filter` with `mock: true` (seed 001's input schema): a fixed
//! answer of sample people, rendered as a real one is, so that a host's
//! cards can be tried without an Index account. Nothing is sent to Index
//! and nothing is created on anyone's profile.

use super::protocol::{Filtered, Match};
use super::vibecheck::{Status, VibeCheck};

/// Said first in the summary of a sample answer.
pub(super) const NOTE: &str = "Sample answer (mock: true): nothing was sent to Index. ";

/// The sample people, as `/discover/filter` answers.
const PEOPLE: &str = r#"{
  "results": [
    { "user": { "id": "5a3c1e2b-0000-4000-8000-000000000001", "name": "Ada Example", "email": null, "avatar": null,
                "intro": "Builds analytical engines; looking for a poet of science" },
      "totalStake": 12.5,
      "intents": [
        { "intent": { "id": "5a3c1e2b-0000-4000-8000-0000000000a1", "payload": "Looking for a co-founder for a robotics startup",
                      "summary": "Co-founder for a robotics startup", "createdAt": "2026-11-20T10:00:00.000Z" },
          "totalStake": 7.5, "reasonings": ["Both work on robots"] },
        { "intent": { "id": "5a3c1e2b-0000-4000-8000-0000000000a2", "payload": "Writing about the poetry of science",
                      "summary": null, "createdAt": "2026-11-21T10:00:00.000Z" },
          "totalStake": 5, "reasonings": [] }
      ] },
    { "user": { "id": "5a3c1e2b-0000-4000-8000-000000000002", "name": "Grace Sample", "email": null, "avatar": null,
                "intro": "Compilers, and teaching them" },
      "totalStake": 8,
      "intents": [
        { "intent": { "id": "5a3c1e2b-0000-4000-8000-0000000000a3", "payload": "Mentoring people new to compilers",
                      "summary": "Compiler mentoring", "createdAt": "2026-11-22T10:00:00.000Z" },
          "totalStake": 8, "reasonings": [] }
      ] }
  ],
  "pagination": { "page": 1, "limit": 50, "hasNext": false, "hasPrev": false },
  "filters": {}
}"#;

/// The sample matches; every page past the first is empty.
pub(super) fn filtered(page: u64) -> Filtered {
    let mut filtered: Filtered = serde_json::from_str(PEOPLE).expect("the sample is a /discover/filter answer");
    filtered.pagination.page = page;
    filtered.pagination.has_prev = page > 1;
    if page > 1 {
        filtered.results.clear();
    }
    filtered
}

/// A VibeCheck for each sample match.
pub(super) fn vibechecks(results: &[Match]) -> Vec<VibeCheck> {
    results
        .iter()
        .map(|m| VibeCheck {
            target_user_id: m.user.id.clone(),
            synthesis: format!(
                "You and {} could start on this together (a sample synthesis).",
                m.user.name
            ),
            character_limit: None,
            status: Status::Ok,
        })
        .collect()
}
