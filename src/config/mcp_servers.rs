//! The `mcpServers` shape of Claude Desktop, Cursor and `.mcp.json` files.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::RawServer;

/// A whole `claude_desktop_config.json` / `.mcp.json`; other top-level keys are ignored.
#[derive(Debug, Deserialize)]
pub struct McpServersFile {
    /// Servers by name.
    #[serde(rename = "mcpServers")]
    pub mcp_servers: BTreeMap<String, McpServerEntry>,
}

/// One entry. Unknown keys (`autoApprove`, `alwaysAllow`...) belong to other
/// tools and are ignored rather than refused.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct McpServerEntry {
    /// `stdio`, `http`, `streamable-http` or `sse`; inferred when absent.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Program of a stdio server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Its environment.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Its working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Endpoint of a remote server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Headers for `url`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Cursor-style switch.
    #[serde(default)]
    pub disabled: bool,
}

impl McpServerEntry {
    /// Converts to a `[[servers]]` entry named `name`.
    pub fn into_raw(self, name: Spanned<String>) -> Result<RawServer, String> {
        if self.kind.as_deref() == Some("sse") {
            return Err("the legacy SSE transport is not supported; use the server's streamable HTTP endpoint".into());
        }
        if let Some(kind) = self.kind.as_deref()
            && !matches!(kind, "stdio" | "http" | "streamable-http" | "streamableHttp")
        {
            return Err(format!("unknown type '{kind}'; expected stdio or http"));
        }
        Ok(RawServer {
            name,
            description: None,
            command: self.command,
            args: self.args,
            env: self.env,
            cwd: self.cwd,
            url: self.url,
            headers: self.headers,
            enabled: !self.disabled,
            timeout_ms: None,
            connect_timeout_ms: None,
            max_result_bytes: None,
            start: None,
            idle_timeout_ms: None,
            tools_ttl_ms: None,
        })
    }
}

/// Renders `mcpServers` entries as `[[servers]]` TOML, for `mcp-gateway import`.
pub fn to_toml(file: &McpServersFile) -> Result<String, String> {
    #[derive(Serialize)]
    struct Out<'a> {
        servers: Vec<Entry<'a>>,
    }
    #[derive(Serialize)]
    struct Entry<'a> {
        name: &'a str,
        #[serde(flatten)]
        entry: &'a McpServerEntry,
    }
    let mut text = String::new();
    for (name, entry) in &file.mcp_servers {
        let mut entry = entry.clone();
        // `[[servers]]` has no `type` or `disabled`: the transport follows from
        // command/url, and a disabled entry is `enabled = false`.
        entry.kind = None;
        let disabled = std::mem::take(&mut entry.disabled);
        let one = Out {
            servers: vec![Entry { name, entry: &entry }],
        };
        let mut chunk = toml::to_string(&one).map_err(|e| format!("server '{name}': {e}"))?;
        chunk = chunk.replace("disabled = false\n", "");
        if disabled {
            chunk.push_str("enabled = false\n");
        }
        text.push_str(&chunk);
        text.push('\n');
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use std::path::Path;

    #[test]
    fn claude_desktop_file_converts_to_servers() {
        let json = r#"{
          "mcpServers": {
            "filesystem": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "autoApprove": [] },
            "remote": { "type": "http", "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer ${TOKEN:-x}" } },
            "off": { "command": "x", "disabled": true }
          },
          "globalShortcut": "Ctrl+Space"
        }"#;
        let file: McpServersFile = serde_json::from_str(json).unwrap();
        let toml_text = to_toml(&file).unwrap();
        let config = Config::parse(&toml_text, "imported", Path::new("/")).unwrap();
        let names: Vec<_> = config.servers.iter().map(|s| (s.name.as_str(), s.enabled)).collect();
        assert_eq!(
            names,
            [
                ("filesystem", true),
                ("off", false),
                ("remote", true),
                ("index", true),
                ("archives", true)
            ]
        );
        assert!(
            toml_text.contains("${TOKEN:-x}"),
            "secrets stay as references: {toml_text}"
        );
    }
}
