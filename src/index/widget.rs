//! The discovery card widget: the files built from `widgets/src/discover`
//! (embedded at compile time by `build.rs`), its MCP resource in the form
//! each kind of host renders, and the HTTP route for its fingerprinted assets.

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use rmcp::model::{MetaObject, Resource, ResourceContents};
use serde_json::{Value, json};

use super::WIDGET_URI;

mod built {
    include!(concat!(env!("OUT_DIR"), "/widgets.rs"));
}

/// MCP Apps hosts (SEP-1865) render this type.
pub const MCP_APP_MIME: &str = "text/html;profile=mcp-app";
/// ChatGPT Apps SDK hosts render this type.
pub const SKYBRIDGE_MIME: &str = "text/html+skybridge";
/// The single-file widget served as the MCP resource.
const INLINE: &str = "index-discover.inline.html";
/// The template linking the fingerprinted assets, served over HTTP.
const TEMPLATE: &str = "index-discover.html";
/// How long a host may cache the template (the assets never change under their name).
const TEMPLATE_MAX_AGE: &str = "public, max-age=300";
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

fn file(name: &str) -> Option<&'static [u8]> {
    built::FILES.iter().find(|(n, _)| *n == name).map(|(_, bytes)| *bytes)
}

/// The self-contained widget page.
pub fn html() -> &'static str {
    std::str::from_utf8(file(INLINE).expect("widgets/dist has the inline widget")).expect("UTF-8 widget")
}

/// Resource `_meta` for both hosts: MCP Apps `ui` (no network, a border,
/// images only from `avatar_origins`) and the ChatGPT `openai/widget*` keys.
fn resource_meta(avatar_origins: &[String]) -> MetaObject {
    let meta = json!({
        "ui": {
            "csp": { "connectDomains": [], "resourceDomains": avatar_origins },
            "prefersBorder": true
        },
        "openai/widgetDescription": "Cards of people who match the user's intents, with a VibeCheck summary of each connection and buttons to page through the matches.",
        "openai/widgetCSP": { "connect_domains": [], "resource_domains": avatar_origins },
        "openai/widgetPrefersBorder": true,
        "openai/widgetAccessible": true,
        "openai/toolInvocation/invoking": "Rendering discovery cards",
        "openai/toolInvocation/invoked": "Rendered discovery cards"
    });
    match meta {
        Value::Object(o) => o.into(),
        _ => unreachable!("an object"),
    }
}

/// The `resources/list` entry; its CSP lets the widget load avatars from `avatar_origins`.
pub fn resource(avatar_origins: &[String]) -> Resource {
    let mut r = Resource::new(WIDGET_URI, "index-discover");
    r.title = Some("Index Discover".into());
    r.description = Some("Discovery cards widget for discover_filter results".into());
    r.mime_type = Some(MCP_APP_MIME.into());
    r.meta = Some(resource_meta(avatar_origins));
    r
}

/// `resources/read` of the widget: the MCP Apps type unless the client is
/// known not to speak MCP Apps, then the ChatGPT Apps SDK type.
pub fn contents(client_has_mcp_apps: Option<bool>, avatar_origins: &[String]) -> ResourceContents {
    let mime = if client_has_mcp_apps == Some(false) {
        SKYBRIDGE_MIME
    } else {
        MCP_APP_MIME
    };
    ResourceContents::TextResourceContents {
        uri: WIDGET_URI.into(),
        mime_type: Some(mime.into()),
        text: html().into(),
        meta: Some(resource_meta(avatar_origins)),
    }
}

/// `GET /widgets/{name}`: fingerprinted assets cached for a year, the templates for minutes.
pub fn router<S: Clone + Send + Sync + 'static>() -> axum::Router<S> {
    axum::Router::new().route("/widgets/{name}", axum::routing::get(serve))
}

async fn serve(Path(name): Path<String>) -> Response {
    let Some(bytes) = file(&name) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let kind = match name.rsplit('.').next() {
        Some("css") => "text/css; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        _ => "text/html; charset=utf-8",
    };
    let cache = if name == TEMPLATE || name == INLINE {
        TEMPLATE_MAX_AGE
    } else {
        IMMUTABLE
    };
    ([(header::CONTENT_TYPE, kind), (header::CACHE_CONTROL, cache)], bytes).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_widget_is_embedded_and_self_contained() {
        let page = html();
        assert!(page.contains("<style>") && page.contains("<script>"));
        assert!(
            !page.contains("src=\"http") && !page.contains("href=\"http"),
            "no remote assets"
        );
        let template = std::str::from_utf8(file(TEMPLATE).unwrap()).unwrap();
        for asset in built::FILES
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| n.ends_with(".js") || n.ends_with(".css"))
        {
            assert!(template.contains(asset), "the template links {asset}");
        }
    }

    #[test]
    fn both_hosts_get_their_keys() {
        let r = resource(&[]);
        assert_eq!(r.uri, WIDGET_URI);
        let meta = r.meta.unwrap();
        assert_eq!(meta.get("ui").unwrap()["prefersBorder"], true);
        assert_eq!(meta.get("ui").unwrap()["csp"]["connectDomains"], json!([]));
        assert!(meta.get("openai/widgetCSP").is_some() && meta.get("openai/widgetDescription").is_some());
        let mime = |c: ResourceContents| match c {
            ResourceContents::TextResourceContents { mime_type, .. } => mime_type.unwrap(),
            _ => unreachable!(),
        };
        assert_eq!(mime(contents(None, &[])), MCP_APP_MIME);
        assert_eq!(mime(contents(Some(true), &[])), MCP_APP_MIME);
        assert_eq!(mime(contents(Some(false), &[])), SKYBRIDGE_MIME);
    }

    #[test]
    fn avatar_origins_are_declared_to_both_hosts() {
        let origins = vec!["https://cdn.example.com".to_string()];
        let r = resource(&origins);
        let meta = r.meta.unwrap();
        assert_eq!(
            meta.get("ui").unwrap()["csp"],
            json!({ "connectDomains": [], "resourceDomains": ["https://cdn.example.com"] })
        );
        assert_eq!(
            meta.get("openai/widgetCSP").unwrap(),
            &json!({ "connect_domains": [], "resource_domains": ["https://cdn.example.com"] })
        );
        let ResourceContents::TextResourceContents { meta: Some(meta), .. } = contents(None, &origins) else {
            unreachable!()
        };
        assert_eq!(
            meta.get("ui").unwrap()["csp"]["resourceDomains"][0],
            "https://cdn.example.com"
        );
        assert_eq!(
            resource(&[]).meta.unwrap().get("ui").unwrap()["csp"]["resourceDomains"],
            json!([])
        );
    }
}
