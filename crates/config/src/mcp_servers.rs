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
    /// Refuses a transport the gateway does not speak: `import` and
    /// `--config` read the same file the same way.
    fn check_kind(&self) -> Result<(), String> {
        match self.kind.as_deref() {
            None | Some("stdio" | "http" | "streamable-http" | "streamableHttp") => Ok(()),
            Some("sse") => Err(
                "the legacy SSE transport is not supported; use the server's streamable HTTP endpoint (often the same URL with /mcp for /sse)".into(),
            ),
            Some(kind) => Err(format!("unknown type '{kind}'; expected stdio or http")),
        }
    }

    /// Converts to a `[[servers]]` entry named `name`; `original` (its key
    /// in the file) becomes the title when it differs.
    pub(crate) fn into_raw(self, name: Spanned<String>, original: &str) -> Result<RawServer, String> {
        self.check_kind()?;
        let title = (name.get_ref() != original).then(|| original.to_string());
        Ok(RawServer {
            name,
            title,
            description: None,
            command: self.command,
            args: self.args,
            env: self.env,
            env_passthrough: Vec::new(),
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
            max_instances: None,
            stateless_instances: None,
            oauth: None,
            secrets: None,
            trusted_for_credentials: false,
            shared: true,
        })
    }
}

/// A server name for an `mcpServers` key, which may hold spaces and other
/// characters (`"Ant Design Components"` → `ant-design-components`): lower
/// case, every run of other characters one `-`.
pub fn server_name(key: &str) -> String {
    let mut name = String::with_capacity(key.len());
    for c in key.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '_' | '.') || (c == '-' && !name.ends_with('-')) {
            name.push(c.to_ascii_lowercase());
        } else if !name.is_empty() && !name.ends_with('-') {
            name.push('-');
        }
    }
    let name = name.trim_end_matches('-');
    if name.is_empty() {
        "server".into()
    } else {
        name.to_string()
    }
}

/// `import`'s output: the TOML, and which keys were renamed to what.
#[derive(Debug)]
pub struct Imported {
    /// `[[servers]]` entries.
    pub toml: String,
    /// `(original key, server name)` for every key that was not a valid name.
    pub renamed: Vec<(String, String)>,
}

/// Renders `mcpServers` entries as `[[servers]]` TOML, for `mcp-gateway import`.
pub fn to_toml(file: &McpServersFile) -> Result<Imported, String> {
    let mut text = String::new();
    let mut renamed = Vec::new();
    let mut taken: BTreeMap<String, &str> = BTreeMap::new();
    for (original, entry) in &file.mcp_servers {
        let name = server_name(original);
        if let Some(other) = taken.insert(name.clone(), original) {
            return Err(format!(
                "'{other}' and '{original}' both become server name '{name}'; rename one of them"
            ));
        }
        entry
            .check_kind()
            .map_err(|why| format!("server '{original}': {why}"))?;
        let title = (name != *original).then_some(original.as_str());
        if title.is_some() {
            renamed.push((original.clone(), name.clone()));
        }
        let chunk = entry_toml(&name, title, None, true, entry).map_err(|e| format!("server '{original}': {e}"))?;
        text.push_str(&chunk);
        text.push('\n');
    }
    Ok(Imported { toml: text, renamed })
}

/// One `[[servers]]` entry as TOML (`import`, and `add` from the MCP Registry);
/// `shared = false` is written when `shared` is not. The description reads
/// back as itself: the file's `${VAR}` there would read the environment.
pub fn entry_toml(
    name: &str,
    title: Option<&str>,
    description: Option<&str>,
    shared: bool,
    entry: &McpServerEntry,
) -> Result<String, toml::ser::Error> {
    #[derive(Serialize)]
    struct Out<'a> {
        servers: [Entry<'a>; 1],
    }
    #[derive(Serialize)]
    struct Entry<'a> {
        name: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<&'a str>,
        #[serde(flatten)]
        entry: &'a McpServerEntry,
        #[serde(skip_serializing_if = "Clone::clone")]
        shared: bool,
    }
    let mut entry = entry.clone();
    // `[[servers]]` has no `type` or `disabled`: the transport follows from
    // command/url, and a disabled entry is `enabled = false`.
    entry.kind = None;
    let disabled = std::mem::take(&mut entry.disabled);
    let description = description.map(super::interpolate::literal);
    let one = Out {
        servers: [Entry {
            name,
            title,
            description: description.as_deref(),
            entry: &entry,
            shared,
        }],
    };
    let mut chunk = toml::to_string(&one)?.replace("disabled = false\n", "");
    if disabled {
        chunk.push_str("enabled = false\n");
    }
    Ok(chunk)
}

/// Why the config text `after` is not `before` with `entry` (one
/// `[[servers]]` entry, as [`entry_toml`] wrote it) added and nothing else
/// changed: compared as TOML, so no comment or spacing hides a table.
pub fn check_appended(before: &str, after: &str, entry: &str) -> Result<(), String> {
    let table = |text: &str| text.parse::<toml::Table>().map_err(|e| e.to_string());
    let (mut before, mut after, mut entry) = (table(before)?, table(after)?, table(entry)?);
    let (old, new, one) = (servers(&mut before)?, servers(&mut after)?, servers(&mut entry)?);
    if new.len() != old.len() + 1 {
        return Err(format!("it has {} servers, not {}", new.len(), old.len() + 1));
    }
    if new[..old.len()] != old[..] {
        return Err("it changes servers already there".into());
    }
    if new.last() != one.first() {
        return Err("its new [[servers]] entry is not the one written".into());
    }
    let changed: Vec<&str> = before
        .keys()
        .chain(after.keys())
        .filter(|k| before.get(*k) != after.get(*k))
        .map(String::as_str)
        .collect();
    if !changed.is_empty() {
        return Err(format!("it changes {}", changed.join(", ")));
    }
    Ok(())
}

/// The `servers` array, taken out of `table`.
fn servers(table: &mut toml::Table) -> Result<Vec<toml::Value>, String> {
    match table.remove("servers") {
        None => Ok(Vec::new()),
        Some(toml::Value::Array(servers)) => Ok(servers),
        Some(_) => Err("its `servers` is not a list of [[servers]] tables".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;
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
        let toml_text = to_toml(&file).unwrap().toml;
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

    #[test]
    fn keys_that_are_not_server_names_are_renamed_and_kept_as_titles() {
        assert_eq!(server_name("Ant Design Components"), "ant-design-components");
        assert_eq!(server_name("  GitHub (work) / v2 "), "github-work-v2");
        assert_eq!(server_name("fs.local_1"), "fs.local_1");
        assert_eq!(server_name("服务"), "server");

        let json = r#"{ "mcpServers": {
            "Ant Design Components": { "command": "npx", "args": ["-y", "@jzone-mcp/antd-components-mcp"] },
            "filesystem": { "command": "npx" } } }"#;
        let file: McpServersFile = serde_json::from_str(json).unwrap();
        let imported = to_toml(&file).unwrap();
        assert_eq!(
            imported.renamed,
            [("Ant Design Components".to_string(), "ant-design-components".to_string())]
        );
        let config = Config::parse(&imported.toml, "imported", Path::new("/")).unwrap();
        let ant = config
            .servers
            .iter()
            .find(|s| s.name == "ant-design-components")
            .unwrap();
        assert_eq!(ant.title.as_deref(), Some("Ant Design Components"));
        assert_eq!(ant.about().as_deref(), Some("Ant Design Components"));

        let clash = r#"{ "mcpServers": { "My Server": { "command": "a" }, "my-server": { "command": "b" } } }"#;
        let err = to_toml(&serde_json::from_str(clash).unwrap()).unwrap_err();
        assert!(err.contains("'My Server'") && err.contains("'my-server'"), "{err}");
    }

    #[test]
    fn a_description_reads_back_as_itself_not_from_the_environment() {
        let entry = McpServerEntry {
            command: Some("x".into()),
            ..Default::default()
        };
        let text = entry_toml("probe", Some("${PATH}"), Some("Reads ${PATH} for $5"), true, &entry).unwrap();
        let config = Config::parse(&text, "added", Path::new("/")).unwrap();
        let probe = config.servers.iter().find(|s| s.name == "probe").unwrap();
        assert_eq!(probe.description.as_deref(), Some("Reads ${PATH} for $5"));
        assert_eq!(probe.title.as_deref(), Some("${PATH}"));
    }

    #[test]
    fn only_one_more_server_and_nothing_else_is_an_append() {
        let before = "[[servers]]\nname = \"demo\"\ncommand = \"x\"\n";
        let entry = "[[servers]]\nname = \"new\"\ncommand = \"y\"\n";
        let appended = |extra: &str| format!("{before}\n# comment{extra}\n{entry}");
        assert_eq!(check_appended(before, &appended(""), entry), Ok(()));
        assert_eq!(check_appended("", entry, entry), Ok(()), "the first server");
        let pwned = "\n[[servers]]\nname = \"pwned\"\ncommand = \"sh\"";
        let cases = [
            (appended(pwned), "it has 3 servers, not 2"),
            (appended("\n[security]\nsecrets = \"off\""), "it changes security"),
            (appended("\ntimeout_ms = 1"), "it changes servers already there"),
            (
                format!("{}enabled = false\n", appended("")),
                "its new [[servers]] entry is not the one written",
            ),
            (
                format!("{}\n[[rules]]\npattern = [\"*\"]\nenabled = false\n", appended("")),
                "it changes rules",
            ),
        ];
        for (after, why) in cases {
            assert_eq!(check_appended(before, &after, entry), Err(why.to_string()), "{after}");
        }
    }
}
