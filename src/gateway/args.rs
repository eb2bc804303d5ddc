//! The meta-tools' arguments as callers send them, and the limits a
//! discovery's queries are held to.

use rmcp::model::{InputResponses, JsonObject};
use serde::Deserialize;
use serde_json::Value;

use super::DISCOVERY;

/// Largest `maxResults` a discovery may ask for.
pub const MAX_RESULTS: usize = 50;
/// `maxResults` when absent.
pub const DEFAULT_RESULTS: usize = 10;
/// Most queries one discovery takes. Queries are a task's steps or a few
/// paraphrases (the benchmark's longest task has four steps), and each is
/// ranked (and embedded) on its own: 10,000 of them took 13 s of CPU.
pub const MAX_QUERIES: usize = 20;
/// Most characters of all of a discovery's queries together, and of its
/// `context`: a need takes a sentence, and every word is a search term.
pub const MAX_QUERY_CHARS: usize = 4096;
/// Arguments of `tool_discovery`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DiscoverArgs {
    /// One phrasing, or several (paraphrases or the steps of a task).
    pub query: OneOrMany,
    /// Background about the task: weak evidence.
    #[serde(default)]
    pub context: Option<String>,
    /// 1..=50, default 10.
    #[serde(default)]
    pub max_results: Option<i64>,
}

impl DiscoverArgs {
    /// The non-empty queries; refused, before any search work, when there
    /// are more than [`MAX_QUERIES`] or they or `context` are longer than
    /// [`MAX_QUERY_CHARS`].
    pub fn queries(&self) -> Result<Vec<String>, String> {
        let queries = match &self.query {
            OneOrMany::One(q) => std::slice::from_ref(q),
            OneOrMany::Many(qs) => qs.as_slice(),
        };
        if queries.len() > MAX_QUERIES {
            return Err(format!(
                "{DISCOVERY} takes at most {MAX_QUERIES} queries; got {}. Send one query per step of the task",
                queries.len()
            ));
        }
        let chars: usize = queries.iter().map(|q| q.chars().count()).sum();
        if chars > MAX_QUERY_CHARS {
            return Err(format!(
                "{DISCOVERY} takes at most {MAX_QUERY_CHARS} characters of queries in all; got {chars}. \
                 Describe each need in a sentence"
            ));
        }
        let context = self.context.as_deref().map_or(0, |c| c.chars().count());
        if context > MAX_QUERY_CHARS {
            return Err(format!(
                "{DISCOVERY} takes at most {MAX_QUERY_CHARS} characters of context; got {context}"
            ));
        }
        let queries: Vec<String> = queries.iter().filter(|q| !q.trim().is_empty()).cloned().collect();
        if queries.is_empty() {
            return Err("query is empty: describe the capability you need in plain words".into());
        }
        Ok(queries)
    }
}

/// `string | string[]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// A single string.
    One(String),
    /// Several strings.
    Many(Vec<String>),
}

/// Arguments of `tool_execute`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecuteArgs {
    /// `server:tool` from `tool_discovery`.
    pub tool_key: String,
    /// The tool's arguments.
    #[serde(default)]
    pub arguments: Option<Value>,
    /// A 2026-07-28 retry's answers, from the request beside the arguments.
    #[serde(skip)]
    pub retry: Retry,
}

/// What a 2026-07-28 client sends again after an `InputRequiredResult`:
/// passed to the same server and tool as they came, `requestState` unread.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Retry {
    /// Answers to the input requests, by their keys.
    pub input_responses: Option<InputResponses>,
    /// The server's opaque state, echoed.
    pub request_state: Option<String>,
}

/// Parses a meta-tool's arguments.
pub fn parse_args<T: serde::de::DeserializeOwned>(arguments: Option<JsonObject>) -> Result<T, String> {
    serde_json::from_value(Value::Object(arguments.unwrap_or_default())).map_err(|e| e.to_string())
}
