//! The two meta-tools as plain functions: [`Gateway::discover`] and
//! [`Gateway::execute`]. The MCP server and the CLI both call these, so
//! `mcp-gateway search` and `call` behave exactly like `tool_discovery` and
//! `tool_execute`.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, JsonObject, ToolAnnotations};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::catalog::{Catalog, KEY_SEPARATOR};
use crate::config::Config;
use crate::downstream::{self, Registry};
use crate::search;

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

/// One `tool_discovery` result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Found {
    /// `server:tool`, the key `tool_execute` takes.
    pub tool_key: String,
    /// The tool's own name.
    pub tool_name: String,
    /// The server it runs on.
    pub server_name: String,
    /// The tool's description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// 0..1; a fixed map of the BM25 score, comparable across queries.
    pub relevance: f32,
    /// JSON Schema of the arguments.
    pub input_schema: Arc<JsonObject>,
    /// JSON Schema of `structuredContent`, when the tool declares one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Arc<JsonObject>>,
    /// Behaviour hints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
}

/// Arguments of `tool_execute`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecuteArgs {
    /// `server:tool` from `tool_discovery`.
    pub tool_key: String,
    /// The tool's arguments.
    #[serde(default)]
    pub arguments: Option<Value>,
}

/// Why `tool_execute` produced no downstream result. Each maps to one code
/// of the engine spec, returned to the model as an `isError` result.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExecuteError {
    /// No such key, or a key the caller may not use: the same answer for both.
    #[error("unknown toolKey '{0}'; call tool_discovery to find available tools")]
    NotFound(String),
    /// The arguments break the tool's `inputSchema`.
    #[error("arguments for '{key}' do not match its inputSchema: {}", violations.join("; "))]
    Invalid {
        /// The tool.
        key: String,
        /// Every violation.
        violations: Vec<String>,
    },
    /// The downstream call failed (server down, timeout, crash, protocol error).
    #[error(transparent)]
    Downstream(#[from] downstream::Error),
}

impl ExecuteError {
    /// The engine spec's error code.
    pub fn code(&self) -> &'static str {
        match self {
            ExecuteError::NotFound(_) => "TOOL_NOT_FOUND",
            ExecuteError::Invalid { .. } => "TOOL_VALIDATION_ERROR",
            ExecuteError::Downstream(downstream::Error::Timeout { .. }) => "TOOL_EXECUTION_TIMEOUT",
            ExecuteError::Downstream(_) => "TOOL_EXECUTION_ERROR",
        }
    }

    /// As a tool result the model can read and act on.
    pub fn into_result(self) -> CallToolResult {
        let mut error = json!({ "code": self.code(), "message": self.to_string() });
        match &self {
            ExecuteError::Invalid { violations, .. } => error["violations"] = json!(violations),
            ExecuteError::Downstream(downstream::Error::Protocol { error: e, .. }) => {
                error["downstream"] = json!({ "code": e.code.0, "message": e.message });
            }
            _ => {}
        }
        let mut result = CallToolResult::error(vec![ContentBlock::text(self.to_string())]);
        result.structured_content = Some(json!({ "error": error }));
        result
    }
}

/// Everything a request needs: the downstream registry and the catalog.
#[derive(Debug, Clone)]
pub struct Gateway {
    registry: Arc<Registry>,
    catalog: Arc<Catalog>,
}

/// A running gateway core plus what it takes to stop it.
#[derive(Debug)]
pub struct Running {
    /// Handle for requests.
    pub gateway: Gateway,
    tracker: TaskTracker,
    ct: CancellationToken,
}

impl Running {
    /// Stops every downstream (children get their grace period) and waits for them.
    pub async fn shutdown(self) {
        self.ct.cancel();
        self.tracker.close();
        if tokio::time::timeout(Duration::from_secs(20), self.tracker.wait()).await.is_err() {
            tracing::warn!("some downstream servers did not stop in time");
        }
    }
}

impl Gateway {
    /// Starts every enabled server and the catalog maintainer. Servers connect
    /// concurrently in the background; the catalog fills as they come up.
    pub fn start(config: &Config, ct: CancellationToken) -> Result<Running, search::Error> {
        let tracker = TaskTracker::new();
        let registry = downstream::start(&config.servers, &tracker, &ct);
        let catalog = Arc::new(Catalog::new(&registry)?);
        tracker.spawn(catalog.clone().maintain(registry.clone(), ct.child_token()));
        Ok(Running { gateway: Gateway { registry, catalog }, tracker, ct })
    }

    /// The downstream servers.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The tool catalog.
    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    /// Waits until every server has connected or failed once, then makes sure
    /// the catalog reflects that (for one-shot CLI commands and tests).
    pub async fn ready(&self) {
        self.registry.settled().await;
        if let Err(e) = self.catalog.refresh(&self.registry) {
            tracing::error!(error = %e, "catalog rebuild failed");
        }
    }

    /// `tool_discovery`: ranked tools for a query.
    pub fn discover(&self, args: &DiscoverArgs) -> Result<Vec<Found>, String> {
        let queries: Vec<String> = match &args.query {
            OneOrMany::One(q) => vec![q.clone()],
            OneOrMany::Many(qs) => qs.clone(),
        };
        let queries: Vec<String> = queries.into_iter().filter(|q| !q.trim().is_empty()).collect();
        if queries.is_empty() {
            return Err("query is empty: describe the capability you need in plain words".into());
        }
        let limit = match args.max_results {
            None => DEFAULT_RESULTS,
            Some(n) if (1..=MAX_RESULTS as i64).contains(&n) => n as usize,
            Some(n) => return Err(format!("maxResults must be between 1 and {MAX_RESULTS}, got {n}")),
        };
        let view = self.catalog.visible();
        let request = search::Request { queries, context: args.context.clone(), limit };
        Ok(view
            .search(&request)
            .into_iter()
            .map(|(entry, hit)| Found {
                tool_key: entry.key.clone(),
                tool_name: entry.tool.name.to_string(),
                server_name: entry.server.clone(),
                description: entry.tool.description.as_deref().map(str::to_string),
                relevance: (hit.relevance * 1000.0).round() / 1000.0,
                input_schema: entry.tool.input_schema.clone(),
                output_schema: entry.tool.output_schema.clone(),
                annotations: entry.tool.annotations.clone(),
            })
            .collect())
    }

    /// `tool_execute`: validates and forwards one call; the downstream result
    /// comes back unchanged. `meta` is forwarded as the call's `_meta`.
    pub async fn execute(&self, args: ExecuteArgs, meta: Option<JsonObject>) -> Result<CallToolResponse, ExecuteError> {
        let view = self.catalog.visible();
        let entry = view.get(&args.tool_key).ok_or_else(|| ExecuteError::NotFound(args.tool_key.clone()))?;
        let arguments = match args.arguments {
            None | Some(Value::Null) => Value::Object(JsonObject::new()),
            Some(v) => v,
        };
        entry.check_arguments(&arguments).map_err(|violations| ExecuteError::Invalid {
            key: entry.key.clone(),
            violations,
        })?;
        let Value::Object(arguments) = arguments else {
            return Err(ExecuteError::Invalid { key: entry.key.clone(), violations: vec!["arguments must be an object".into()] });
        };
        let server = self.registry.get(&entry.server).ok_or_else(|| ExecuteError::NotFound(args.tool_key.clone()))?;
        let mut params = CallToolRequestParams::new(entry.tool.name.clone()).with_arguments(arguments);
        params.meta = meta.map(Into::into);
        Ok(server.call_tool(params).await?)
    }
}

/// Splits `server:tool` (the tool part may itself contain `:`).
pub fn split_key(key: &str) -> Option<(&str, &str)> {
    key.split_once(KEY_SEPARATOR).filter(|(s, t)| !s.is_empty() && !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn keys_split_at_the_first_colon() {
        assert_eq!(split_key("fs:read_file"), Some(("fs", "read_file")));
        assert_eq!(split_key("srv:ns:tool"), Some(("srv", "ns:tool")));
        assert_eq!(split_key("nokey"), None);
        assert_eq!(split_key(":tool"), None);
    }

    #[test]
    fn errors_carry_engine_codes() {
        let e = ExecuteError::Invalid { key: "a:b".into(), violations: vec!["x".into()] };
        assert_eq!(e.code(), "TOOL_VALIDATION_ERROR");
        let r = e.into_result();
        assert_eq!(r.is_error, Some(true));
        assert_eq!(r.structured_content.unwrap()["error"]["violations"][0], "x");
        assert_eq!(ExecuteError::NotFound("k".into()).code(), "TOOL_NOT_FOUND");
    }
}
