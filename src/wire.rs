//! The wire vocabulary every layer shares: the meta-tools' names, tool keys,
//! the gateway's own `_meta` keys, request ids and scores as they go out.
//! It sits at the ground so that built-ins, telemetry and the gateway name
//! these things without importing each other.

/// Name of the search meta-tool.
pub const DISCOVERY: &str = "tool_discovery";
/// Name of the execution meta-tool.
pub const EXECUTE: &str = "tool_execute";

/// Separates server and tool in a `toolKey`; server names may not contain it.
pub const KEY_SEPARATOR: char = ':';

/// `_meta` key carrying the caller's bearer token to built-in servers only
/// (they run in process; no other downstream ever receives it).
pub const CALLER_TOKEN_META: &str = "mcp-gateway/callerToken";
/// `_meta` key carrying the gateway's request id, for correlating logs.
pub const REQUEST_ID_META: &str = "mcp-gateway/requestId";
/// `_meta` key telling the Index built-in whether the caller renders MCP Apps.
pub const MCP_APPS_META: &str = "mcp-gateway/mcpApps";
/// The `_meta` key every 2026-07-28 request carries.
pub const PROTOCOL_VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of a 2026-07-28 client's capabilities.
pub const CLIENT_CAPABILITIES_META: &str = "io.modelcontextprotocol/clientCapabilities";

/// Builds `server:tool`.
pub fn tool_key(server: &str, tool: &str) -> String {
    format!("{server}{KEY_SEPARATOR}{tool}")
}

/// Splits `server:tool` (the tool part may itself contain `:`).
pub fn split_key(key: &str) -> Option<(&str, &str)> {
    key.split_once(KEY_SEPARATOR)
        .filter(|(s, t)| !s.is_empty() && !t.is_empty())
}

/// A fresh id for one upstream call, for logs and the audit row: a counter
/// from a random start, scrambled so that ids look unrelated. Unique within
/// the process without a system call per call (they are labels, not secrets).
pub fn request_id() -> String {
    static NEXT: std::sync::LazyLock<std::sync::atomic::AtomicU64> = std::sync::LazyLock::new(|| {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).unwrap_or_default();
        u64::from_le_bytes(bytes).into()
    });
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{:016x}", scramble(n))
}

/// SplitMix64's finalizer: a bijection on u64, so distinct counters stay distinct.
fn scramble(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A score rounded to three decimals, as it goes on the wire.
pub fn score(score: f32) -> f64 {
    (f64::from(score) * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_are_distinct_and_look_unrelated() {
        let ids: Vec<String> = (0..1000).map(|_| request_id()).collect();
        let distinct: std::collections::HashSet<&String> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len());
        assert!(ids.iter().all(|id| id.len() == 16));
        // Consecutive counters differ in about half their bits, not one.
        assert!((scramble(1) ^ scramble(2)).count_ones() > 16);
    }

    #[test]
    fn scores_go_on_the_wire_with_three_decimals() {
        let value = serde_json::to_value(score(0.084)).unwrap();
        assert_eq!(value.to_string(), "0.084");
        assert_eq!(serde_json::to_value(score(0.12345)).unwrap().to_string(), "0.123");
        assert_eq!(serde_json::to_value(score(1.0)).unwrap().to_string(), "1.0");
    }

    #[test]
    fn keys_split_at_the_first_colon() {
        assert_eq!(split_key("fs:read_file"), Some(("fs", "read_file")));
        assert_eq!(split_key("srv:ns:tool"), Some(("srv", "ns:tool")));
        assert_eq!(split_key("nokey"), None);
        assert_eq!(split_key(":tool"), None);
        assert_eq!(tool_key("fs", "read_file"), "fs:read_file");
    }
}
