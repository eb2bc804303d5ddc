//! The meta-tools' arguments as callers send them, held to the limits of
//! `wire.rs`, and a discovery's queries with credentials cut out.

use rmcp::model::{CallToolResult, ContentBlock, InputResponses, JsonObject};
use serde::Deserialize;
use serde_json::{Value, json};

use super::DISCOVERY;
use vocab::wire::{MAX_DISCOVERY_SERVERS, MAX_SERVER_NAME_BYTES, MAX_TOOL_KEY_BYTES, bounded};
pub use vocab::wire::{MAX_QUERIES, MAX_QUERY_CHARS};

/// Largest `maxResults` a discovery may ask for.
pub const MAX_RESULTS: usize = 50;
/// `maxResults` when absent.
pub const DEFAULT_RESULTS: usize = 10;
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
    /// Only these servers' tools; absent, null or empty: every server's.
    #[serde(default)]
    pub servers: Option<Vec<String>>,
}

impl DiscoverArgs {
    /// `tool_discovery`'s arguments, as clients send them ([`discover_as_meant`]).
    pub fn parse(arguments: Option<JsonObject>) -> Result<Self, String> {
        let mut arguments = arguments.unwrap_or_default();
        discover_as_meant(&mut arguments);
        parse_args(Some(arguments))
    }

    /// The non-empty queries, credentials cut out ([`leaks::cut_out`]);
    /// refused, before any search work, when there are more than
    /// [`MAX_QUERIES`] or they or `context` are longer than
    /// [`MAX_QUERY_CHARS`]. Every use of a query starts here: ranking, the
    /// cloud, learning's terms and meanings, the audit row and the
    /// explanations other callers of the project read, so none of them
    /// ever holds a credential typed into one.
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
        let queries: Vec<String> = queries
            .iter()
            .map(|q| leaks::cut_out(q))
            .filter(|q| !q.trim().is_empty())
            .collect();
        if queries.is_empty() {
            return Err("query is empty: describe the capability you need in plain words".into());
        }
        Ok(queries)
    }

    /// How many results: `maxResults`, 1..=[`MAX_RESULTS`], else [`DEFAULT_RESULTS`].
    pub fn limit(&self) -> Result<usize, String> {
        match self.max_results {
            None => Ok(DEFAULT_RESULTS),
            Some(n) if (1..=MAX_RESULTS as i64).contains(&n) => Ok(n as usize),
            Some(n) => Err(format!("maxResults must be between 1 and {MAX_RESULTS}, got {n}")),
        }
    }

    /// The servers the search is narrowed to, if any: at most
    /// [`MAX_DISCOVERY_SERVERS`] names of at most [`MAX_SERVER_NAME_BYTES`]
    /// each, refused before any search work.
    pub fn servers(&self) -> Result<Option<&[String]>, String> {
        let Some(servers) = self.servers.as_deref().filter(|s| !s.is_empty()) else {
            return Ok(None);
        };
        if servers.len() > MAX_DISCOVERY_SERVERS {
            return Err(format!(
                "{DISCOVERY} takes at most {MAX_DISCOVERY_SERVERS} servers; got {}. Leave servers out to search them all",
                servers.len()
            ));
        }
        for name in servers {
            bounded("a server name", name, MAX_SERVER_NAME_BYTES).map_err(|e| e.to_string())?;
        }
        Ok(Some(servers))
    }

    /// `context`, credentials cut out, as the queries are (checked with them).
    pub fn context(&self) -> Option<String> {
        self.context.as_deref().map(leaks::cut_out)
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
    /// `server:tool` from `tool_discovery`; absent with `script`.
    #[serde(default)]
    pub tool_key: String,
    /// Code mode: a JavaScript module body that calls tools (`gateway/script.rs`).
    #[serde(default)]
    pub script: Option<String>,
    /// The tool's arguments.
    #[serde(default)]
    pub arguments: Option<Value>,
    /// A 2026-07-28 retry's answers, from the request beside the arguments.
    #[serde(skip)]
    pub retry: Retry,
    /// Called by the tool's listed name (the path an App calls by), not
    /// through `tool_execute`: only such a call may run a tool for its App alone.
    #[serde(skip)]
    pub by_name: bool,
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

/// `tool_execute`'s arguments as clients really send them, made what they
/// unambiguously mean. A field sent as `null` is absent: mcp-use fills
/// every optional field with null, and so does a model under an OpenAI
/// strict schema. An empty `toolKey` beside a script, or an empty `script`
/// beside a key, is absent too. `arguments` may come as a string holding a
/// JSON object: the meta-tool's schema says so, since no object schema
/// survives every framework's converter (docs/src/getting-started.md).
fn execute_as_meant(args: &mut JsonObject) -> Result<(), String> {
    args.retain(|_, v| !v.is_null());
    let filled = |v: Option<&Value>| v.and_then(Value::as_str).is_some_and(|s| !s.is_empty());
    let (keyed, scripted) = (filled(args.get("toolKey")), filled(args.get("script")));
    for (field, other) in [("toolKey", scripted), ("script", keyed)] {
        if other && args.get(field).and_then(Value::as_str) == Some("") {
            args.remove(field);
        }
    }
    if let Some(Value::String(text)) = args.get("arguments") {
        let parsed = match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(o)) => Some(Value::Object(o)),
            _ if text.trim().is_empty() => None,
            _ => {
                return Err(format!(
                    "arguments must be a JSON object, or a string holding one, like '{{\"path\": \"a.txt\"}}'; got the string {}",
                    leaks::quote(text)
                ));
            }
        };
        match parsed {
            Some(object) => args.insert("arguments".into(), object),
            None => args.remove("arguments"),
        };
    }
    Ok(())
}

/// `tool_discovery`'s arguments as clients really send them: `maxResults`
/// as a string of digits (`"3"`) is that number.
fn discover_as_meant(args: &mut JsonObject) {
    if let Some(Value::String(n)) = args.get("maxResults")
        && let Ok(n) = n.trim().parse::<i64>()
    {
        args.insert("maxResults".into(), n.into());
    }
}

/// Parses a meta-tool's arguments. serde's error quotes what it could not
/// take (an unknown field's name, a string of the wrong type) whole, so the
/// answer quotes it as any caller's string is quoted.
pub fn parse_args<T: serde::de::DeserializeOwned>(arguments: Option<JsonObject>) -> Result<T, String> {
    serde_json::from_value(Value::Object(arguments.unwrap_or_default())).map_err(|e| leaks::quote(&e.to_string()))
}

impl ExecuteArgs {
    /// `tool_execute`'s arguments: a `toolKey` (an empty one is a key too,
    /// of no tool) of at most [`MAX_TOOL_KEY_BYTES`], or a `script`, never
    /// both. An over-long key is refused here, before it reaches the audit
    /// row, the access log or an answer.
    pub fn parse(arguments: Option<JsonObject>) -> Result<Self, String> {
        let mut arguments = arguments.unwrap_or_default();
        execute_as_meant(&mut arguments)?;
        let keyed = arguments.contains_key("toolKey");
        let args: Self = parse_args(Some(arguments))?;
        bounded("toolKey", &args.tool_key, MAX_TOOL_KEY_BYTES)
            .map_err(|e| format!("{e}; pass a key from tool_discovery, e.g. \"server:tool\""))?;
        match (keyed, args.script.is_some()) {
            (true, true) => Err("pass toolKey (one tool) or script (code mode), not both".into()),
            (false, false) => Err("toolKey is required: a key from tool_discovery, e.g. \"server:tool\"".into()),
            _ => Ok(args),
        }
    }
}

/// The answer to a meta-tool call whose arguments do not parse.
pub(super) fn usage_error(tool: &str, message: &str) -> CallToolResult {
    let mut r = CallToolResult::error(vec![ContentBlock::text(format!("invalid {tool} arguments: {message}"))]);
    r.structured_content = Some(json!({ "error": { "code": INVALID_ARGUMENTS, "message": message } }));
    r
}

/// The code of a meta-tool call whose arguments it cannot take.
pub(super) const INVALID_ARGUMENTS: &str = "INVALID_ARGUMENTS";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn discover_args_accept_string_or_list() {
        let one: DiscoverArgs = serde_json::from_value(json!({"query": "x"})).unwrap();
        assert!(matches!(one.query, OneOrMany::One(_)));
        let many: DiscoverArgs = serde_json::from_value(json!({"query": ["a", "b"], "maxResults": 3})).unwrap();
        assert!(matches!(many.query, OneOrMany::Many(ref v) if v.len() == 2));
        assert!(serde_json::from_value::<DiscoverArgs>(json!({"query": 5})).is_err());
        assert!(serde_json::from_value::<DiscoverArgs>(json!({"query": "x", "limit": 5})).is_err());
    }

    #[test]
    fn discovery_queries_are_capped_before_any_search() {
        let args = |v: Value| serde_json::from_value::<DiscoverArgs>(v).unwrap();
        let many: Vec<String> = (0..10_000).map(|i| format!("query {i}")).collect();
        let e = args(json!({ "query": many })).queries().unwrap_err();
        assert!(
            e.starts_with("tool_discovery takes at most 20 queries; got 10000"),
            "{e}"
        );
        let steps: Vec<String> = (0..MAX_QUERIES).map(|i| format!("step {i}")).collect();
        assert_eq!(args(json!({ "query": steps })).queries().unwrap().len(), MAX_QUERIES);
        let long = "a".repeat(MAX_QUERY_CHARS + 1);
        let e = args(json!({ "query": long })).queries().unwrap_err();
        assert!(e.contains("at most 4096 characters of queries in all; got 4097"), "{e}");
        let halves = ["é".repeat(MAX_QUERY_CHARS / 2), "é".repeat(MAX_QUERY_CHARS / 2)];
        assert!(
            args(json!({ "query": halves })).queries().is_ok(),
            "characters, not bytes"
        );
        let e = args(json!({ "query": "x", "context": long })).queries().unwrap_err();
        assert!(e.contains("at most 4096 characters of context"), "{e}");
        let e = args(json!({ "query": ["", " "] })).queries().unwrap_err();
        assert!(e.starts_with("query is empty"), "{e}");
    }

    #[test]
    fn execute_takes_a_key_or_a_script() {
        let parse = |v: Value| ExecuteArgs::parse(v.as_object().cloned());
        assert_eq!(
            parse(json!({"toolKey": ""})).unwrap().tool_key,
            "",
            "an empty key is a key (of no tool)"
        );
        assert!(parse(json!({"script": "return 1"})).unwrap().script.is_some());
        let e = parse(json!({"toolKey": "a:b", "script": "return 1"})).unwrap_err();
        assert!(e.contains("not both"), "{e}");
        let e = parse(json!({"arguments": {}})).unwrap_err();
        assert!(e.starts_with("toolKey is required"), "{e}");
    }

    /// What real clients send: mcp-use fills optional fields with null,
    /// strict-schema models send "" or null for the field they do not use,
    /// some send `arguments` as a JSON string and `maxResults` as "3".
    #[test]
    fn arguments_as_clients_really_send_them_are_taken_when_unambiguous() {
        let parse = |v: Value| ExecuteArgs::parse(v.as_object().cloned());
        for script in [
            json!({"toolKey": null, "script": "return 1"}),
            json!({"toolKey": "", "script": "return 1"}),
            json!({"toolKey": null, "arguments": null, "script": "return 1"}),
        ] {
            let args = parse(script.clone()).unwrap_or_else(|e| panic!("{script}: {e}"));
            assert_eq!(args.script.as_deref(), Some("return 1"), "{script}");
        }
        let keyed = parse(json!({"toolKey": "a:b", "script": "", "arguments": "{\"n\": 1}"})).unwrap();
        assert_eq!(
            (keyed.tool_key.as_str(), keyed.arguments),
            ("a:b", Some(json!({"n": 1})))
        );
        let none = parse(json!({"toolKey": "a:b", "script": null, "arguments": ""})).unwrap();
        assert_eq!(none.arguments, None);
        // Still refused: a real key and a script, and a string that is no object.
        let e = parse(json!({"toolKey": "a:b", "script": "return 1"})).unwrap_err();
        assert!(
            e.contains("toolKey") && e.contains("script") && e.contains("not both"),
            "{e}"
        );
        let e = parse(json!({"toolKey": "a:b", "arguments": "[1, 2]"})).unwrap_err();
        assert!(e.starts_with("arguments must be a JSON object"), "{e}");
        let found = DiscoverArgs::parse(
            json!({"query": "x", "maxResults": "3", "context": null})
                .as_object()
                .cloned(),
        );
        assert_eq!(found.unwrap().max_results, Some(3));
        assert!(DiscoverArgs::parse(json!({"query": "x", "maxResults": "many"}).as_object().cloned()).is_err());
    }

    /// Issue 41: a 1 MB `toolKey` was stored, logged and echoed whole.
    #[test]
    fn an_over_long_key_or_field_is_refused_in_a_short_message() {
        let parse = |v: Value| ExecuteArgs::parse(v.as_object().cloned());
        let e = parse(json!({"toolKey": "k".repeat(1 << 20)})).unwrap_err();
        assert!(
            e.starts_with("toolKey is 1048576 bytes long; the gateway takes at most 256"),
            "{e}"
        );
        assert!(e.len() < 200, "{e}");
        assert!(parse(json!({"toolKey": "k".repeat(MAX_TOOL_KEY_BYTES)})).is_ok());
        let e = parse(json!({"toolKey": "a:b", "x".repeat(1 << 20): 1})).unwrap_err();
        assert!(e.starts_with("unknown field"), "{e}");
        assert!(e.chars().count() <= vocab::wire::QUOTE_CHARS, "{e}");
    }

    /// Issue 41: a credential typed into a discovery was kept and shown.
    #[test]
    fn credentials_are_cut_out_of_queries_and_context() {
        let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
        let args: DiscoverArgs = serde_json::from_value(json!({
            "query": [format!("list repos with {token}"), token.clone()],
            "context": format!("my token is {token}"),
        }))
        .unwrap();
        let queries = args.queries().unwrap();
        assert_eq!(
            queries,
            ["list repos with  "],
            "a query that was only a credential goes"
        );
        assert_eq!(args.context().as_deref(), Some("my token is  "));
        let only: DiscoverArgs = serde_json::from_value(json!({ "query": token })).unwrap();
        assert!(only.queries().unwrap_err().starts_with("query is empty"));
    }
}
