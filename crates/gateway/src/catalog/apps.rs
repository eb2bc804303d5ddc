//! MCP Apps in the catalog: which tools carry one, which are meant for
//! their App alone, and the App URIs a client sees.
//!
//! A host renders an App only for a tool it listed, reading the template
//! from the tool's own `_meta` (`ui.resourceUri`, the older `ui/resourceUri`,
//! or ChatGPT's `openai/outputTemplate`), so such tools are listed directly
//! (see [`store::access::Project::names_tools`]). Two servers may both ship
//! `ui://widget/card.html`: where tools are listed directly, each server's
//! App URIs are in its namespace (`uris.rs`).

use rmcp::model::JsonObject;
use serde_json::Value;

use vocab::uris;

/// The keys of a tool's (or result's) `_meta` that name its App template.
const TEMPLATE_KEYS: [&str; 2] = ["ui/resourceUri", "openai/outputTemplate"];

/// The `ui://` template a tool's `_meta` names, if any.
pub fn template(meta: Option<&JsonObject>) -> Option<&str> {
    let meta = meta?;
    let nested = meta.get("ui").and_then(|ui| ui.get("resourceUri"));
    nested
        .into_iter()
        .chain(TEMPLATE_KEYS.iter().filter_map(|k| meta.get(*k)))
        .filter_map(Value::as_str)
        .find(|uri| uri.starts_with("ui://"))
}

/// Whether a tool is for its App alone (`_meta.ui.visibility` without
/// `"model"`): hosts keep it from the model, and so does discovery.
pub fn app_only(meta: Option<&JsonObject>) -> bool {
    let visibility = meta
        .and_then(|m| m.get("ui"))
        .and_then(|ui| ui.get("visibility"))
        .and_then(Value::as_array);
    visibility.is_some_and(|v| !v.is_empty() && !v.iter().any(|x| x == "model"))
}

/// Rewrites the App URIs in a tool's or result's `_meta` (the template keys,
/// and the resource seed 000's `openai.com/widget` embeds) into `server`'s namespace.
pub fn namespace(meta: &mut JsonObject, server: &str) {
    rewrite(meta, server, |_| true);
}

/// Where a caller's listings keep servers' own App URIs: only those that
/// claim the gateway's namespace go into `server`'s, since a read of one
/// reaches the server it names, and a server names only its own Apps.
pub fn namespace_claimed(meta: &mut JsonObject, server: &str) {
    rewrite(meta, server, |uri| uris::origin(uri).is_some());
}

/// Rewrites the App URIs in `meta` that `which` picks into `server`'s namespace.
fn rewrite(meta: &mut JsonObject, server: &str, which: impl Fn(&str) -> bool) {
    let fix = |v: &mut Value| {
        let app = v.as_str().filter(|u| u.starts_with("ui://") && which(u));
        if let Some(namespaced) = app.and_then(|u| uris::scoped(server, u)) {
            *v = namespaced.into();
        }
    };
    if let Some(v) = meta.get_mut("ui").and_then(|ui| ui.get_mut("resourceUri")) {
        fix(v);
    }
    for key in TEMPLATE_KEYS {
        if let Some(v) = meta.get_mut(key) {
            fix(v);
        }
    }
    let embedded = meta.get_mut("openai.com/widget").and_then(|w| w.get_mut("resource"));
    if let Some(v) = embedded.and_then(|r| r.get_mut("uri")) {
        fix(v);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(v: Value) -> JsonObject {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn app_uris_in_meta_go_into_their_servers_namespace() {
        let mut meta = object(json!({
            "ui": { "resourceUri": "ui://widget/card.html", "visibility": ["model"] },
            "ui/resourceUri": "ui://widget/card.html",
            "openai/outputTemplate": "ui://widget/card.html",
            "openai.com/widget": { "type": "resource", "resource": { "uri": "ui://widget/card.html", "text": "<p>" } },
            "other": "ui://widget/card.html"
        }));
        namespace(&mut meta, "red");
        let want = "ui://mcp-gateway/red/widget/card.html";
        assert_eq!(meta["ui"]["resourceUri"], want);
        assert_eq!(meta["ui/resourceUri"], want);
        assert_eq!(meta["openai/outputTemplate"], want);
        assert_eq!(meta["openai.com/widget"]["resource"]["uri"], want);
        assert_eq!(
            meta["other"], "ui://widget/card.html",
            "other keys are the server's business"
        );
        assert_eq!(meta["ui"]["visibility"], json!(["model"]));
    }

    /// Issue #71: red may not name demo's App; its URI in demo's namespace
    /// is red's own, read from red.
    #[test]
    fn a_uri_in_another_servers_namespace_is_the_servers_own() {
        let foreign = "ui://mcp-gateway/demo/widget/card.html";
        let mut meta = object(json!({ "ui": { "resourceUri": foreign }, "ui/resourceUri": "ui://widget/a.html" }));
        namespace_claimed(&mut meta, "red");
        assert_eq!(
            meta["ui"]["resourceUri"],
            "ui://mcp-gateway/red/mcp-gateway/demo/widget/card.html"
        );
        assert_eq!(
            meta["ui/resourceUri"], "ui://widget/a.html",
            "the server's own URIs stay its own"
        );
        let mut meta = object(json!({ "ui": { "resourceUri": foreign } }));
        namespace(&mut meta, "red");
        assert_eq!(
            meta["ui"]["resourceUri"],
            "ui://mcp-gateway/red/mcp-gateway/demo/widget/card.html"
        );
    }

    #[test]
    fn a_template_is_read_from_any_key_hosts_read() {
        let t = |v: Value| template(Some(&object(v))).map(str::to_string);
        assert_eq!(
            t(json!({ "ui": { "resourceUri": "ui://a.html" } })).as_deref(),
            Some("ui://a.html")
        );
        assert_eq!(
            t(json!({ "ui/resourceUri": "ui://b.html" })).as_deref(),
            Some("ui://b.html")
        );
        assert_eq!(
            t(json!({ "openai/outputTemplate": "ui://c.html" })).as_deref(),
            Some("ui://c.html")
        );
        assert_eq!(
            t(json!({ "openai/outputTemplate": "https://x/c.html" })),
            None,
            "only ui:// resources"
        );
        assert_eq!(t(json!({ "ui": { "visibility": ["app"] } })), None);
        assert_eq!(template(None), None);
    }

    #[test]
    fn a_tool_is_app_only_when_the_model_is_not_among_its_audience() {
        let only = |v: Value| app_only(Some(&object(v)));
        assert!(only(json!({ "ui": { "visibility": ["app"] } })));
        assert!(!only(json!({ "ui": { "visibility": ["model", "app"] } })));
        assert!(!only(json!({ "ui": { "visibility": [] } })), "empty means the default");
        assert!(!only(json!({ "ui": { "resourceUri": "ui://a.html" } })));
        assert!(!app_only(None));
    }
}
