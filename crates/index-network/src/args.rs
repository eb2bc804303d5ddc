//! What the Index tools accept. Validation mirrors the Protocol API's rules
//! so that a bad call fails before any network traffic, with every problem
//! listed at once; the intent payload is built the way the prior MCP built it.

use serde::Serialize;
use serde_json::{Map, Value};

use config::index_network::{MAX_CONCURRENCY, MAX_LIMIT, PayloadLimits};
use vocab::text::truncate;
use vocab::validate::Checker;

/// Most IDs accepted per filter field.
pub(super) const MAX_FILTER_ITEMS: usize = 20;
/// Page size when none is given.
pub(super) const DEFAULT_LIMIT: u64 = 50;
/// The `sources[].type` values the Protocol API accepts (`discovery_form` is refused there).
pub(super) const SOURCE_TYPES: [&str; 3] = ["file", "integration", "link"];

/// Conversation input to turn into intents (`extract_intent`, or chaining in `discover_filter`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct IntentInput {
    /// The text to extract intents from.
    pub full_input_text: String,
    /// The user's own words, used as the instruction.
    pub raw_text: Option<String>,
    /// Earlier conversation.
    pub conversation_history: Option<String>,
    /// What the assistant remembers about the user.
    pub user_memory: Option<String>,
}

/// One `sources[]` filter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct Source {
    /// `file`, `integration` or `link`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Its UUID.
    pub id: String,
}

/// A validated `discover_filter` call.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct FilterInput {
    /// Existing intents, deduplicated; empty means "chain from `intent_input`".
    pub intent_ids: Vec<String>,
    /// Only these users.
    pub user_ids: Option<Vec<String>>,
    /// Only these indexes.
    pub index_ids: Option<Vec<String>>,
    /// Only intents from these sources.
    pub sources: Option<Vec<Source>>,
    /// Leave out users already connected (the API's default is true).
    pub exclude_discovered: Option<bool>,
    /// 1-based page.
    pub page: u64,
    /// Results per page.
    pub limit: u64,
    /// Input to chain from when `intent_ids` is empty.
    pub intent_input: Option<IntentInput>,
    /// Forwarded to VibeCheck's options.
    pub character_limit: Option<u64>,
    /// VibeCheck calls in flight; `None` takes the configured default.
    pub concurrency: Option<u64>,
    /// Answer with the sample, sending nothing (seed 001's `mock`).
    pub mock: bool,
}

/// A validated `discover_connections` call.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ConnectionsInput {
    /// What the user is looking for.
    pub text: String,
    /// How many people to return.
    pub max_connections: u64,
}

fn uuids(c: &mut Checker<'_>, key: &str) -> Option<Vec<String>> {
    let value = c.present(key)?;
    let Some(items) = value.as_array() else {
        c.problem(format!("{key}: expected an array of UUID strings"));
        return None;
    };
    if items.len() > MAX_FILTER_ITEMS {
        c.problem(format!(
            "{key}: at most {MAX_FILTER_ITEMS} IDs are accepted, got {}",
            items.len()
        ));
    }
    let mut ids = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match item.as_str() {
            Some(s) if is_uuid(s) => ids.push(s.to_string()),
            _ => c.problem(format!("{key}[{i}]: expected a UUID, got {item}")),
        }
    }
    Some(ids)
}

fn intent_input(c: &mut Checker<'_>, text_required: bool) -> IntentInput {
    let full_input_text = c.string("fullInputText").unwrap_or_default();
    if text_required && full_input_text.trim().is_empty() {
        c.problem("fullInputText: input text is required".into());
    }
    IntentInput {
        full_input_text,
        raw_text: c.string("rawText"),
        conversation_history: c.string("conversationHistory"),
        user_memory: c.string("userMemory"),
    }
}

/// Checks `extract_intent` arguments.
pub(super) fn extract_intent(args: &Map<String, Value>) -> Result<IntentInput, Vec<String>> {
    let mut c = Checker::new(args);
    let input = intent_input(&mut c, true);
    c.finish(input)
}

/// Checks `discover_filter` arguments. With both `intentIds` and
/// `intentInput`, the IDs win and the input is dropped (no chaining).
pub(super) fn discover_filter(args: &Map<String, Value>) -> Result<FilterInput, Vec<String>> {
    let mut c = Checker::new(args);
    let mut intent_ids = uuids(&mut c, "intentIds").unwrap_or_default();
    dedup(&mut intent_ids);
    let user_ids = uuids(&mut c, "userIds");
    let index_ids = uuids(&mut c, "indexIds");
    let sources = sources(&mut c);
    let exclude_discovered = c.boolean("excludeDiscovered");
    let page = c.integer("page", 1, None).unwrap_or(1);
    let limit = c.integer("limit", 1, Some(MAX_LIMIT)).unwrap_or(DEFAULT_LIMIT);
    let intent_input = c.nested("intentInput", |c| intent_input(c, false));
    let vibecheck = c.nested("vibecheck", |c| {
        (
            c.integer("characterLimit", 1, None),
            c.integer("concurrency", 1, Some(MAX_CONCURRENCY)),
        )
    });
    let (character_limit, concurrency) = vibecheck.unwrap_or_default();
    let mock = c.boolean("mock").unwrap_or(false);
    let has_text = intent_input
        .as_ref()
        .is_some_and(|i| !i.full_input_text.trim().is_empty());
    if intent_ids.is_empty() && !has_text && !mock {
        c.problem("intentInput.fullInputText: provide either intentIds or intentInput.fullInputText".into());
    }
    let input = FilterInput {
        intent_input: if intent_ids.is_empty() { intent_input } else { None },
        intent_ids,
        user_ids,
        index_ids,
        sources,
        exclude_discovered,
        page,
        limit,
        character_limit,
        concurrency,
        mock,
    };
    c.finish(input)
}

/// Checks `archive_intent` arguments: the one intent to archive.
pub(super) fn archive_intent(args: &Map<String, Value>) -> Result<String, Vec<String>> {
    let mut c = Checker::new(args);
    let id = match c.present("intentId") {
        None => {
            c.problem("intentId: the intent's UUID is required".into());
            String::new()
        }
        Some(Value::String(id)) if is_uuid(id) => id.clone(),
        Some(other) => {
            c.problem(format!("intentId: expected a UUID, got {other}"));
            String::new()
        }
    };
    c.finish(id)
}

fn sources(c: &mut Checker<'_>) -> Option<Vec<Source>> {
    let value = c.present("sources")?;
    let Some(items) = value.as_array() else {
        c.problem("sources: expected an array of { type, id } objects".into());
        return None;
    };
    if items.len() > MAX_FILTER_ITEMS {
        c.problem(format!(
            "sources: at most {MAX_FILTER_ITEMS} sources are accepted, got {}",
            items.len()
        ));
    }
    let mut sources = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let kind = item.get("type").and_then(Value::as_str);
        let id = item.get("id").and_then(Value::as_str);
        if !kind.is_some_and(|k| SOURCE_TYPES.contains(&k)) {
            c.problem(format!(
                "sources[{i}].type: expected one of {}, got {}",
                SOURCE_TYPES.join(", "),
                item.get("type").unwrap_or(&Value::Null)
            ));
        }
        if !id.is_some_and(is_uuid) {
            c.problem(format!(
                "sources[{i}].id: expected a UUID, got {}",
                item.get("id").unwrap_or(&Value::Null)
            ));
        }
        if let (Some(kind), Some(id)) = (kind, id) {
            sources.push(Source {
                kind: kind.to_string(),
                id: id.to_string(),
            });
        }
    }
    Some(sources)
}

/// Checks `discover_connections` arguments; `default_max` applies when `maxConnections` is absent.
pub(super) fn discover_connections(
    args: &Map<String, Value>,
    default_max: u64,
) -> Result<ConnectionsInput, Vec<String>> {
    let mut c = Checker::new(args);
    let text = c.string("text").unwrap_or_default();
    if text.trim().is_empty() {
        c.problem("text: input text is required".into());
    }
    let max_connections = c.integer("maxConnections", 1, Some(MAX_LIMIT)).unwrap_or(default_max);
    c.finish(ConnectionsInput { text, max_connections })
}

/// `8-4-4-4-12` hexadecimal, any version (what express-validator's `isUUID()` accepts).
pub(super) fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn dedup(ids: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    ids.retain(|id| seen.insert(id.to_ascii_lowercase()));
}

/// The `/discover/new` payload: the user's instruction, then one headed
/// section per piece of input, each cut to its limit.
pub(super) fn intent_payload(input: &IntentInput, limits: PayloadLimits) -> String {
    let mut parts = Vec::new();
    if let Some(raw) = input.raw_text.as_deref().filter(|t| !t.trim().is_empty()) {
        parts.push(format!(
            "User instruction: {}",
            truncate(raw.trim(), limits.instruction)
        ));
    }
    let sections = [
        ("Full Input", Some(input.full_input_text.as_str())),
        ("Conversation History", input.conversation_history.as_deref()),
        ("User Memory", input.user_memory.as_deref()),
    ];
    for (title, text) in sections {
        if let Some(text) = text.map(str::trim).filter(|t| !t.is_empty()) {
            parts.push(format!("=== {title} ===\n{}", truncate(text, limits.section)));
        }
    }
    parts.join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const A: &str = "0b6c1f0e-8a53-4b1a-9f3e-2f7f6f2b8c11";
    const B: &str = "7d4e2a10-1c2b-4e5f-8a9b-0c1d2e3f4a5b";

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn uuids_are_checked_like_the_protocol() {
        assert!(is_uuid(A));
        assert!(is_uuid(&A.to_uppercase()));
        assert!(!is_uuid("0b6c1f0e8a534b1a9f3e2f7f6f2b8c11"));
        assert!(!is_uuid("0b6c1f0e-8a53-4b1a-9f3e-2f7f6f2b8c1g"));
        assert!(!is_uuid(""));
    }

    #[test]
    fn filter_defaults_and_dedup() {
        let f = discover_filter(&obj(json!({ "intentIds": [A, A, B] }))).unwrap();
        assert_eq!(f.intent_ids, vec![A.to_string(), B.to_string()]);
        assert_eq!((f.page, f.limit), (1, DEFAULT_LIMIT));
        assert_eq!(f.exclude_discovered, None);
        assert_eq!(f.concurrency, None);
    }

    #[test]
    fn intent_ids_win_over_input() {
        let f = discover_filter(&obj(json!({
            "intentIds": [A], "intentInput": { "fullInputText": "looking for a designer" }
        })))
        .unwrap();
        assert!(f.intent_input.is_none());
        let chained = discover_filter(&obj(json!({ "intentInput": { "fullInputText": "x" } }))).unwrap();
        assert!(chained.intent_ids.is_empty());
        assert_eq!(chained.intent_input.unwrap().full_input_text, "x");
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let many: Vec<String> = (0..21).map(|_| A.to_string()).collect();
        let problems = discover_filter(&obj(json!({
            "userIds": many,
            "indexIds": ["nope"],
            "sources": [{ "type": "discovery_form", "id": A }, { "type": "file", "id": "x" }],
            "page": 0,
            "limit": 101,
            "vibecheck": { "characterLimit": 0, "concurrency": 6 },
            "excludeDiscovered": "false"
        })))
        .unwrap_err();
        let all = problems.join("\n");
        for expected in [
            "userIds: at most 20",
            "indexIds[0]: expected a UUID",
            "sources[0].type: expected one of file, integration, link",
            "sources[1].id: expected a UUID",
            "page: expected an integer of at least 1",
            "limit: expected an integer from 1 to 100",
            "vibecheck.characterLimit",
            "vibecheck.concurrency: expected an integer from 1 to 5",
            "excludeDiscovered: expected true or false",
            "provide either intentIds or intentInput.fullInputText",
        ] {
            assert!(all.contains(expected), "missing {expected:?} in:\n{all}");
        }
        assert_eq!(problems.len(), 10, "{all}");
    }

    #[test]
    fn blank_input_text_does_not_count() {
        let problems = discover_filter(&obj(json!({ "intentInput": { "fullInputText": "   " } }))).unwrap_err();
        assert_eq!(problems.len(), 1);
        assert!(extract_intent(&obj(json!({}))).is_err());
        assert!(extract_intent(&obj(json!({ "fullInputText": 3 }))).is_err());
    }

    /// Issue #72 (6): `mock` is a boolean that lifts the "intentIds or
    /// intentInput" rule alone; the other rules still hold.
    #[test]
    fn mock_needs_no_intents_but_keeps_the_other_rules() {
        let f = discover_filter(&obj(json!({ "mock": true }))).unwrap();
        assert!(f.mock && f.intent_ids.is_empty());
        assert!(!discover_filter(&obj(json!({ "intentIds": [A] }))).unwrap().mock);
        let problems = discover_filter(&obj(json!({ "mock": "yes" }))).unwrap_err().join("\n");
        assert!(problems.contains("mock: expected true or false"), "{problems}");
        assert!(problems.contains("provide either intentIds"), "{problems}");
        let problems = discover_filter(&obj(json!({ "mock": true, "limit": 0 }))).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
    }

    #[test]
    fn archive_takes_one_intent_uuid() {
        assert_eq!(archive_intent(&obj(json!({ "intentId": A }))).unwrap(), A);
        for bad in [json!({}), json!({ "intentId": "" }), json!({ "intentId": 3 })] {
            assert!(archive_intent(&obj(bad.clone())).is_err(), "{bad}");
        }
    }

    #[test]
    fn connections_defaults() {
        let c = discover_connections(&obj(json!({ "text": "a climbing partner" })), 10).unwrap();
        assert_eq!(c.max_connections, 10);
        assert!(discover_connections(&obj(json!({ "text": "x", "maxConnections": 0 })), 10).is_err());
        assert!(discover_connections(&obj(json!({ "text": "" })), 10).is_err());
    }

    #[test]
    fn payload_has_instruction_and_sections_with_limits() {
        let input = IntentInput {
            full_input_text: "I build open-source robotics kits.".into(),
            raw_text: Some("find collaborators".into()),
            conversation_history: Some("h".repeat(50)),
            user_memory: Some("  ".into()),
        };
        let p = intent_payload(
            &input,
            PayloadLimits {
                section: 10,
                instruction: 2000,
            },
        );
        assert_eq!(
            p,
            "User instruction: find collaborators\n\n=== Full Input ===\nI build o…\n\n=== Conversation History ===\nhhhhhhhhh…"
        );
    }
}
