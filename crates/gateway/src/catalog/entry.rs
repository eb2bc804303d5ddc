//! One tool of one running server, as the catalog holds it: what callers
//! see of it (an operator's `[[overrides]]` applied), what search reads, and
//! the server's own key behind it.

use std::collections::HashSet;
use std::sync::{Arc, OnceLock};

use rmcp::model::Tool;
use serde_json::Value;
use tracing::{error, warn};

use super::apps;
use config::ToolOverride;
use search::semantic;
use vocab::keys::{ServerName, ToolKey};

/// One tool of one running server.
#[derive(Debug)]
pub struct Entry {
    /// `server:tool`, as callers see it (renamed by an override).
    pub key: ToolKey,
    /// `server:tool` as the server names it: what the server is called with,
    /// what grants and rules match, and what the audit log keeps.
    pub real_key: ToolKey,
    /// The server's name.
    pub server: ServerName,
    /// The tool as the server listed it, an override's name and description applied.
    pub tool: Tool,
    /// Tags from the rules that match it, and from its override.
    pub tags: Vec<String>,
    /// The server's description from the config (searched too).
    pub server_description: Option<String>,
    /// Parameter names and descriptions, flattened for search.
    pub(super) params: String,
    /// Position of its server in the snapshot's servers.
    pub(super) server_ordinal: u32,
    /// Hash of what a client sees of it (key, description, schemas, tags).
    pub(super) fingerprint: u64,
    /// Compiled on first use: most tools are never called.
    validator: OnceLock<Option<Arc<jsonschema::Validator>>>,
    /// Whether it carries an MCP App ([`apps::template`]).
    has_app: bool,
    /// Whether it is for its App alone ([`apps::app_only`]): discovery leaves it out.
    app_only: bool,
}

impl Entry {
    /// `tool` of `server` as callers see it with `shape` (an operator's
    /// `[[overrides]]` entry) applied: its name, description and tags.
    pub(crate) fn shaped(server: &str, mut tool: Tool, mut tags: Vec<String>, shape: Option<&ToolOverride>) -> Self {
        use std::hash::{Hash, Hasher};
        let real_key = ToolKey::new(server, &tool.name);
        if let Some(shape) = shape {
            if let Some(name) = &shape.name {
                tool.name = name.clone().into();
            }
            if let Some(description) = &shape.description {
                tool.description = Some(description.clone().into());
            }
            for tag in &shape.tags {
                if !tags.contains(tag) {
                    tags.push(tag.clone());
                }
            }
        }
        let key = ToolKey::new(server, &tool.name);
        let mut hasher = std::hash::DefaultHasher::new();
        (key.as_str(), &tags).hash(&mut hasher);
        serde_json::to_string(&tool).unwrap_or_default().hash(&mut hasher);
        Self {
            fingerprint: hasher.finish(),
            key,
            real_key,
            server: ServerName::new(server),
            params: parameter_text(&tool),
            has_app: apps::template(tool.meta.as_deref()).is_some(),
            app_only: apps::app_only(tool.meta.as_deref()),
            tool,
            tags,
            server_description: None,
            server_ordinal: 0,
            validator: OnceLock::new(),
        }
    }

    /// The tool's name as its server knows it.
    pub fn real_name(&self) -> &str {
        self.real_key.tool()
    }

    /// Whether it carries an MCP App, which a host renders only for a tool it listed.
    pub fn has_app(&self) -> bool {
        self.has_app
    }

    /// Whether it is for its App alone: discovery leaves it out, and only a
    /// call by its listed name runs it.
    pub fn app_only(&self) -> bool {
        self.app_only
    }

    /// Whether it is listed for Apps on the `meta` exposure: it carries one,
    /// or is for one alone.
    pub fn for_apps(&self) -> bool {
        self.has_app || self.app_only
    }

    /// The text the embedding model sees for this tool.
    pub(super) fn semantic_text(&self) -> String {
        semantic::tool_text(
            &self.server,
            &self.tool.name,
            self.tool.description.as_deref(),
            &self.params,
        )
    }

    /// The text search sees for this tool.
    pub fn text(&self) -> search::bm25::ToolText<'_> {
        search::bm25::ToolText {
            server: &self.server,
            server_description: self.server_description.as_deref(),
            name: &self.tool.name,
            title: self
                .tool
                .title
                .as_deref()
                .or(self.tool.annotations.as_ref().and_then(|a| a.title.as_deref())),
            description: self.tool.description.as_deref(),
            params: &self.params,
            tags: &self.tags,
        }
    }

    /// Checks `arguments` against the tool's `inputSchema`; every violation at once.
    ///
    /// A schema that does not compile cannot be enforced here; the call then
    /// goes through and the server judges its own input. Known `format`s
    /// (`uuid`, `date-time`, `email`...) are asserted: a schema that names
    /// one means it, and the caller hears about it with the other violations.
    pub fn check_arguments(&self, arguments: &Value) -> Result<(), Vec<String>> {
        let validator = self.validator.get_or_init(|| {
            let schema = Value::Object((*self.tool.input_schema).clone());
            match jsonschema::options().should_validate_formats(true).build(&schema) {
                Ok(v) => Some(Arc::new(v)),
                Err(e) => {
                    error!(tool = %self.key, error = %e, "inputSchema does not compile; arguments are not checked");
                    None
                }
            }
        });
        let Some(validator) = validator else { return Ok(()) };
        let errors: Vec<String> = validator
            .iter_errors(arguments)
            .map(|e| {
                let at = e.instance_path().to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("{at}: {e}")
                }
            })
            .collect();
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }
}

/// The names overrides gave one server's tools so far, so that no two
/// tools of a server answer to one name.
#[derive(Debug, Default)]
pub(super) struct Renames(HashSet<String>);

impl Renames {
    /// Whether `shape` may apply among the server's `tools`: it renames
    /// nothing, or to a name no tool of the server has and no other
    /// override took. One that may not is logged and left out whole.
    pub(super) fn take(&mut self, shape: &ToolOverride, tools: &[Tool]) -> bool {
        let Some(name) = &shape.name else { return true };
        if *name == shape.tool {
            return true;
        }
        if tools.iter().any(|t| t.name == name.as_str()) || !self.0.insert(name.clone()) {
            warn!(
                server = %shape.server,
                tool = %shape.tool,
                "an override is not applied: another tool of the server has its name"
            );
            return false;
        }
        true
    }
}

/// Parameter names and descriptions of a tool's `inputSchema`, for search.
fn parameter_text(tool: &Tool) -> String {
    let mut out = String::new();
    if let Some(Value::Object(props)) = tool.input_schema.get("properties") {
        for (name, prop) in props {
            out.push_str(name);
            out.push(' ');
            if let Some(Value::String(d)) = prop.get("description") {
                out.push_str(d);
                out.push(' ');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, schema: Value) -> Tool {
        Tool::new(
            name.to_string(),
            format!("performs {name}"),
            schema.as_object().unwrap().clone(),
        )
    }

    #[test]
    fn parameters_feed_search() {
        let t = tool(
            "t",
            json!({"properties": {"city": {"description": "Name of the town"}}}),
        );
        assert_eq!(parameter_text(&t), "city Name of the town ");
    }
}
