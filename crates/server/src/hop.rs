//! What crosses the hop between the caller and a downstream: which `_meta`
//! keys travel on, and which extensions the caller declared.

use rmcp::RoleServer;
use rmcp::model::JsonObject;
use rmcp::service::RequestContext;

/// Whether the client advertised the extension `id`: per request
/// (2026-07-28 `_meta`) or at `initialize`; `None` when it said nothing.
pub(super) fn client_extension(ctx: &RequestContext<RoleServer>, id: &str) -> Option<bool> {
    if let Some(caps) = ctx.meta.get(vocab::wire::CLIENT_CAPABILITIES_META) {
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
    client_extension(ctx, vocab::wire::MCP_APPS_EXTENSION)
}

/// `_meta` keys that belong to this hop (protocol lifecycle, progress, caller
/// identity) and must not travel downstream.
pub(super) fn forwardable_meta(meta: &JsonObject) -> Option<JsonObject> {
    let kept: JsonObject = meta
        .iter()
        .filter(|(k, _)| {
            !k.starts_with("io.modelcontextprotocol/")
                && !k.starts_with(vocab::wire::GATEWAY_META_PREFIX)
                && !matches!(k.as_str(), "progressToken" | "token" | "projectId")
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (!kept.is_empty()).then_some(kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
