//! What crosses the hop between the caller and a downstream: which `_meta`
//! keys travel on, which extensions the caller declared, and how a
//! downstream's error reads to the caller.

use rmcp::RoleServer;
use rmcp::model::{ErrorData, JsonObject};
use rmcp::service::RequestContext;
use serde_json::json;

/// Whether the client advertised the extension `id`: per request
/// (2026-07-28 `_meta`) or at `initialize`; `None` when it said nothing.
pub(super) fn client_extension(ctx: &RequestContext<RoleServer>, id: &str) -> Option<bool> {
    if let Some(caps) = ctx.meta.get(crate::wire::CLIENT_CAPABILITIES_META) {
        return Some(caps.get("extensions").and_then(|e| e.get(id)).is_some());
    }
    let info = ctx.peer.peer_info()?;
    Some(
        info.capabilities
            .extensions
            .as_ref()
            .is_some_and(|e| e.contains_key(id)),
    )
}

/// Whether the client advertised the MCP Apps extension.
pub(super) fn client_has_mcp_apps(ctx: &RequestContext<RoleServer>) -> Option<bool> {
    client_extension(ctx, "io.modelcontextprotocol/ui")
}

/// `_meta` keys the gateway itself sets for downstreams; a client cannot supply them.
const GATEWAY_META_PREFIX: &str = "mcp-gateway/";

/// `_meta` keys that belong to this hop (protocol lifecycle, progress, caller
/// identity) and must not travel downstream.
pub(super) fn forwardable_meta(meta: &JsonObject) -> Option<JsonObject> {
    let kept: JsonObject = meta
        .iter()
        .filter(|(k, _)| {
            !k.starts_with("io.modelcontextprotocol/")
                && !k.starts_with(GATEWAY_META_PREFIX)
                && !matches!(k.as_str(), "progressToken" | "token" | "projectId")
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (!kept.is_empty()).then_some(kept)
}

pub(super) fn downstream_error(e: crate::downstream::Error) -> ErrorData {
    match e {
        crate::downstream::Error::Protocol { server, error } => relayed(&server, error),
        other => ErrorData::internal_error(other.to_string(), None),
    }
}

/// A downstream's JSON-RPC error, as the caller gets it. The 2026-07-28
/// codes about the hop itself (-32020 header mismatch, -32021 missing client
/// capability, -32022 unsupported protocol version) describe the gateway's
/// request to that server, not the caller's: passed on as they are, they
/// would tell the caller to fix what it did not do. They become an internal
/// error naming the server, with the server's code in `data`.
fn relayed(server: &str, error: ErrorData) -> ErrorData {
    use rmcp::model::ErrorCode;
    let about_the_hop = [
        ErrorCode::HEADER_MISMATCH,
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
    ];
    if !about_the_hop.contains(&error.code) {
        return error;
    }
    ErrorData::internal_error(
        format!(
            "server '{server}' refused the gateway's request to it ({}, code {}); the gateway and that server disagree, not this request",
            error.message, error.code.0
        ),
        Some(json!({ "server": server, "downstreamCode": error.code.0, "downstreamData": error.data })),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_about_the_downstream_hop_are_not_the_callers() {
        use rmcp::model::ErrorCode;
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

    #[test]
    fn lifecycle_and_identity_meta_stay_here() {
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "progressToken": 3,
            "token": "secret",
            "projectId": "p",
            "traceparent": "00-abc"
        });
        let kept = forwardable_meta(meta.as_object().unwrap()).unwrap();
        assert_eq!(kept.keys().collect::<Vec<_>>(), ["traceparent"]);
        assert!(forwardable_meta(json!({"token": "x"}).as_object().unwrap()).is_none());
    }
}
