//! The two meta-tools as `tools/list` returns them: `tool_discovery` and
//! `tool_execute`, the gateway's whole interface on the default exposure.

use std::sync::{Arc, OnceLock};

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Value, json};

use super::MAX_QUERIES;
use vocab::wire::{DISCOVERY, EXECUTE};

/// The two meta-tools, exactly as `tools/list` returns them (built once:
/// rmcp also asks for them on every HTTP POST to look up schemas).
pub fn meta_tools() -> Vec<Tool> {
    built_meta_tools().to_vec()
}

/// The two meta-tools, built once (rmcp looks them up on every HTTP POST).
pub fn built_meta_tools() -> &'static [Tool] {
    static TOOLS: std::sync::OnceLock<Vec<Tool>> = std::sync::OnceLock::new();
    TOOLS.get_or_init(build_meta_tools)
}

fn build_meta_tools() -> Vec<Tool> {
    let schema = |v: Value| Arc::new(v.as_object().cloned().unwrap_or_default());
    let mut discovery = Tool::new(
        DISCOVERY,
        "Find tools for a task among every tool this gateway can reach. Call it first whenever you \
         need a capability you do not have. Describe the need in plain words. For a task with \
         several steps, send one query per step, each a complete need in your own words \
         (\"read the failing job's logs\", not \"read them\"). Returns ranked tools with their \
         toolKey and inputSchema; run one with tool_execute.",
        schema(json!({
            "type": "object",
            "properties": {
                // Lengths are checked in code only (`DiscoverArgs::queries`):
                // `maxLength` would break the listing's token budget (test below).
                // A type list, not `anyOf`: smolagents flattens an `anyOf`
                // into a type list and drops its `items`, and OpenAI refuses
                // an array without them (tests/suite/interop.rs runs it).
                "query": {
                    "type": ["string", "array"],
                    "items": { "type": "string" },
                    "minItems": 1,
                    "maxItems": MAX_QUERIES,
                    "description": "What you need, e.g. \"read a file\". Several strings: paraphrases or steps."
                },
                // Nullable, no `default`: OpenAI strict schemas make every
                // field required, and Azure refuses `default`.
                "context": { "type": ["string", "null"], "description": "Optional background about the task." },
                "maxResults": { "type": ["integer", "null"], "minimum": 1, "maximum": 50, "description": "Default 10." },
                "servers": { "type": ["array", "null"], "items": { "type": "string" }, "description": "Only these servers' tools." }
            },
            "required": ["query"]
        })),
    );
    discovery.annotations = Some(ToolAnnotations::new().read_only(true).open_world(false));
    let mut execute = Tool::new(
        EXECUTE,
        "Run a tool found with tool_discovery. Pass its toolKey and, as a JSON string, arguments \
         that match its inputSchema. Returns the tool's own result.\n\
         For many calls, or to keep large results out of your context, pass script instead: the \
         body of an async JavaScript function. `await tools.call(toolKey, args)` gives \
         {content, structuredContent, isError, text} and throws when refused; \
         `await tools.search(query, n)` gives [{toolKey, signature}]; Promise.all runs calls in \
         parallel; console.log is kept. No fetch, files, timers or imports. Return only what you \
         need: you get {result, logs, calls}.",
        // `arguments` is a string holding a JSON object (an object is taken
        // too): no object schema survives every framework's converter.
        // openai-agents cannot make an open object strict, pydantic-ai closes
        // it to `{}`, google-genai drops its openness (and crashes on
        // `additionalProperties: true`). Each field is nullable, so a strict
        // model can leave out what it does not use (tests/suite/interop.rs runs
        // the real converters; docs/src/getting-started.md, "Agent frameworks").
        schema(json!({
            "type": "object",
            "properties": {
                "toolKey": { "type": ["string", "null"], "description": "toolKey from tool_discovery, e.g. \"server:tool\"." },
                "arguments": { "type": ["string", "null"], "description": "The tool's arguments: a JSON object as a string, e.g. '{\"path\":\"a.txt\"}'." },
                "script": { "type": ["string", "null"], "description": "Instead of toolKey: JavaScript that calls tools and returns a JSON value." }
            }
        })),
    );
    execute.annotations = Some(ToolAnnotations::new().open_world(true));
    vec![discovery, execute]
}

/// o200k tokens of the two meta-tools as listed: what a session reads in
/// their place of every tool ([`super::savings`]).
pub(super) fn meta_tokens() -> i64 {
    static TOKENS: OnceLock<i64> = OnceLock::new();
    *TOKENS.get_or_init(|| crate::catalog::tokens(&serde_json::to_string(built_meta_tools()).unwrap_or_default()))
}
