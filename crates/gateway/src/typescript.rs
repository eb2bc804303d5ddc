//! A tool's call written as a short TypeScript signature, from its
//! `inputSchema` and `outputSchema`, so that a model writing a script (code
//! mode) passes the right arguments the first time and knows what
//! `structuredContent` holds: `(args: {path: string; head?: number}) => {content: string}`.
//! [`arguments`] writes the arguments alone for `tool_discovery`'s text,
//! which many clients give the model instead of the structured results, and
//! [`returns`] the result alone for those structured results.
//! Local `$ref`s (`#/$defs/Item`, as pydantic and zod write them) are
//! followed. Lossy on purpose: nesting past [`MAX_DEPTH`] reads `object`,
//! and a long signature is cut at [`MAX_CHARS`]; the schemas stay the
//! reference.

use std::cell::Cell;

use serde_json::{Map, Value};

/// Nesting of object and array types written out in full.
pub const MAX_DEPTH: usize = 3;
/// Longest signature; longer ones end in `…`.
pub const MAX_CHARS: usize = 400;
/// Most literals of an `enum` written out.
const MAX_ENUM: usize = 8;
/// Most `$ref`s followed in one schema: a recursive type ends in `unknown`.
const MAX_REFS: usize = 16;

/// `(args: T) => R` for a tool; `R` only when it declares an `outputSchema`.
pub fn signature(input: &Map<String, Value>, output: Option<&Map<String, Value>>) -> String {
    let mut out = format!("(args: {})", Schema::new(input).object(input, 0));
    if let Some(output) = output {
        out.push_str(" => ");
        out.push_str(&Schema::new(output).object(output, 0));
    }
    cut(out)
}

/// What a call's `structuredContent` holds, `{result: number}`: the `R` of
/// [`signature`], alone, for discovery's structured results (whose
/// `inputSchema` already says the arguments).
pub fn returns(output: &Map<String, Value>) -> String {
    cut(Schema::new(output).object(output, 0))
}

/// `out`, ending in `…` past [`MAX_CHARS`].
fn cut(mut out: String) -> String {
    if out.chars().count() > MAX_CHARS {
        out = out.chars().take(MAX_CHARS - 1).collect();
        out.push('…');
    }
    out
}

/// A tool's arguments alone, `{value: number; from: "C" | "F" | "K"}`, as
/// `tool_discovery`'s text shows them to models that read only the text;
/// `None` when the schema names no properties. Written as [`signature`]
/// writes them, but at most `max_chars` long: whole arguments are kept
/// while they fit (required ones come first) and the others are counted,
/// `{path: string; …3 more}`; a first argument too long on its own is cut
/// and ends in `…`.
pub fn arguments(input: &Map<String, Value>, max_chars: usize) -> Option<String> {
    let Some(Value::Object(props)) = input.get("properties") else {
        return None;
    };
    if props.is_empty() {
        return None;
    }
    let fields = Schema::new(input).fields(input, props, 0);
    let all = format!("{{{}}}", fields.join("; "));
    if all.chars().count() <= max_chars {
        return Some(all);
    }
    // The most whole fields that fit with the count of the rest after them.
    let mut out = String::from("{");
    let mut shown = 0;
    for (i, field) in fields.iter().enumerate() {
        let separator = if i == 0 { "" } else { "; " };
        let more = format!("; …{} more}}", fields.len() - i - 1);
        let length = out.chars().count() + separator.len() + field.chars().count() + more.chars().count();
        if length > max_chars {
            break;
        }
        out.push_str(separator);
        out.push_str(field);
        shown += 1;
    }
    if shown == 0 {
        let mut cut: String = all.chars().take(max_chars.saturating_sub(1)).collect();
        cut.push('…');
        return Some(cut);
    }
    out.push_str(&format!("; …{} more}}", fields.len() - shown));
    Some(out)
}

/// One schema being written, with the root its local `$ref`s point into.
struct Schema<'a> {
    root: &'a Map<String, Value>,
    /// `$ref`s left to follow.
    refs: Cell<usize>,
}

impl<'a> Schema<'a> {
    fn new(root: &'a Map<String, Value>) -> Self {
        Self {
            root,
            refs: Cell::new(MAX_REFS),
        }
    }

    /// The schema a local `$ref` (a JSON pointer into the root) names;
    /// `None` for a remote one, the root itself, a missing target, or past
    /// [`MAX_REFS`].
    fn follow(&self, reference: &str) -> Option<&'a Value> {
        let left = self.refs.get().checked_sub(1)?;
        self.refs.set(left);
        let mut parts = reference.strip_prefix("#/")?.split('/');
        let mut at = self.root.get(&unescape(parts.next()?))?;
        for part in parts {
            at = match at {
                Value::Object(m) => m.get(&unescape(part))?,
                Value::Array(a) => a.get(part.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(at)
    }

    /// The TypeScript type of one schema.
    fn ty(&self, schema: &Value, depth: usize) -> String {
        let Value::Object(s) = schema else {
            // `true` (anything) or `false` (nothing).
            return if schema == &Value::Bool(false) {
                "never"
            } else {
                "unknown"
            }
            .into();
        };
        if let Some(Value::String(reference)) = s.get("$ref") {
            return match self.follow(reference) {
                Some(target) => self.ty(target, depth),
                None => "unknown".into(),
            };
        }
        if let Some(Value::Array(parts)) = s.get("allOf") {
            return intersection(parts.iter().map(|p| self.ty(p, depth)).collect());
        }
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
                return union(options.iter().map(|o| self.ty(o, depth)).collect());
            }
        }
        match s.get("type") {
            Some(Value::String(t)) => self.named(t, s, depth),
            Some(Value::Array(types)) => union(
                types
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|t| self.named(t, s, depth))
                    .collect(),
            ),
            None if s.contains_key("properties") => self.object(s, depth),
            None if s.contains_key("items") => self.named("array", s, depth),
            _ => "unknown".into(),
        }
    }

    fn named(&self, t: &str, s: &Map<String, Value>, depth: usize) -> String {
        match t {
            "string" => "string".into(),
            "integer" | "number" => "number".into(),
            "boolean" => "boolean".into(),
            "null" => "null".into(),
            "array" if depth >= MAX_DEPTH => "unknown[]".into(),
            "array" => match s.get("items") {
                Some(items) => {
                    let item = self.ty(items, depth + 1);
                    if item.contains(' ') && !item.starts_with('{') {
                        format!("({item})[]")
                    } else {
                        format!("{item}[]")
                    }
                }
                None => "unknown[]".into(),
            },
            "object" => self.object(s, depth),
            _ => "unknown".into(),
        }
    }

    /// `{a: string; b?: number}`: required properties bare, others with `?`.
    fn object(&self, s: &Map<String, Value>, depth: usize) -> String {
        let Some(Value::Object(props)) = s.get("properties") else {
            return match s.get("additionalProperties") {
                Some(Value::Object(_)) if depth < MAX_DEPTH => {
                    format!("Record<string, {}>", self.ty(&s["additionalProperties"], depth + 1))
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
        format!("{{{}}}", self.fields(s, props, depth).join("; "))
    }

    /// `a: string`, `b?: number`: one per property of `s`, required ones
    /// bare and first, in the schema's order (a map here has lost the
    /// properties' own order), then the optional ones with `?`.
    fn fields(&self, s: &Map<String, Value>, props: &Map<String, Value>, depth: usize) -> Vec<String> {
        let required: Vec<&str> = s
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let first = required.iter().filter_map(|name| Some((*name, props.get(*name)?, "")));
        let rest = props
            .iter()
            .filter(|(name, _)| !required.contains(&name.as_str()))
            .map(|(name, schema)| (name.as_str(), schema, "?"));
        first
            .chain(rest)
            .map(|(name, schema, optional)| format!("{}{optional}: {}", key(name), self.ty(schema, depth + 1)))
            .collect()
    }
}

/// A JSON pointer's segment as the key it stands for (RFC 6901).
fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
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

/// `allOf`: one part is itself (pydantic wraps a `$ref` so); several read `A & B`.
fn intersection(mut parts: Vec<String>) -> String {
    parts.dedup();
    match parts.len() {
        0 => "unknown".into(),
        1 => parts.remove(0),
        _ => parts.join(" & "),
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

    /// As the official Python SDK (pydantic) writes a model argument, an
    /// enum and an optional list: `$defs` and `$ref`s, copied from its
    /// `list_tools` (mcp 2.3.0).
    #[test]
    fn local_refs_are_followed_as_the_python_sdk_writes_them() {
        let input = json!({"$defs": {"Item": {"properties": {"name": {"title": "Name", "type": "string"}, "price": {"title": "Price", "type": "number"}, "kind": {"$ref": "#/$defs/Kind"}}, "required": ["name", "price", "kind"], "title": "Item", "type": "object"}, "Kind": {"enum": ["a", "b"], "title": "Kind", "type": "string"}}, "properties": {"item": {"$ref": "#/$defs/Item"}, "tags": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}], "default": null, "title": "Tags"}}, "required": ["item"], "title": "add_itemArguments", "type": "object"});
        let output = json!({"$defs": {"Kind": {"enum": ["a", "b"], "title": "Kind", "type": "string"}}, "properties": {"name": {"title": "Name", "type": "string"}, "price": {"title": "Price", "type": "number"}, "kind": {"$ref": "#/$defs/Kind"}}, "required": ["name", "price", "kind"], "title": "Item", "type": "object"});
        assert_eq!(
            sig(input, Some(output)),
            r#"(args: {item: {name: string; price: number; kind: "a" | "b"}; tags?: string[] | null}) => {name: string; price: number; kind: "a" | "b"}"#
        );
        // A recursive model is written out to the depth limit, and ends.
        let recursive = json!({"$defs": {"Node": {"properties": {"value": {"title": "Value", "type": "integer"}, "child": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}], "default": null}}, "required": ["value"], "title": "Node", "type": "object"}}, "properties": {"root": {"$ref": "#/$defs/Node"}}, "required": ["root"], "title": "walkArguments", "type": "object"});
        assert_eq!(
            sig(recursive, None),
            "(args: {root: {value: number; child?: {value: number; child?: object | null} | null}})"
        );
    }

    #[test]
    fn all_of_remote_missing_and_looping_refs() {
        // pydantic 1 wrapped a `$ref` in `allOf` (with a title beside it).
        let v1 = json!({
            "definitions": { "Item": { "type": "object", "properties": { "id": { "type": "integer" } }, "required": ["id"] } },
            "properties": { "item": { "allOf": [{ "$ref": "#/definitions/Item" }], "title": "Item" },
                            "both": { "allOf": [{ "$ref": "#/definitions/Item" }, { "type": "object", "properties": { "n": { "type": "string" } } }] } },
            "required": ["item"]
        });
        assert_eq!(
            sig(v1, None),
            "(args: {item: {id: number}; both?: {id: number} & {n?: string}})"
        );
        let odd = json!({
            "$defs": { "A": { "$ref": "#/$defs/A" }, "a/b": { "type": "boolean" } },
            "properties": { "remote": { "$ref": "https://example.com/schema.json" }, "missing": { "$ref": "#/$defs/Nope" },
                            "looping": { "$ref": "#/$defs/A" }, "escaped": { "$ref": "#/$defs/a~1b" } }
        });
        assert_eq!(
            sig(odd, None),
            "(args: {escaped?: boolean; looping?: unknown; missing?: unknown; remote?: unknown})"
        );
    }

    fn args(input: Value, max_chars: usize) -> Option<String> {
        arguments(input.as_object().unwrap(), max_chars)
    }

    #[test]
    fn arguments_alone_required_first_with_allowed_values() {
        let input = json!({"type": "object", "properties": {
            "value": {"type": "number"},
            "from": {"type": "string", "enum": ["C", "F", "K"]},
            "to": {"type": "string", "enum": ["C", "F", "K"]},
            "precision": {"type": "integer"}
        }, "required": ["value", "from", "to"]});
        assert_eq!(
            args(input, 300).unwrap(),
            r#"{value: number; from: "C" | "F" | "K"; to: "C" | "F" | "K"; precision?: number}"#
        );
        assert_eq!(args(json!({"type": "object"}), 300), None);
        assert_eq!(args(json!({"type": "object", "properties": {}}), 300), None);
    }

    #[test]
    fn long_argument_lists_keep_whole_arguments_and_count_the_rest() {
        let props: Map<String, Value> = (0..10)
            .map(|i| (format!("field{i}"), json!({ "type": "string" })))
            .collect();
        let input = json!({ "type": "object", "properties": props, "required": ["field9"] });
        // All ten fit in 169 characters; in 59, two optional ones and a count.
        assert_eq!(args(input.clone(), 169).unwrap().chars().count(), 169);
        assert_eq!(
            args(input.clone(), 59).unwrap(),
            "{field9: string; field0?: string; field1?: string; …7 more}"
        );
        assert_eq!(
            args(input.clone(), 58).unwrap(),
            "{field9: string; field0?: string; …8 more}"
        );
        // A first argument longer than the bound on its own is cut.
        assert_eq!(args(input, 10).unwrap(), "{field9: …");
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
