//! Which generation a caller speaks, as far as input requests go: a 2026-07-28
//! client reads an `InputRequiredResult` itself; a 2025 client is asked over
//! its session instead (the gateway drives those rounds, `gateway/input.rs`).

use rmcp::RoleServer;
use rmcp::model::ClientCapabilities;
use rmcp::service::{Peer, RequestContext};

/// The session to ask over, when the caller is a 2025 client (it
/// initialized a session and sends no per-request protocol version); a 2026
/// client reads the `InputRequiredResult` itself.
pub(super) fn session_to_ask(ctx: &RequestContext<RoleServer>) -> Option<&Peer<RoleServer>> {
    (!ctx.meta.contains_key(crate::wire::PROTOCOL_VERSION_META) && ctx.peer.peer_info().is_some()).then_some(&ctx.peer)
}

/// The capabilities of a 2026-07-28 caller, which reads an
/// `InputRequiredResult` itself and retries with the answers; `None` for
/// any other.
pub(super) fn reads_input_requests(ctx: &RequestContext<RoleServer>) -> Option<ClientCapabilities> {
    if !ctx.meta.contains_key(crate::wire::PROTOCOL_VERSION_META) {
        return None;
    }
    let declared = ctx.meta.get(crate::wire::CLIENT_CAPABILITIES_META).cloned();
    Some(
        declared
            .and_then(|c| serde_json::from_value(c).ok())
            .unwrap_or_default(),
    )
}
