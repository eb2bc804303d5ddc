//! `tool_discovery`: the caller's view ranked by its project's search, the
//! cloud falling back to local search, and the answer the model reads.

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, ToolAnnotations};
use serde::Serialize;

use super::{Answer, DiscoverArgs, Gateway, startup};
use crate::auth::Caller;
use crate::rank::{Bm25, Hybrid, SearchProvider};
use learning::Asked;
use search::{self, Ranked};
use store::access::Search;
use vocab::keys::{RequestId, ServerName, ToolKey};
use vocab::outcome::Outcome;
use vocab::wire::{self, DISCOVERY};

/// One `tool_discovery` result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Found {
    /// `server:tool`, the key `tool_execute` takes.
    pub tool_key: ToolKey,
    /// The tool's own name.
    pub tool_name: String,
    /// The server it runs on.
    pub server_name: ServerName,
    /// The tool's description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// 0..1; a fixed map of the BM25 score, comparable across queries.
    /// Three decimals, held as the f64 that prints that way: an f32 widened
    /// on the way into JSON would print as 0.08399999886751175.
    pub relevance: f64,
    /// Why it was picked: matched terms and fields (BM25), or the cloud's reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
    /// Tags the operator's rules give the tool.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// JSON Schema of the arguments.
    pub input_schema: Arc<JsonObject>,
    /// JSON Schema of `structuredContent`, when the tool declares one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Arc<JsonObject>>,
    /// Behaviour hints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// The call as a TypeScript signature, for scripts (when code mode is on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Which of the request's queries found it (for learning from use).
    #[serde(skip)]
    pub query: usize,
}

/// How long a discovery waits for the tools' embeddings when they are not
/// there yet: enough for a start with the cache or a few hundred tools;
/// a large catalog computed afresh answers with BM25 meanwhile, and says so.
const EMBEDDINGS_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

impl Gateway {
    /// `tool_discovery`: ranked tools the caller may use, by the project's
    /// search; the cloud falls back to BM25 and says why.
    pub async fn discover(&self, caller: &Caller, args: &DiscoverArgs) -> Result<Discovery, String> {
        let queries = args.queries()?;
        let servers = args.servers()?;
        let limit = args.limit()?;
        let starting = match caller.project.search {
            Some(_) => self.wait_for_starting(&caller.grants, None).await,
            None => Vec::new(),
        };
        // A new process embeds its tools off the request path, from the
        // cache in milliseconds; a one-shot client asks once, at once, and
        // would only ever get BM25. Its first discovery waits for them, briefly.
        if matches!(caller.project.search, Some(Search::Hybrid | Search::Cloud)) {
            self.catalog.embedded(EMBEDDINGS_WAIT).await;
        }
        let view = self.catalog.view_of(caller);
        let view = match servers {
            Some(servers) => view.narrowed_to(servers)?,
            None => view,
        };
        let code_mode = self.security.code_mode(&caller.project.name).is_some();
        let request = search::Request {
            queries,
            context: args.context(),
            limit,
            // Local searches blend it in; the cloud ranks on its own.
            prior: self.learning.prior(caller.learning_scope()),
        };
        let (ranked, provider, notice) = match (caller.project.search, &self.cloud) {
            (None, _) => {
                let notice = format!(
                    "the tool catalog is off for project '{}'; an operator can turn it on with \
                     `mcp-gateway project set-search {} bm25`",
                    caller.project.name, caller.project.name
                );
                return Ok(Discovery::none(notice));
            }
            (Some(Search::Bm25), _) => (Bm25.search(&view, &request).await?, Search::Bm25, None),
            (Some(Search::Hybrid), _) => {
                let (ranked, provider, why_not) = self.local(&view, &request).await?;
                (ranked, provider, why_not.map(|why| format!("{why}; BM25 answered")))
            }
            (Some(Search::Cloud), None) => {
                let (ranked, provider, _) = self.local(&view, &request).await?;
                let why = format!(
                    "cloud search is not configured ([search.cloud]); {} answered",
                    provider.label()
                );
                (ranked, provider, Some(why))
            }
            (Some(Search::Cloud), Some(cloud)) => match cloud.search(&view, &request).await {
                Ok(ranked) => (ranked, Search::Cloud, None),
                Err(reason) => {
                    tracing::warn!(project = caller.project.id, reason = %reason, "cloud search failed; local search answers");
                    telemetry::search_fallback("cloud");
                    let (ranked, provider, _) = self.local(&view, &request).await?;
                    let why = format!("cloud search failed ({reason}); {} answered", provider.label());
                    (ranked, provider, Some(why))
                }
            },
        };
        let results: Vec<Found> = ranked
            .into_iter()
            .filter_map(|r| {
                let entry = view.get(&r.key)?;
                Some(Found {
                    tool_key: entry.key.clone(),
                    tool_name: entry.tool.name.to_string(),
                    server_name: entry.server.clone(),
                    description: entry.tool.description.as_deref().map(str::to_string),
                    relevance: wire::score(r.relevance),
                    explanation: r.explanation,
                    tags: entry.tags.clone(),
                    input_schema: entry.tool.input_schema.clone(),
                    output_schema: entry.tool.output_schema.clone(),
                    annotations: entry.tool.annotations.clone(),
                    signature: code_mode.then(|| {
                        crate::typescript::signature(&entry.tool.input_schema, entry.tool.output_schema.as_deref())
                    }),
                    query: r.query,
                })
            })
            .collect();
        let asked = match self.learning.enabled() {
            true => Asked {
                terms: request.queries.iter().map(|q| view.query_terms(q)).collect(),
                vectors: self.query_vectors(provider, &request.queries),
                queries: request.queries,
            },
            false => Asked::default(),
        };
        let notice = match (starting.is_empty(), notice) {
            (true, notice) => notice,
            (false, None) => Some(startup::notice(&starting)),
            (false, Some(notice)) => Some(format!("{}\n{notice}", startup::notice(&starting))),
        };
        Ok(Discovery {
            results,
            provider: Some(provider),
            notice,
            starting,
            asked,
        })
    }

    /// The embeddings hybrid search just computed for `queries` (kept by the
    /// model), for the memory of meanings; none when another search answered.
    fn query_vectors(&self, provider: Search, queries: &[String]) -> Vec<Arc<[f32]>> {
        if provider != Search::Hybrid || !self.learning.wants_meanings() {
            return Vec::new();
        }
        let Some(model) = self.catalog.semantic() else {
            return Vec::new();
        };
        model
            .recall_queries(queries)
            .into_iter()
            .collect::<Option<Vec<_>>>()
            .unwrap_or_default()
    }

    /// The best local search: hybrid when the model and this snapshot's tool
    /// embeddings are ready, else BM25 and why hybrid did not answer.
    async fn local(
        &self,
        view: &crate::catalog::View,
        request: &search::Request,
    ) -> Result<(Vec<Ranked>, Search, Option<String>), String> {
        let why_not = match self.catalog.semantic() {
            None => format!("hybrid search is off: {}", self.catalog.hybrid_off()),
            Some(model) => match Hybrid::new(model).search(view, request).await {
                Ok(ranked) => return Ok((ranked, Search::Hybrid, None)),
                Err(why) => {
                    telemetry::search_fallback("hybrid");
                    format!("hybrid search could not answer ({why})")
                }
            },
        };
        Ok((Bm25.search(view, request).await?, Search::Bm25, Some(why_not)))
    }

    /// `tool_discovery` from raw arguments to the answer the caller sees.
    /// `session` names the caller's session, so a later execute in it can
    /// be linked to this discovery (learning from use).
    pub async fn answer_discovery(
        &self,
        caller: &Caller,
        args: Result<DiscoverArgs, String>,
        session: &str,
        request_id: &RequestId,
    ) -> Answer {
        let discovery = match args {
            Ok(args) => self.discover(caller, &args).await,
            Err(e) => Err(e),
        };
        match discovery {
            Ok(d) => {
                let count = d.results.len() as u64;
                let found = d.results.iter().map(|f| (f.tool_key.to_string(), f.query)).collect();
                let trail = self
                    .learning
                    .discovered(session, caller.learning_scope(), request_id, &d.asked, found)
                    .await;
                let saved_tokens = self.discovery_saved(caller, session, &d.results);
                let mut r = CallToolResult::success(vec![ContentBlock::text(d.summary())]);
                r.structured_content = Some(serde_json::to_value(d.offered()).unwrap_or_default());
                Answer {
                    result_count: Some(count),
                    trail,
                    saved_tokens,
                    ..Answer::new(r, Outcome::Ok)
                }
            }
            Err(e) => Answer::usage(DISCOVERY, &e),
        }
    }
}

/// What `tool_discovery` returns as `structuredContent`.
#[derive(Debug, Clone, Serialize)]
pub struct Discovery {
    /// Ranked tools.
    pub results: Vec<Found>,
    /// Which search answered (`bm25`); absent when the catalog is off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<Search>,
    /// Why results are empty or partial (servers still starting), or came from a fallback.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// Servers the caller may see that were still starting when it answered:
    /// asked again shortly, it finds their tools too.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub starting: Vec<String>,
    /// What it asked (for learning from use).
    #[serde(skip)]
    pub asked: Asked,
}

impl Discovery {
    /// No results, only a notice saying why (the catalog is off, or the
    /// discovery was refused).
    pub fn none(why: String) -> Self {
        Self {
            results: Vec::new(),
            provider: None,
            notice: Some(why),
            starting: Vec::new(),
            asked: Asked::default(),
        }
    }
}

/// `tool_discovery`'s `structuredContent`: what a model needs to call the
/// tools found, no more. pydantic-ai, llama-index, google-genai and
/// smolagents hand it to the model whole, and with every field of [`Found`]
/// it was about four times the text. What only an operator reads (the
/// explanation, annotations, the names the key repeats) is in
/// `mcp-gateway search --json` and the console's playground.
#[derive(Debug, Serialize)]
pub struct Offered<'a> {
    results: Vec<OfferedTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    provider: Option<Search>,
    #[serde(skip_serializing_if = "Option::is_none")]
    notice: Option<&'a str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    starting: &'a [String],
}

/// One result of [`Offered`].
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct OfferedTool<'a> {
    tool_key: &'a ToolKey,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    relevance: f64,
    /// The operator's tags and the scanner's (`suspicious:instructions`):
    /// a warning is for the model too.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    tags: &'a [String],
    input_schema: &'a JsonObject,
    /// In code mode, what the call's `structuredContent` holds (the
    /// `outputSchema` as a type), for a script to read it right.
    #[serde(skip_serializing_if = "Option::is_none")]
    returns: Option<String>,
}

impl Discovery {
    /// What `tool_discovery` answers as `structuredContent`.
    pub fn offered(&self) -> Offered<'_> {
        let results = self
            .results
            .iter()
            .map(|f| OfferedTool {
                tool_key: &f.tool_key,
                description: f.description.as_deref(),
                relevance: f.relevance,
                tags: &f.tags,
                input_schema: &f.input_schema,
                returns: f
                    .signature
                    .as_ref()
                    .and(f.output_schema.as_deref())
                    .map(crate::typescript::returns),
            })
            .collect();
        Offered {
            results,
            provider: self.provider,
            notice: self.notice.as_deref(),
            starting: &self.starting,
        }
    }
}

/// Longest argument list one result's line in the text carries (characters):
/// a dozen plain arguments fit; past it whole arguments are dropped and
/// counted (`…3 more`), so fifty results stay a few kilobytes at most.
const TEXT_ARGUMENTS_CHARS: usize = 300;

impl Discovery {
    /// The readable twin of the structured results, for clients that give
    /// the model the text only (openai-agents by default, LangChain,
    /// smolagents, llama-index, google-genai). Each tool's line carries its
    /// arguments as a TypeScript object type, `{value: number; from: "C" |
    /// "F" | "K"; to: "C" | "F" | "K"}`: the types, which are required (no
    /// `?`) and the allowed values, what a model needs for its first
    /// `tool_execute` to pass the schema check. Names alone (`[args: from,
    /// to, value]`) had a model send `from: "celsius"`.
    ///
    /// The spec says a result with `structuredContent` SHOULD also carry it
    /// as JSON text; this one does not, on purpose. That JSON repeats every
    /// schema with its descriptions, titles and bounds, the annotations and
    /// the explanations, several times the bytes of this text for the same
    /// results, and a client that passes both blocks to the model would pay
    /// for the results twice. The signature keeps what a call needs; the
    /// full schemas stay in `structuredContent` for clients that read it.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        if let Some(n) = &self.notice {
            out.push_str(n);
            out.push('\n');
        }
        if self.results.is_empty() {
            if self.provider.is_some() && self.starting.is_empty() {
                out.push_str("No matching tools. Try other words, or one query per step, each a complete need.");
            } else if self.provider.is_some() {
                out.push_str("No matching tools among the servers running now.");
            }
            return out;
        }
        out.push_str(&format!(
            "{} tool(s) found. Run one with tool_execute {{ toolKey, arguments }}.\n",
            self.results.len()
        ));
        for f in &self.results {
            let description = f.description.as_deref().unwrap_or("").lines().next().unwrap_or("");
            out.push_str(&format!("\n- {} ({:.2}): {}", f.tool_key, f.relevance, description));
            if let Some(arguments) = crate::typescript::arguments(&f.input_schema, TEXT_ARGUMENTS_CHARS) {
                out.push_str("\n  arguments: ");
                out.push_str(&arguments);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// The demo server's seven tools (`src/demo.rs`) as one discovery finds
    /// them on a server named `demo`, with their schemas copied from there.
    fn demo_discovery() -> Discovery {
        let text = |d: &str| json!({"type": "object", "properties": {"text": {"type": "string", "description": d}}, "required": ["text"]});
        let tools = [
            (
                "calculate",
                "Evaluate an arithmetic expression: add, subtract, multiply, divide, powers and parentheses, e.g. (2 + 3) * 4.",
                json!({"type": "object", "properties": {"expression": {"type": "string", "description": "The expression to evaluate"}}, "required": ["expression"]}),
                Some(json!({"type": "object", "properties": {"result": {"type": "number"}}, "required": ["result"]})),
            ),
            (
                "current_time",
                "Get the current date and time, in UTC or at a given offset from UTC.",
                json!({"type": "object", "properties": {"utc_offset_minutes": {"type": "integer", "minimum": -720, "maximum": 840, "description": "Offset from UTC in minutes, e.g. 60 for CET"}}}),
                None,
            ),
            (
                "word_count",
                "Count the words, lines and characters of a text.",
                text("The text to count"),
                None,
            ),
            (
                "sha256",
                "Compute the SHA-256 hash (hex digest) of a text.",
                text("The text to hash"),
                None,
            ),
            (
                "base64_encode",
                "Encode a text as Base64.",
                text("The text to encode"),
                None,
            ),
            (
                "base64_decode",
                "Decode Base64 back to text.",
                text("The Base64 to decode"),
                None,
            ),
            (
                "convert_temperature",
                "Convert a temperature between Celsius, Fahrenheit and Kelvin.",
                json!({"type": "object", "properties": {
                    "value": {"type": "number", "description": "The temperature to convert"},
                    "from": {"type": "string", "enum": ["C", "F", "K"], "description": "Unit of value"},
                    "to": {"type": "string", "enum": ["C", "F", "K"], "description": "Unit wanted"}
                }, "required": ["value", "from", "to"]}),
                None,
            ),
        ];
        let relevance = [0.91, 0.62, 0.55, 0.48, 0.41, 0.40, 0.33];
        let object = |v: Value| Arc::new(v.as_object().cloned().unwrap_or_default());
        let results = tools
            .into_iter()
            .zip(relevance)
            .map(|((name, description, input, output), relevance)| Found {
                tool_key: ToolKey::new("demo", name),
                tool_name: name.into(),
                server_name: ServerName::new("demo"),
                description: Some(description.into()),
                relevance,
                explanation: None,
                tags: Vec::new(),
                input_schema: object(input),
                output_schema: output.map(object),
                annotations: Some(
                    ToolAnnotations::new()
                        .read_only(true)
                        .destructive(false)
                        .open_world(false),
                ),
                signature: None,
                query: 0,
            })
            .collect();
        Discovery {
            results,
            provider: Some(Search::Bm25),
            notice: None,
            starting: Vec::new(),
            asked: Asked::default(),
        }
    }

    /// Clients that hand the model only the text block showed it
    /// `[args: from, to, value]`, and it sent `from: "celsius"`. The text
    /// now carries types, required arguments and allowed values: 915 bytes
    /// for the demo's seven tools (775 with names alone); the
    /// structuredContent as JSON is 2,993.
    #[test]
    fn the_text_carries_argument_types_required_and_allowed_values() {
        let d = demo_discovery();
        let text = d.summary();
        assert_eq!(
            text,
            r#"7 tool(s) found. Run one with tool_execute { toolKey, arguments }.

- demo:calculate (0.91): Evaluate an arithmetic expression: add, subtract, multiply, divide, powers and parentheses, e.g. (2 + 3) * 4.
  arguments: {expression: string}
- demo:current_time (0.62): Get the current date and time, in UTC or at a given offset from UTC.
  arguments: {utc_offset_minutes?: number}
- demo:word_count (0.55): Count the words, lines and characters of a text.
  arguments: {text: string}
- demo:sha256 (0.48): Compute the SHA-256 hash (hex digest) of a text.
  arguments: {text: string}
- demo:base64_encode (0.41): Encode a text as Base64.
  arguments: {text: string}
- demo:base64_decode (0.40): Decode Base64 back to text.
  arguments: {text: string}
- demo:convert_temperature (0.33): Convert a temperature between Celsius, Fahrenheit and Kelvin.
  arguments: {value: number; from: "C" | "F" | "K"; to: "C" | "F" | "K"}"#
        );
        let json = serde_json::to_string(&d).unwrap().len();
        assert_eq!(text.len(), 915);
        // Why the text is not the JSON the spec suggests: over three times the bytes.
        assert!(json > 3 * text.len(), "{json} bytes of JSON, {} of text", text.len());
    }

    /// pydantic-ai, llama-index, google-genai and smolagents give the model
    /// `structuredContent`: each result's key, description, relevance and
    /// schema, about twice the text (2,002 bytes to 915; it was 2,993). A
    /// schema says each argument's description, which the text leaves out.
    #[test]
    fn the_structured_results_are_what_a_model_needs_within_twice_the_text() {
        let mut d = demo_discovery();
        d.results[0].explanation = Some("calcul: name, description".into());
        d.results[0].tags = vec!["math".into()];
        let offered = serde_json::to_value(d.offered()).unwrap();
        let first = offered["results"][0].as_object().unwrap();
        let fields: Vec<&str> = first.keys().map(String::as_str).collect();
        assert_eq!(fields, ["description", "inputSchema", "relevance", "tags", "toolKey"]);
        assert_eq!(offered["provider"], "bm25");
        let (json, text) = (offered.to_string().len(), d.summary().len());
        assert!(4 * json <= 9 * text, "{json} bytes of JSON, {text} of text");

        // In code mode, what a script gets back, for a tool that says.
        d.results[0].signature = Some("(args: {expression: string}) => {result: number}".into());
        d.results[1].signature = Some("(args: {utc_offset_minutes?: number})".into());
        let offered = serde_json::to_value(d.offered()).unwrap();
        assert_eq!(offered["results"][0]["returns"], "{result: number}");
        assert!(offered["results"][1].get("returns").is_none(), "{offered}");
    }

    #[test]
    fn a_tool_without_named_arguments_gets_no_arguments_line() {
        let mut d = demo_discovery();
        d.results.truncate(1);
        d.results[0].input_schema = Arc::new(json!({"type": "object"}).as_object().cloned().unwrap());
        assert!(!d.summary().contains("arguments: {"), "{}", d.summary());
    }

    #[test]
    fn a_long_argument_list_is_cut_within_the_bound_and_says_so() {
        let mut d = demo_discovery();
        d.results.truncate(1);
        let props: serde_json::Map<String, Value> = (0..60)
            .map(|i| (format!("field{i:02}"), json!({"type": "string"})))
            .collect();
        d.results[0].input_schema = Arc::new(
            json!({"type": "object", "properties": props, "required": ["field59"]})
                .as_object()
                .cloned()
                .unwrap(),
        );
        let text = d.summary();
        let line = text.lines().last().unwrap();
        let arguments = line.strip_prefix("  arguments: ").unwrap();
        assert!(arguments.chars().count() <= TEXT_ARGUMENTS_CHARS, "{arguments}");
        assert!(
            arguments.starts_with("{field59: string; field00?: string;"),
            "{arguments}"
        );
        assert!(arguments.ends_with(" more}"), "{arguments}");
    }
}
