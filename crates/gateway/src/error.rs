//! Why `tool_execute` produced no downstream result, and the result the
//! model reads instead: a message it can act on, and a code.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::json;

use crate::security;
use leaks::quote;
use vocab::keys::ToolKey;
use vocab::outcome::Outcome;
use vocab::wire::split_key;

/// Why `tool_execute` produced no downstream result. Each maps to one code
/// of the engine spec, returned to the model as an `isError` result. A key
/// the caller sent (not one of the catalog's) is quoted as any caller's
/// string is ([`quote`]): short, on one line, without a credential.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExecuteError {
    /// No such key, or a key the caller may not use: the same answer for both.
    #[error("unknown toolKey '{}'; call tool_discovery to find available tools", quote(.0))]
    NotFound(String),
    /// A tool's name where its key belongs, when exactly one tool the caller
    /// may run has that name: the error names the key.
    #[error("'{}' is a tool's name, not a toolKey: call it with toolKey '{key}'", quote(.name))]
    NameNotKey {
        /// What the caller sent.
        name: String,
        /// The key of the one tool of that name.
        key: ToolKey,
    },
    /// The key's server, one the caller may see, is still in its first
    /// connection after the wait (`[startup] wait_ms`).
    #[error(
        "server '{server}' is still starting, so '{}' is not known yet; call tool_execute again in a few seconds",
        quote(.key)
    )]
    Starting {
        /// The tool.
        key: String,
        /// Its server.
        server: String,
    },
    /// The arguments break the tool's `inputSchema`.
    #[error("arguments for '{key}' do not match its inputSchema: {}", violations.join("; "))]
    Invalid {
        /// The tool.
        key: ToolKey,
        /// Every violation.
        violations: Vec<String>,
    },
    /// The downstream call failed (server down, timeout, crash, protocol error).
    #[error(transparent)]
    Downstream(#[from] downstream::Error),
    /// The project's own credential for the server cannot be used.
    #[error(transparent)]
    Credential(#[from] crate::vault::Error),
    /// The tool waits for an operator's review (changed, or hostile-looking).
    #[error(
        "'{key}' is held for review: {why}. It can run again once an operator approves it (mcp-gateway tools approve {approve})"
    )]
    Held {
        /// The tool, as the caller named it.
        key: String,
        /// The tool as its server names it, which review pins.
        approve: String,
        /// Why it is held.
        why: String,
    },
    /// A `[[limits]]` entry is reached for the caller's project.
    #[error(
        "'{key}' has reached its limit of {limit} for project '{project}'; one more call fits at {} (in {})",
        utc(*retry_at),
        in_words(*retry_after)
    )]
    Limited {
        /// The tool, as the caller named it.
        key: String,
        /// The limit, in words: "10 calls a minute".
        limit: String,
        /// The caller's project.
        project: String,
        /// Seconds until one more call fits.
        retry_after: u64,
        /// When that is (unix seconds).
        retry_at: i64,
    },
    /// The server asks its user for input that this client cannot give.
    #[error("'{key}' asks its user for input, but {why}")]
    InputUnanswered {
        /// The tool.
        key: String,
        /// Why the question could not be put or answered.
        why: String,
    },
    /// A retry's `requestState` names no call waiting for input.
    #[error(transparent)]
    UnknownState(#[from] super::rounds_parked::Unknown),
    /// The arguments or the result carry a credential, and the policy blocks it.
    #[error(transparent)]
    Secret(#[from] security::Blocked),
    /// A task the downstream made of the call did not end in a result.
    #[error("{0}")]
    Task(String),
    /// The call's `started` row could not be written: it was not run.
    #[error("{0}; the gateway runs no tool it cannot audit, so nothing ran: try again shortly")]
    NotAudited(store::Unwritten),
    /// The call ran, and its outcome row could not be written: its answer is withheld.
    #[error(
        "'{}' ran, but {why}; the gateway answers no call it cannot audit (the row is kept, and written when the store is back)",
        quote(.key)
    )]
    AnswerWithheld {
        /// The tool, or the meta-tool for a discovery.
        key: String,
        /// Why the row was not written.
        why: store::Unwritten,
    },
    /// The result is larger than the server's `max_result_bytes`.
    #[error(
        "the result of '{key}' is {bytes} bytes, more than this server's limit of {limit} bytes (max_result_bytes); ask for less, e.g. a smaller page or range"
    )]
    TooLarge {
        /// The tool.
        key: ToolKey,
        /// Its size as JSON.
        bytes: u64,
        /// The server's limit.
        limit: u64,
    },
}

/// The code of a call refused, or an answer withheld, for want of its audit row.
pub(super) const AUDIT_UNAVAILABLE: &str = "AUDIT_UNAVAILABLE";

impl ExecuteError {
    /// How a call that ended in this error is audited: refused (the caller
    /// may not run it), timed out, or failed.
    pub fn outcome(&self) -> Outcome {
        match self {
            ExecuteError::NotFound(_)
            | ExecuteError::NameNotKey { .. }
            | ExecuteError::Held { .. }
            | ExecuteError::Secret(_)
            | ExecuteError::Limited { .. } => Outcome::Denied,
            ExecuteError::Downstream(downstream::Error::Timeout { .. }) => Outcome::Timeout,
            _ => Outcome::Failed,
        }
    }

    /// The engine spec's error code.
    pub fn code(&self) -> &'static str {
        match self {
            ExecuteError::NotFound(_) | ExecuteError::NameNotKey { .. } => "TOOL_NOT_FOUND",
            ExecuteError::Starting { .. } => "SERVER_STARTING",
            ExecuteError::Invalid { .. } => "TOOL_VALIDATION_ERROR",
            ExecuteError::Downstream(downstream::Error::Timeout { .. }) => "TOOL_EXECUTION_TIMEOUT",
            ExecuteError::Downstream(_) | ExecuteError::Task(_) => "TOOL_EXECUTION_ERROR",
            ExecuteError::TooLarge { .. } => "TOOL_RESULT_TOO_LARGE",
            ExecuteError::NotAudited(_) | ExecuteError::AnswerWithheld { .. } => AUDIT_UNAVAILABLE,
            ExecuteError::Held { .. } => "TOOL_HELD_FOR_REVIEW",
            ExecuteError::Limited { .. } => "TOOL_LIMIT_REACHED",
            ExecuteError::InputUnanswered { .. } => "TOOL_INPUT_UNANSWERED",
            ExecuteError::UnknownState(_) => "UNKNOWN_REQUEST_STATE",
            ExecuteError::Secret(b) if b.direction == config::security::Direction::Arguments => "SECRET_IN_ARGUMENTS",
            ExecuteError::Secret(_) => "SECRET_IN_RESULT",
            ExecuteError::Credential(crate::vault::Error::SignInRequired { .. }) => "SIGN_IN_REQUIRED",
            ExecuteError::Credential(_) => "CREDENTIAL_ERROR",
        }
    }

    /// The key of the tool the error is about, when the error carries one
    /// the catalog resolved for the caller (a tool it may see, or one held
    /// for review): never a key only the caller vouches for.
    fn resolved_key(&self) -> Option<&str> {
        match self {
            ExecuteError::Invalid { key, .. }
            | ExecuteError::TooLarge { key, .. }
            | ExecuteError::NameNotKey { key, .. } => Some(key.as_str()),
            ExecuteError::Held { key, .. }
            | ExecuteError::InputUnanswered { key, .. }
            | ExecuteError::Limited { key, .. } => Some(key.as_str()),
            ExecuteError::Secret(b) => Some(b.key.as_str()),
            _ => None,
        }
    }

    /// The server the error is about when no resolved key says it: one
    /// still starting (which the caller may see), or the one a downstream
    /// call failed on.
    fn server(&self) -> Option<&str> {
        match self {
            ExecuteError::Starting { server, .. }
            | ExecuteError::Downstream(
                downstream::Error::NotRunning { server, .. }
                | downstream::Error::Timeout { server, .. }
                | downstream::Error::Closed { server }
                | downstream::Error::Protocol { server, .. }
                | downstream::Error::TooLarge { server, .. }
                | downstream::Error::TooManyInstances { server, .. }
                | downstream::Error::SignInRequired { server }
                | downstream::Error::Other { server, .. },
            ) => Some(server.as_str()),
            _ => None,
        }
    }

    /// As a tool result the model can read and act on.
    pub fn into_result(self) -> CallToolResult {
        self.into_result_for(None)
    }

    /// As a tool result, for a call whose key, `resolved`, the catalog
    /// resolved for the caller (None when it did not, or is not known).
    ///
    /// `error` is the engine spec's `ExecutionError {code, message, server,
    /// tool}`: `server` and `tool` are the parts of the key (`tool` as the
    /// caller sees it, renamed or not) when the error is about a real tool,
    /// and `server` alone when only the server is known (one still
    /// starting; a downstream failure). An unknown key sets neither:
    /// splitting the caller's own string into fields would dress it up as
    /// a tool that exists, for a key that may name one the caller may not
    /// see (a denied tool reads as unknown); the message quotes it already.
    pub fn into_result_for(self, resolved: Option<&str>) -> CallToolResult {
        let mut error = json!({ "code": self.code(), "message": self.to_string() });
        match resolved.or(self.resolved_key()).and_then(split_key) {
            Some((server, tool)) => {
                error["server"] = json!(server);
                error["tool"] = json!(tool);
            }
            None => {
                if let Some(server) = self.server() {
                    error["server"] = json!(server);
                }
            }
        }
        match &self {
            ExecuteError::Invalid { violations, .. } => error["violations"] = json!(violations),
            ExecuteError::Secret(b) => error["kinds"] = json!(b.kinds),
            ExecuteError::Limited {
                retry_after, retry_at, ..
            } => {
                error["retryAfter"] = json!(retry_after);
                error["retryAt"] = json!(utc(*retry_at));
            }
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

/// `at` (unix seconds) as an RFC 3339 UTC time, to the second.
fn utc(at: i64) -> String {
    chrono::DateTime::from_timestamp(at, 0)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_else(|| format!("{at} s after 1970"))
}

/// `seconds` as a person reads a wait: "19 s", "1 min 10 s", "23 h 3 min".
fn in_words(seconds: u64) -> String {
    let (h, m, s) = (seconds / 3600, seconds % 3600 / 60, seconds % 60);
    match (h, m) {
        (0, 0) => format!("{s} s"),
        (0, _) if s == 0 => format!("{m} min"),
        (0, _) => format!("{m} min {s} s"),
        _ if m == 0 => format!("{h} h"),
        _ => format!("{h} h {m} min"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_carry_engine_codes() {
        let e = ExecuteError::Invalid {
            key: ToolKey::new("a", "b"),
            violations: vec!["x".into()],
        };
        assert_eq!(e.code(), "TOOL_VALIDATION_ERROR");
        let r = e.into_result();
        assert_eq!(r.is_error, Some(true));
        assert_eq!(r.structured_content.unwrap()["error"]["violations"][0], "x");
        assert_eq!(ExecuteError::NotFound("k".into()).code(), "TOOL_NOT_FOUND");
    }

    /// `error.server` and `error.tool` of a result; None where absent.
    fn named(r: &CallToolResult) -> (Option<&str>, Option<&str>) {
        let error = &r.structured_content.as_ref().expect("structuredContent")["error"];
        let field = |name: &str| error.get(name).and_then(serde_json::Value::as_str);
        (field("server"), field("tool"))
    }

    /// Issue 44: the seed's `ExecutionError {code, message, server, tool}`
    /// had no `server` or `tool`.
    #[test]
    fn an_error_about_a_tool_names_its_server_and_tool() {
        let invalid = ExecuteError::Invalid {
            key: ToolKey::new("demo", "calculate"),
            violations: vec!["/expression: expected a string".into()],
        };
        let r = invalid.into_result();
        assert_eq!(named(&r), (Some("demo"), Some("calculate")));

        // A downstream failure names its server itself, and the tool once
        // the call's key is known (the key's tool, not the server's name for it).
        let timeout = || {
            ExecuteError::Downstream(downstream::Error::Timeout {
                server: "demo".into(),
                tool: "slow_inner_name".into(),
                after: std::time::Duration::from_millis(10),
            })
        };
        assert_eq!(named(&timeout().into_result()), (Some("demo"), None));
        let r = timeout().into_result_for(Some("demo:slow"));
        assert_eq!(named(&r), (Some("demo"), Some("slow")));
        // A tool's name may hold the separator; a server's may not.
        let r = ExecuteError::Task("task t1 was cancelled".into()).into_result_for(Some("fs:a:b"));
        assert_eq!(named(&r), (Some("fs"), Some("a:b")));
    }

    /// An unknown key is the caller's string, not a tool: it is quoted in
    /// the message and never split into fields; a starting server is real.
    #[test]
    fn an_unknown_key_names_no_server_or_tool() {
        let r = ExecuteError::NotFound("fs:nope".into()).into_result();
        assert_eq!(named(&r), (None, None));
        let starting = ExecuteError::Starting {
            key: "fs:maybe".into(),
            server: "fs".into(),
        };
        assert_eq!(named(&starting.into_result_for(None)), (Some("fs"), None));
    }

    /// Issue 41: an unknown key was echoed whole, credential and all.
    #[test]
    fn a_callers_key_is_quoted_short_and_redacted() {
        let message = ExecuteError::NotFound("fs:nope".into()).to_string();
        assert_eq!(
            message,
            "unknown toolKey 'fs:nope'; call tool_discovery to find available tools"
        );
        let token = format!("mgwa_3_{}", "0123456789abcdef".repeat(4));
        let huge = format!("fs:{token} {}", "x ".repeat(1 << 19));
        for e in [
            ExecuteError::NotFound(huge.clone()),
            ExecuteError::Starting {
                key: huge.clone(),
                server: "fs".into(),
            },
        ] {
            let message = e.to_string();
            assert!(message.len() < 1024, "{message}");
            assert!(!message.contains("0123456789abcdef"), "{message}");
            assert!(message.contains("[REDACTED:gateway-admin-token]"), "{message}");
        }
    }
}
