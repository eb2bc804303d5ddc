//! Which generation a caller speaks, as far as input requests go: a 2026-07-28
//! client reads an `InputRequiredResult` itself; a 2025 client is asked over
//! its session instead (the gateway drives those rounds, `gateway/rounds_over_session.rs`).

use rmcp::RoleServer;
#[allow(deprecated)] // logging: deprecated by 2026-07-28, which keeps a per-request level
use rmcp::model::{ClientCapabilities, LoggingLevel};
use rmcp::service::{Peer, RequestContext};

use downstream::mid_call::LogTo;

/// The session to ask over, when the caller is a 2025 client (it
/// initialized a session and sends no per-request protocol version); a 2026
/// client reads the `InputRequiredResult` itself.
pub(super) fn session_to_ask(ctx: &RequestContext<RoleServer>) -> Option<&Peer<RoleServer>> {
    (!ctx.meta.contains_key(vocab::wire::PROTOCOL_VERSION_META) && ctx.peer.peer_info().is_some()).then_some(&ctx.peer)
}

/// The capabilities of a 2026-07-28 caller, which reads an
/// `InputRequiredResult` itself and retries with the answers; `None` for
/// any other.
pub(super) fn reads_input_requests(ctx: &RequestContext<RoleServer>) -> Option<ClientCapabilities> {
    if !ctx.meta.contains_key(vocab::wire::PROTOCOL_VERSION_META) {
        return None;
    }
    let declared = ctx.meta.get(vocab::wire::CLIENT_CAPABILITIES_META).cloned();
    Some(
        declared
            .and_then(|c| serde_json::from_value(c).ok())
            .unwrap_or_default(),
    )
}

/// Where a call's downstream log messages go: a 2026-07-28 caller's request
/// stream, from the level its `_meta` names (none without one); a 2025
/// session, from the level it set with `logging/setLevel` (every level
/// until it sets one: the server decides, and the gateway passes on what
/// its servers send). `caller` names whose call it is.
#[allow(deprecated)]
pub(super) fn log_to(ctx: &RequestContext<RoleServer>, session_level: Option<LoggingLevel>, caller: String) -> LogTo {
    let level = match ctx.meta.contains_key(vocab::wire::PROTOCOL_VERSION_META) {
        true => ctx.meta.log_level(),
        false => Some(session_level.unwrap_or(LoggingLevel::Debug)),
    };
    LogTo {
        peer: ctx.peer.clone(),
        level,
        caller,
    }
}
