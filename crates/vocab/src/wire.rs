//! The wire vocabulary every layer shares: the meta-tools' names, tool keys,
//! the gateway's own `_meta` keys, request ids and scores as they go out,
//! and the bounds on every string a caller sends that reaches the store,
//! the logs or an answer. It sits at the ground so that built-ins,
//! telemetry and the gateway name these things without importing each other.

/// Name of the search meta-tool.
pub const DISCOVERY: &str = "tool_discovery";
/// Name of the execution meta-tool.
pub const EXECUTE: &str = "tool_execute";

/// The two meta-tools, named once a call's tool name is read: what the
/// call path, its rows, metrics and log lines are told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaTool {
    /// `tool_discovery`.
    Discovery,
    /// `tool_execute`.
    Execute,
}

impl MetaTool {
    /// Its name on the wire, in the audit log and in metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            MetaTool::Discovery => DISCOVERY,
            MetaTool::Execute => EXECUTE,
        }
    }
}

/// Separates server and tool in a `toolKey`; server names may not contain it.
pub const KEY_SEPARATOR: char = ':';

/// The prefix of the gateway's own `_meta` keys: only the gateway writes
/// them, so a client's and a downstream's are dropped where they cross.
pub const GATEWAY_META_PREFIX: &str = "mcp-gateway/";
/// `_meta` key carrying the caller's bearer token to built-in servers only
/// (they run in process; no other downstream ever receives it).
pub const CALLER_TOKEN_META: &str = "mcp-gateway/callerToken";
/// `_meta` key carrying the gateway's request id, for correlating logs.
pub const REQUEST_ID_META: &str = "mcp-gateway/requestId";
/// `_meta` key of an App tool's result: the name its App calls the tool back
/// by (`{"name"}`, or `{"name": "tool_execute", "toolKey"}`).
pub const CALL_TOOL_META: &str = "mcp-gateway/callTool";
/// The MCP Apps extension (SEP-1865), as clients declare it.
pub const MCP_APPS_EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The template type MCP Apps hosts render.
pub const MCP_APP_MIME: &str = "text/html;profile=mcp-app";
/// `_meta` key telling the Index built-in whether the caller renders MCP Apps.
pub const MCP_APPS_META: &str = "mcp-gateway/mcpApps";
/// The `_meta` key every 2026-07-28 request carries.
pub const PROTOCOL_VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of a 2026-07-28 client's capabilities.
pub const CLIENT_CAPABILITIES_META: &str = "io.modelcontextprotocol/clientCapabilities";

/// Most bytes of a `toolKey` a caller may send, and of a `server:prompt`
/// name. MCP tool names take 1 to 128 characters of `A-Z a-z 0-9 _ - .`
/// (`catalog/direct.rs`), which leaves 127 for an operator's server name;
/// the catalog leaves out a tool whose key is longer, so no key discovery
/// shows is one execute refuses.
pub const MAX_TOOL_KEY_BYTES: usize = 256;
/// Most bytes of one message a caller sends the upstream server: an HTTP
/// body, a line on stdio (rmcp's default for HTTP bodies; a tool call's
/// arguments rarely pass a few kilobytes).
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;
/// Most queries one discovery takes. Queries are a task's steps or a few
/// paraphrases (the benchmark's longest task has four steps), and each is
/// ranked (and embedded) on its own: 10,000 of them took 13 s of CPU.
pub const MAX_QUERIES: usize = 20;
/// Most characters of all of a discovery's queries together, and of its
/// `context`: a need takes a sentence, and every word is a search term.
pub const MAX_QUERY_CHARS: usize = 4096;
/// Most server names one discovery may narrow its search to: more than a
/// model names in one request, far fewer than a catalog holds.
pub const MAX_DISCOVERY_SERVERS: usize = 32;
/// Most bytes of a server name a caller may send: a `toolKey`'s server part
/// ([`MAX_TOOL_KEY_BYTES`] less a tool name of at least one byte and the separator).
pub const MAX_SERVER_NAME_BYTES: usize = MAX_TOOL_KEY_BYTES - 2;
/// Most bytes of a resource URI a caller may read or subscribe to: far past
/// any file path or template instance, far short of what fills a log.
pub const MAX_URI_BYTES: usize = 4096;
/// Most bytes of a completion request's argument name, its partial value,
/// and each value of its context: what a person typed into one field.
pub const MAX_COMPLETION_BYTES: usize = 4096;
/// Most bytes of a request id the gateway keeps or looks up: its own are 16
/// hex digits, a script's calls add `.N` (a caller cannot set
/// [`REQUEST_ID_META`]: `mcp-gateway/` keys of its `_meta` stay behind), so
/// a longer one (an operator's lookup in the console) is none it gave.
pub const MAX_REQUEST_ID_BYTES: usize = 128;
/// Most bytes of an OAuth subject, or its issuer, in an audit row: OpenID
/// Connect holds a `sub` to 255 ASCII characters.
pub const MAX_SUBJECT_BYTES: usize = 255;
/// Most bytes of a discovery's query terms or answered keys, as JSON, in one
/// audit row: 50 keys of [`MAX_TOOL_KEY_BYTES`] take 13 KB, and the terms
/// of [`MAX_QUERY_CHARS`] of queries, hashed (35 bytes a term), fit unless
/// they are nearly all distinct two-letter words.
pub const MAX_TRAIL_BYTES: usize = 64 * 1024;
/// Most characters of a caller's string that an error, an answer or a log
/// line quotes (`leaks::quote`): enough to recognise a key or a URI.
pub const QUOTE_CHARS: usize = 128;

/// A caller's string longer than the gateway takes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field} is {bytes} bytes long; the gateway takes at most {limit}")]
pub struct TooLong {
    /// The field, as the caller names it (`toolKey`, `uri`).
    pub field: &'static str,
    /// How long it was.
    pub bytes: usize,
    /// The bound.
    pub limit: usize,
}

/// `value` when it is at most `limit` bytes; else an error naming `field`
/// and the limit, never quoting the value (that is what was too long).
pub fn bounded<'a>(field: &'static str, value: &'a str, limit: usize) -> Result<&'a str, TooLong> {
    match value.len() {
        bytes if bytes > limit => Err(TooLong { field, bytes, limit }),
        _ => Ok(value),
    }
}

/// Splits `server:tool` (the tool part may itself contain `:`).
pub fn split_key(key: &str) -> Option<(&str, &str)> {
    key.split_once(KEY_SEPARATOR)
        .filter(|(s, t)| !s.is_empty() && !t.is_empty())
}

/// A score rounded to three decimals, as it goes on the wire.
pub fn score(score: f32) -> f64 {
    (f64::from(score) * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_go_on_the_wire_with_three_decimals() {
        let value = serde_json::to_value(score(0.084)).unwrap();
        assert_eq!(value.to_string(), "0.084");
        assert_eq!(serde_json::to_value(score(0.12345)).unwrap().to_string(), "0.123");
        assert_eq!(serde_json::to_value(score(1.0)).unwrap().to_string(), "1.0");
    }

    #[test]
    fn over_long_strings_are_refused_by_name_and_limit_without_being_quoted() {
        assert_eq!(bounded("toolKey", "fs:read", MAX_TOOL_KEY_BYTES), Ok("fs:read"));
        let at_limit = "k".repeat(MAX_TOOL_KEY_BYTES);
        assert!(bounded("toolKey", &at_limit, MAX_TOOL_KEY_BYTES).is_ok());
        let e = bounded("toolKey", &"k".repeat(1 << 20), MAX_TOOL_KEY_BYTES).unwrap_err();
        assert_eq!(
            e.to_string(),
            "toolKey is 1048576 bytes long; the gateway takes at most 256"
        );
        // Bytes, not characters: the bound is on what is stored and logged.
        assert!(bounded("uri", &"é".repeat(MAX_URI_BYTES / 2 + 1), MAX_URI_BYTES).is_err());
    }

    #[test]
    fn keys_split_at_the_first_colon() {
        assert_eq!(split_key("fs:read_file"), Some(("fs", "read_file")));
        assert_eq!(split_key("srv:ns:tool"), Some(("srv", "ns:tool")));
        assert_eq!(split_key("nokey"), None);
        assert_eq!(split_key(":tool"), None);
    }
}
