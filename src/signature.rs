//! A tool's call written as a short TypeScript signature, from its
//! `inputSchema` and `outputSchema`, so that a model writing a script (code
//! mode) passes the right arguments the first time and knows what
//! `structuredContent` holds: `(args: {path: string; head?: number}) => {content: string}`.
//! Lossy on purpose: nesting past [`MAX_DEPTH`] reads `object`, and a long
//! signature is cut at [`MAX_CHARS`]; the schemas stay the reference.

use serde_json::{Map, Value};

/// Nesting of object and array types written out in full.
pub const MAX_DEPTH: usize = 3;
/// Longest signature; longer ones end in `…`.
pub const MAX_CHARS: usize = 400;
/// Most literals of an `enum` written out.
const MAX_ENUM: usize = 8;

/// `(args: T) => R` for a tool; `R` only when it declares an `outputSchema`.
pub fn signature(input: &Map<String, Value>, output: Option<&Map<String, Value>>) -> String {
    let mut out = format!("(args: {})", object(input, 0));
    if let Some(output) = output {
        out.push_str(" => ");
        out.push_str(&object(output, 0));
    }
    if out.chars().count() > MAX_CHARS {
        out = out.chars().take(MAX_CHARS - 1).collect();
        out.push('…');
    }
    out
}

/// The TypeScript type of one schema.
fn ty(schema: &Value, depth: usize) -> String {
    let Value::Object(s) = schema else {
        // `true` (anything) or `false` (nothing).
        return if schema == &Value::Bool(false) {
            "never"
        } else {
            "unknown"
        }
        .into();
    };
    if let Some(c) = s.get("const") {
        return literal(c);
    }
    if let Some(Value::Array(values)) = s.get("enum") {
        let mut parts: Vec<String> = values.iter().take(MAX_ENUM).map(literal).collect();
        if values.len() > MAX_ENUM {
            parts.push("…".into());
        }
        return parts.join(" | ");
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(options)) = s.get(key) {
            return union(options.iter().map(|o| ty(o, depth)).collect());
        }
    }
    match s.get("type") {
        Some(Value::String(t)) => named(t, s, depth),
        Some(Value::Array(types)) => union(
            types
                .iter()
                .filter_map(Value::as_str)
                .map(|t| named(t, s, depth))
                .collect(),
        ),
        None if s.contains_key("properties") => object(s, depth),
        None if s.contains_key("items") => named("array", s, depth),
        _ => "unknown".into(),
    }
}

fn named(t: &str, s: &Map<String, Value>, depth: usize) -> String {
    match t {
        "string" => "string".into(),
        "integer" | "number" => "number".into(),
        "boolean" => "boolean".into(),
        "null" => "null".into(),
        "array" if depth >= MAX_DEPTH => "unknown[]".into(),
        "array" => match s.get("items") {
            Some(items) => {
                let item = ty(items, depth + 1);
                if item.contains(' ') && !item.starts_with('{') {
                    format!("({item})[]")
                } else {
                    format!("{item}[]")
                }
            }
            None => "unknown[]".into(),
        },
        "object" => object(s, depth),
        _ => "unknown".into(),
    }
}

/// `{a: string; b?: number}`: required properties bare, others with `?`.
fn object(s: &Map<String, Value>, depth: usize) -> String {
    let Some(Value::Object(props)) = s.get("properties") else {
        return match s.get("additionalProperties") {
            Some(Value::Object(_)) if depth < MAX_DEPTH => {
                format!("Record<string, {}>", ty(&s["additionalProperties"], depth + 1))
            }
            _ => "object".into(),
        };
    };
    if props.is_empty() {
        return "{}".into();
    }
    if depth >= MAX_DEPTH {
        return "object".into();
    }
    let required: Vec<&str> = s
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // Required first, in the schema's order (a map here has lost the
    // properties' own order), then the optional ones.
    let first = required.iter().filter_map(|name| Some((*name, props.get(*name)?, "")));
    let rest = props
        .iter()
        .filter(|(name, _)| !required.contains(&name.as_str()))
        .map(|(name, schema)| (name.as_str(), schema, "?"));
    let fields: Vec<String> = first
        .chain(rest)
        .map(|(name, schema, optional)| format!("{}{optional}: {}", key(name), ty(schema, depth + 1)))
        .collect();
    format!("{{{}}}", fields.join("; "))
}

/// A property name, quoted unless it is an identifier.
fn key(name: &str) -> String {
    let ident = name
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$');
    if ident {
        name.into()
    } else {
        Value::String(name.into()).to_string()
    }
}

fn literal(v: &Value) -> String {
    match v {
        Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null => v.to_string(),
        _ => "unknown".into(),
    }
}

fn union(mut parts: Vec<String>) -> String {
    parts.dedup();
    match parts.len() {
        0 => "unknown".into(),
        _ => parts.join(" | "),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn sig(input: Value, output: Option<Value>) -> String {
        let output = output.map(|o| o.as_object().unwrap().clone());
        signature(input.as_object().unwrap(), output.as_ref())
    }

    #[test]
    fn required_and_optional_arguments_and_the_output() {
        let input = json!({
            "type": "object",
            "properties": { "path": { "type": "string" }, "head": { "type": "integer" } },
            "required": ["path"]
        });
        let output =
            json!({ "type": "object", "properties": { "content": { "type": "string" } }, "required": ["content"] });
        assert_eq!(
            sig(input.clone(), Some(output)),
            "(args: {path: string; head?: number}) => {content: string}"
        );
        assert_eq!(sig(input, None), "(args: {path: string; head?: number})");
    }

    #[test]
    fn arrays_enums_unions_and_nullable_types() {
        let input = json!({
            "type": "object",
            "properties": {
                "paths": { "type": "array", "items": { "type": "string" } },
                "mode": { "enum": ["fast", "slow"] },
                "limit": { "type": ["integer", "null"] },
                "either": { "anyOf": [{ "type": "string" }, { "type": "array", "items": { "type": "number" } }] },
                "tags": { "type": "array", "items": { "enum": ["a", "b"] } },
                "kind": { "const": 3 }
            },
            "required": ["paths", "mode", "limit", "either", "tags", "kind"]
        });
        assert_eq!(
            sig(input, None),
            r#"(args: {paths: string[]; mode: "fast" | "slow"; limit: number | null; either: string | number[]; tags: ("a" | "b")[]; kind: 3})"#
        );
    }

    #[test]
    fn nested_objects_stop_at_the_depth_limit() {
        let input = json!({
            "type": "object",
            "properties": { "a": { "type": "object", "properties": { "b": { "type": "object", "properties": {
                "c": { "type": "object", "properties": { "d": { "type": "string" } } } } } } } }
        });
        assert_eq!(sig(input, None), "(args: {a?: {b?: {c?: object}}})");
    }

    #[test]
    fn odd_names_maps_and_empty_or_missing_schemas() {
        let input = json!({
            "type": "object",
            "properties": { "content-type": { "type": "string" }, "x": {} , "headers": {
                "type": "object", "additionalProperties": { "type": "string" } } }
        });
        assert_eq!(
            sig(input, None),
            r#"(args: {"content-type"?: string; headers?: Record<string, string>; x?: unknown})"#
        );
        assert_eq!(sig(json!({ "type": "object" }), None), "(args: object)");
        assert_eq!(sig(json!({ "type": "object", "properties": {} }), None), "(args: {})");
    }

    #[test]
    fn long_signatures_are_cut() {
        let props: Map<String, Value> = (0..100)
            .map(|i| (format!("field{i}"), json!({ "type": "string" })))
            .collect();
        let s = sig(json!({ "type": "object", "properties": props }), None);
        assert_eq!(s.chars().count(), MAX_CHARS);
        assert!(s.ends_with('…'));
    }
}
