//! Direct exposure: each tool under a name of its own in `tools/list`, for
//! projects set to `direct` or `both`. The name is `server__tool`, within the
//! MCP tool-name rules (1 to 128 of `A-Z a-z 0-9 _ - .`); a name that would
//! break them, be too long, or be taken gets a short hash of its key instead
//! of its tail, so every tool keeps one stable name.

use std::sync::Arc;

use rmcp::model::JsonObject;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Between server and tool in a direct name.
pub const SEPARATOR: &str = "__";

/// Longest tool name the MCP schema allows.
const MAX_NAME: usize = 128;

/// Direct names for `(server, tool)` pairs, in the same order.
pub fn names<'a>(tools: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<String> {
    let tools: Vec<(&str, &str)> = tools.into_iter().collect();
    // (name, whether it is the plain `server__tool` within the rules)
    let plain: Vec<(String, bool)> = tools
        .iter()
        .map(|(server, tool)| {
            let name = format!("{server}{SEPARATOR}{tool}");
            let valid: String = name.chars().map(allowed).collect();
            let kept = valid == name && name.len() <= MAX_NAME;
            (valid, kept)
        })
        .collect();
    // Only plain names claim themselves; an adjusted one always takes a hash.
    let mut claimed = std::collections::HashMap::<&str, usize>::new();
    for (name, _) in plain.iter().filter(|(_, kept)| *kept) {
        *claimed.entry(name).or_default() += 1;
    }
    tools
        .iter()
        .zip(&plain)
        .map(|((server, tool), (name, kept))| {
            if *kept && claimed[name.as_str()] == 1 {
                return name.clone();
            }
            let hash = Sha256::digest(format!("{server}:{tool}").as_bytes());
            let tag: String = hash.iter().take(4).map(|b| format!("{b:02x}")).collect();
            let keep = name.len().min(MAX_NAME - tag.len() - 1);
            format!("{}_{tag}", &name[..keep])
        })
        .collect()
}

/// A tool's `inputSchema` as `tools/list` shows it: without a boolean
/// `additionalProperties` anywhere. google-genai's converter (3.6.1) walks
/// that keyword as a schema and fails on `true` and `false` alike, and one
/// failure loses every tool of the list. `true` says what its absence says;
/// `false` is still enforced, as a call is checked against the tool's own
/// schema (which discovery shows unchanged). A schema with nothing to drop
/// is handed back as it is, shared.
pub fn portable_schema(schema: &Arc<JsonObject>) -> Arc<JsonObject> {
    let mut portable = (**schema).clone();
    drop_boolean_additional_properties(&mut portable);
    match portable == **schema {
        true => schema.clone(),
        false => Arc::new(portable),
    }
}

fn drop_boolean_additional_properties(schema: &mut JsonObject) {
    if schema.get("additionalProperties").is_some_and(Value::is_boolean) {
        schema.remove("additionalProperties");
    }
    let subschema = |v: &mut Value| {
        if let Value::Object(s) = v {
            drop_boolean_additional_properties(s);
        }
    };
    for (keyword, value) in schema.iter_mut() {
        match keyword.as_str() {
            // Maps of schemas: their keys are names, never keywords.
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                if let Value::Object(named) = value {
                    named.values_mut().for_each(subschema);
                }
            }
            "anyOf" | "allOf" | "oneOf" | "prefixItems" => {
                if let Value::Array(list) = value {
                    list.iter_mut().for_each(subschema);
                }
            }
            "items"
            | "additionalProperties"
            | "not"
            | "contains"
            | "propertyNames"
            | "if"
            | "then"
            | "else"
            | "unevaluatedProperties"
            | "unevaluatedItems" => subschema(value),
            _ => {}
        }
    }
}

fn allowed(c: char) -> char {
    if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
        c
    } else {
        '_'
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_listed_schema_loses_only_boolean_additional_properties() {
        let schema = json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                // A property of that name is a name, not the keyword.
                "additionalProperties": true,
                "tags": { "type": "object", "additionalProperties": { "type": "string" } },
                "items": { "type": "array", "items": { "type": "object", "additionalProperties": true } },
                "either": { "anyOf": [{ "type": "object", "additionalProperties": false }, { "type": "null" }] }
            },
            "$defs": { "Item": { "type": "object", "additionalProperties": false } }
        });
        let listed = portable_schema(&Arc::new(schema.as_object().unwrap().clone()));
        assert_eq!(
            Value::Object((*listed).clone()),
            json!({
                "type": "object",
                "properties": {
                    "additionalProperties": true,
                    "tags": { "type": "object", "additionalProperties": { "type": "string" } },
                    "items": { "type": "array", "items": { "type": "object" } },
                    "either": { "anyOf": [{ "type": "object" }, { "type": "null" }] }
                },
                "$defs": { "Item": { "type": "object" } }
            })
        );
    }

    #[test]
    fn names_are_server_tool_within_the_rules_and_distinct() {
        let long = "t".repeat(200);
        let names = names([
            ("fs", "read_file"),
            ("git", "log"),
            ("web", "fetch page"),
            ("web", "fetch_page"),
            ("x", long.as_str()),
        ]);
        assert_eq!(names[0], "fs__read_file");
        assert_eq!(names[1], "git__log");
        // "fetch page" would become "fetch_page", which the server also has: both differ now.
        assert!(
            names[2].starts_with("web__fetch_page_") && names[2].len() == "web__fetch_page_".len() + 8,
            "{names:?}"
        );
        assert_eq!(
            names[3], "web__fetch_page",
            "the tool that needs no change keeps its name"
        );
        assert_eq!(names[4].len(), 128);
        let valid = |n: &String| n.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
        assert!(names.iter().all(valid), "{names:?}");
        let distinct: std::collections::HashSet<_> = names.iter().collect();
        assert_eq!(distinct.len(), names.len());
    }
}
