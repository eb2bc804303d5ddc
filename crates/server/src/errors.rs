//! Every error the upstream face answers, mapped to JSON-RPC in this one
//! place: a refused caller, a cancelled call, an unknown tool, task, prompt,
//! skill or resource, a downstream's own error as the caller should read it,
//! and the bare envelope the HTTP guard answers with before rmcp reads a
//! message (a body that is not JSON-RPC, a missing credential, a rate).
//!
//! rmcp logs every error a handler returns, message and data whole (WARN
//! "response error"), so a name, id or URI the caller sent is quoted here as
//! any caller's string is ([`quote`]): short, on one line, no credential.

use rmcp::model::{ErrorCode, ErrorData};
use serde_json::{Value, json};

use gateway::auth;
use gateway::{ExecuteError, Refused};
use leaks::{self, quote};
use vocab::wire::{DISCOVERY, EXECUTE, TooLong};

/// JSON-RPC error code for a refused caller (no valid token, project mismatch).
pub const UNAUTHORIZED: i32 = -32001;

/// JSON-RPC error code (server-defined range) of a request over its caller's rate.
pub const RATE_LIMITED: i32 = -32029;

/// JSON-RPC error code (server-defined range) of an `initialize` over a session limit.
pub const SESSIONS_FULL: i32 = -32030;

/// JSON-RPC's own codes for a body that is not JSON, and JSON that is not a request.
pub(super) const PARSE_ERROR: i32 = -32700;
pub(super) const INVALID_REQUEST: i32 = -32600;

/// A JSON-RPC error for a message whose id is unknown (it could not be read, or was refused before reading).
pub(super) fn unanswerable(code: i32, message: &str) -> Value {
    refusal(Value::Null, code, message)
}

/// A JSON-RPC error for request `id`, answered before rmcp reads the request
/// (a stdio line past the limit).
pub(super) fn refusal(id: Value, code: i32, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

/// The error that fails the gateway's own request to its client (a
/// sampling or an elicitation) whose answer came back past the size limit.
pub(super) fn oversized_answer(message: String) -> ErrorData {
    ErrorData::invalid_request(message, None)
}

/// A request's `_meta` that carried a credential, refused as its arguments would be.
pub(super) fn blocked_meta(e: gateway::security::Blocked) -> ErrorData {
    ErrorData::invalid_params(e.to_string(), None)
}

/// A completion that refers to neither a prompt nor a resource template.
pub(super) fn unknown_reference() -> ErrorData {
    ErrorData::invalid_params("a completion refers to a prompt or a resource template", None)
}

/// `logging/setLevel` from a 2026-07-28 client, whose revision dropped it.
pub(super) fn no_set_level() -> ErrorData {
    ErrorData::method_not_found::<rmcp::model::SetLevelRequestMethod>()
}

/// Why well-formed JSON-RPC is still not an MCP message (a 30-digit id,
/// invalid UTF-8 in a string, nesting past the limit), without echoing it.
pub(super) fn unreadable(body: &[u8]) -> (i32, String) {
    match serde_json::from_slice::<serde_json::Value>(body) {
        Err(e) => (
            PARSE_ERROR,
            format!("parse error: the message is not valid JSON ({e})"),
        ),
        Ok(_) => (
            INVALID_REQUEST,
            "invalid request: not an MCP message (an id must be a string or an integer of at most 64 bits, and params must match the method)".to_string(),
        ),
    }
}

/// A caller that could not be authenticated; a store failure is the gateway's, not the caller's.
pub(super) fn auth_error(e: auth::Error) -> ErrorData {
    match e {
        auth::Error::Store(e) => {
            tracing::error!(error = %e, "store unavailable");
            ErrorData::internal_error("the gateway's store is unavailable", None)
        }
        other => ErrorData::new(ErrorCode(UNAUTHORIZED), other.to_string(), None),
    }
}

/// A meta-tool call that got no answer at all.
pub(super) fn refused(e: Refused) -> ErrorData {
    match e {
        Refused::Caller(e) => auth_error(e),
        Refused::Cancelled => ErrorData::internal_error("request cancelled", None),
    }
}

/// A task request that failed; an id that is not the caller's is an unknown
/// task, whatever the reason.
pub(super) fn task_error(id: &str, e: ExecuteError) -> ErrorData {
    match e {
        ExecuteError::NotFound(_) => ErrorData::invalid_params(format!("unknown task '{}'", quote(id)), None),
        ExecuteError::Downstream(e) => downstream_error(e),
        e => ErrorData::internal_error(e.to_string(), None),
    }
}

/// -32002 for a resource no server has, naming it in `data.uri` as SEP-2164
/// asks: whole, as the caller may match it (it is held to `MAX_URI_BYTES`
/// before it gets here), but with any credential redacted.
pub(super) fn unknown_resource(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(
        format!("unknown resource '{}'", quote(uri)),
        Some(json!({ "uri": leaks::redacted(uri) })),
    )
}

/// A `tools/call` of a name that is neither meta-tool nor a tool the caller
/// may call directly.
pub(super) fn unknown_tool(name: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "unknown tool '{}'; this gateway has {DISCOVERY} and {EXECUTE}",
            quote(name)
        ),
        None,
    )
}

/// A prompt no server the caller may see has.
pub(super) fn unknown_prompt(name: &str) -> ErrorData {
    ErrorData::invalid_params(format!("unknown prompt '{}'", quote(name)), None)
}

/// A resource template no server the caller may see lists (a completion's `ref/resource`).
pub(super) fn unknown_template(uri: &str) -> ErrorData {
    ErrorData::invalid_params(format!("unknown resource template '{}'", quote(uri)), None)
}

/// A skill no server the caller may see has.
pub(super) fn unknown_skill(uri: &str) -> ErrorData {
    ErrorData::invalid_params(format!("unknown skill '{}'", quote(uri)), None)
}

/// A prompt named bare that several of the caller's servers have.
pub(super) fn ambiguous_prompt(name: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "several servers have a prompt '{}'; name it as server:prompt",
            quote(name)
        ),
        None,
    )
}

/// A task request the gateway took and answered with nothing.
pub(super) fn unanswered_task(method: &str) -> ErrorData {
    ErrorData::internal_error(format!("{method} answered nothing"), None)
}

/// A caller's string over its bound (`wire.rs`): invalid params, naming
/// the field and the bound.
pub(super) fn too_long(e: TooLong) -> ErrorData {
    ErrorData::invalid_params(e.to_string(), None)
}

/// A method this gateway does not serve: -32601, naming it as any
/// caller's string is named.
pub(super) fn unknown_method(method: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("method not found: '{}'", quote(method)),
        None,
    )
}

/// Most bytes of a downstream's failure, or of its error's `data`, that
/// the caller gets: a server's text is quoted as a caller's is.
const DOWNSTREAM_TEXT_BYTES: usize = 1024;

/// A downstream's failure as the caller gets it.
pub(super) fn downstream_error(e: downstream::Error) -> ErrorData {
    match e {
        downstream::Error::Protocol { server, error } => relayed(&server, error),
        other => ErrorData::internal_error(leaks::redacted_head(&other.to_string(), DOWNSTREAM_TEXT_BYTES), None),
    }
}

/// A downstream's error `data` as the caller gets it: credentials
/// redacted, and none at all past [`DOWNSTREAM_TEXT_BYTES`] (a server's
/// echo of a caller's megabyte, say).
fn relayed_data(data: Option<Value>) -> Option<Value> {
    let mut data = data?;
    leaks::redact(&mut data);
    (serde_json::to_string(&data).map_or(0, |s| s.len()) <= DOWNSTREAM_TEXT_BYTES).then_some(data)
}

/// A downstream's JSON-RPC error, as the caller gets it. The 2026-07-28
/// codes about the hop itself (-32020 header mismatch, -32021 missing client
/// capability, -32022 unsupported protocol version) describe the gateway's
/// request to that server, not the caller's: passed on as they are, they
/// would tell the caller to fix what it did not do. They become an internal
/// error naming the server, with the server's code in `data`.
///
/// Either way the server's message and data are quoted as a caller's
/// string is: a server may echo what it was sent (`unknown prompt 'ghp_…'`).
fn relayed(server: &str, error: ErrorData) -> ErrorData {
    let about_the_hop = [
        ErrorCode::HEADER_MISMATCH,
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
    ];
    let message = quote(&error.message);
    let data = relayed_data(error.data);
    if !about_the_hop.contains(&error.code) {
        return ErrorData::new(error.code, message, data);
    }
    ErrorData::internal_error(
        format!(
            "server '{server}' refused the gateway's request to it ({message}, code {}); the gateway and that server disagree, not this request",
            error.code.0
        ),
        Some(json!({ "server": server, "downstreamCode": error.code.0, "downstreamData": data })),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 41: rmcp logged `unknown tool '<name>'` whole, credential and all.
    #[test]
    fn names_the_caller_sent_are_quoted_short_and_redacted() {
        let token = format!("mgwa_1_{}", "0123456789abcdef".repeat(4));
        let name = format!("x {token} {}", "y".repeat(1 << 20));
        for e in [
            unknown_tool(&name),
            unknown_prompt(&name),
            unknown_skill(&name),
            ambiguous_prompt(&name),
            unknown_resource(&name[..2000]),
            task_error(&name, ExecuteError::NotFound(String::new())),
        ] {
            let all = serde_json::to_string(&e).unwrap();
            assert!(all.len() < 4096, "{}", &all[..200]);
            assert!(!all.contains("0123456789abcdef"), "{all}");
            assert!(all.contains("[REDACTED:gateway-admin-token]"), "{all}");
        }
        assert_eq!(
            unknown_tool("calc").message,
            "unknown tool 'calc'; this gateway has tool_discovery and tool_execute"
        );
        assert_eq!(unknown_resource("demo://x").data.unwrap()["uri"], "demo://x");
        let method = unknown_method(&name);
        assert_eq!(method.code, ErrorCode::METHOD_NOT_FOUND);
        assert!(method.message.len() < 4096 && !method.message.contains("0123456789abcdef"));
    }

    /// Issue 71: a downstream's `unknown prompt 'ghp_…'` reached the caller whole.
    #[test]
    fn a_downstreams_words_are_quoted_as_a_callers_are() {
        let token = format!("ghp_{}", "A1b2C3d4E5".repeat(4));
        let theirs = ErrorData::invalid_params(
            format!("unknown prompt '{token}' {}", "y ".repeat(1 << 16)),
            Some(json!({ "name": token })),
        );
        let mapped = relayed("fs", theirs);
        assert_eq!(mapped.code, ErrorCode::INVALID_PARAMS, "the server's code stays");
        let all = serde_json::to_string(&mapped).unwrap();
        assert!(all.len() < 4096, "{}", &all[..200]);
        assert!(!all.contains(&token) && all.contains("[REDACTED:"), "{all}");
        let echoed = ErrorData::invalid_params("no", Some(json!({ "echo": "x".repeat(1 << 16) })));
        assert_eq!(relayed("fs", echoed).data, None, "too much data is dropped");
    }

    #[test]
    fn errors_about_the_downstream_hop_are_not_the_callers() {
        let hop = ErrorData::new(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY, "needs roots", None);
        let mapped = relayed("fs", hop);
        assert_eq!(mapped.code, ErrorCode::INTERNAL_ERROR);
        assert!(mapped.message.contains("server 'fs'") && mapped.message.contains("needs roots"));
        assert_eq!(mapped.data.unwrap()["downstreamCode"], -32021);
        for code in [ErrorCode::HEADER_MISMATCH, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION] {
            assert_eq!(
                relayed("fs", ErrorData::new(code, "x", None)).code,
                ErrorCode::INTERNAL_ERROR
            );
        }
        let theirs = ErrorData::resource_not_found("no such file", None);
        assert_eq!(
            relayed("fs", theirs.clone()),
            theirs,
            "the server's own answers pass as they are"
        );
    }
}
