//! Tool listings and protocol revisions kept in the store across restarts,
//! keyed by a hash of how each server is reached (the hash keeps `env` and
//! header secrets out of the file).

use rmcp::model::Tool;
use sha2::Digest;

use super::ToolMemory;
use config::ServerConfig;
use store::Store;

impl ToolMemory for Store {
    fn recall(&self, server: &ServerConfig) -> Option<Vec<Tool>> {
        let json = self.remembered_tools(&server.name, &transport_key(server)).ok()??;
        serde_json::from_str(&json).ok()
    }

    fn remember(&self, server: &ServerConfig, tools: &[Tool]) {
        let Ok(json) = serde_json::to_string(tools) else { return };
        if let Err(e) = self.remember_tools(&server.name, &transport_key(server), &json) {
            tracing::warn!(server = %server.name, error = %e, "could not keep the tool listing");
        }
    }

    fn recall_protocol(&self, server: &ServerConfig) -> Option<String> {
        self.remembered_protocol(&server.name, &transport_key(server))
            .ok()
            .flatten()
    }

    fn remember_protocol(&self, server: &ServerConfig, protocol: &str) {
        if let Err(e) = self.keep_protocol(&server.name, &transport_key(server), protocol) {
            tracing::warn!(server = %server.name, error = %e, "could not keep the protocol revision");
        }
    }
}

fn transport_key(server: &ServerConfig) -> String {
    vocab::text::hex(&sha2::Sha256::digest(format!("{:?}", server.transport).as_bytes()))
}
