//! The Index widgets: the files built from `widgets/src/index` (embedded at
//! compile time by `build.rs`), one template per tool (the discovery cards,
//! the connections view, the intent display), each as an MCP resource in
//! the form each kind of host renders, and the HTTP route for their
//! fingerprinted assets.

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use rmcp::model::{MetaObject, Resource, ResourceContents};
use serde_json::{Value, json};

mod built {
    include!(concat!(env!("OUT_DIR"), "/widgets.rs"));
}

pub use vocab::wire::MCP_APP_MIME;
/// ChatGPT Apps SDK hosts render this type.
pub const SKYBRIDGE_MIME: &str = "text/html+skybridge";
/// How long a host may cache a template (the assets never change under their name).
const TEMPLATE_MAX_AGE: &str = "public, max-age=300";
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// One App template of the Index server.
#[derive(Debug)]
pub struct Widget {
    /// Its versioned `ui://` URI.
    pub uri: &'static str,
    /// Its file stem in `widgets/dist` (`<name>.inline.html` is the resource).
    name: &'static str,
    title: &'static str,
    /// What it shows, for ChatGPT (`openai/widgetDescription`) and `resources/list`.
    description: &'static str,
}

/// `discover_filter`'s cards, with paging.
pub const DISCOVER: Widget = Widget {
    uri: "ui://widget/index-discover@v1.html",
    name: "index-discover",
    title: "Index Discover",
    description: "Cards of people who match the user's intents, with a VibeCheck summary of each connection and buttons to page through the matches.",
};

/// `discover_connections`' people.
pub const CONNECTIONS: Widget = Widget {
    uri: "ui://widget/index-connections@v1.html",
    name: "index-connections",
    title: "Index Connections",
    description: "People worth meeting for what the user described, each with what could happen between them and the intents they share.",
};

/// `extract_intent`'s intents.
pub const INTENTS: Widget = Widget {
    uri: "ui://widget/intent-display@v1.html",
    name: "intent-display",
    title: "Intent Display",
    description: "The intents extracted from the conversation and saved to the user's Index Network profile.",
};

/// Every template, as `resources/list` shows them.
pub const ALL: [&Widget; 3] = [&DISCOVER, &CONNECTIONS, &INTENTS];

fn file(name: &str) -> Option<&'static [u8]> {
    built::FILES.iter().find(|(n, _)| *n == name).map(|(_, bytes)| *bytes)
}

impl Widget {
    /// The template behind `uri`.
    pub fn by_uri(uri: &str) -> Option<&'static Widget> {
        ALL.into_iter().find(|w| w.uri == uri)
    }

    /// The self-contained page.
    pub fn html(&self) -> &'static str {
        let bytes = file(&format!("{}.inline.html", self.name)).expect("widgets/dist has every inline widget");
        std::str::from_utf8(bytes).expect("UTF-8 widget")
    }

    /// The keys by which a tool (or its result) names this template, for
    /// MCP Apps hosts and ChatGPT.
    pub fn tool_meta(&self) -> Value {
        json!({
            "ui": { "resourceUri": self.uri },
            "ui/resourceUri": self.uri,
            "openai/outputTemplate": self.uri,
            "openai/widgetAccessible": true,
            "openai/resultCanProduceWidget": true,
        })
    }

    /// The template as an embedded resource, for the ChatGPT clients that
    /// read it from a result's `openai.com/widget` (seed 000).
    pub fn embedded(&self, avatar_origins: &[String]) -> Value {
        json!({
            "type": "resource",
            "resource": {
                "uri": self.uri,
                "mimeType": SKYBRIDGE_MIME,
                "text": self.html(),
                "_meta": self.resource_meta(avatar_origins),
            }
        })
    }

    /// Resource `_meta` for both hosts: MCP Apps `ui` (no network, a border,
    /// images only from `avatar_origins`) and the ChatGPT `openai/widget*` keys.
    fn resource_meta(&self, avatar_origins: &[String]) -> MetaObject {
        let meta = json!({
            "ui": {
                "csp": { "connectDomains": [], "resourceDomains": avatar_origins },
                "prefersBorder": true
            },
            "openai/widgetDescription": self.description,
            "openai/widgetCSP": { "connect_domains": [], "resource_domains": avatar_origins },
            "openai/widgetPrefersBorder": true,
            "openai/widgetAccessible": true,
        });
        match meta {
            Value::Object(o) => o.into(),
            _ => unreachable!("an object"),
        }
    }

    /// The `resources/list` entry; its CSP lets the widget load avatars from `avatar_origins`.
    pub fn resource(&self, avatar_origins: &[String]) -> Resource {
        let mut r = Resource::new(self.uri, self.name);
        r.title = Some(self.title.into());
        r.description = Some(self.description.into());
        r.mime_type = Some(MCP_APP_MIME.into());
        r.meta = Some(self.resource_meta(avatar_origins));
        r
    }

    /// `resources/read`: the MCP Apps type unless the client is known not
    /// to speak MCP Apps, then the ChatGPT Apps SDK type.
    pub fn contents(&self, client_has_mcp_apps: Option<bool>, avatar_origins: &[String]) -> ResourceContents {
        let mime = if client_has_mcp_apps == Some(false) {
            SKYBRIDGE_MIME
        } else {
            MCP_APP_MIME
        };
        ResourceContents::TextResourceContents {
            uri: self.uri.into(),
            mime_type: Some(mime.into()),
            text: self.html().into(),
            meta: Some(self.resource_meta(avatar_origins)),
        }
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
    let cache = if name.ends_with(".html") {
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
    fn every_widget_is_embedded_self_contained_and_its_template_links_its_assets() {
        let assets: Vec<&str> = built::FILES
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| n.ends_with(".js") || n.ends_with(".css"))
            .collect();
        assert!(!assets.is_empty());
        for w in ALL {
            let page = w.html();
            assert!(page.contains("<style>") && page.contains("<script>"), "{}", w.name);
            assert!(
                !page.contains("src=\"http") && !page.contains("href=\"http"),
                "no remote assets in {}",
                w.name
            );
            let template = std::str::from_utf8(file(&format!("{}.html", w.name)).unwrap()).unwrap();
            for asset in &assets {
                assert!(template.contains(asset), "{} links {asset}", w.name);
            }
            assert_eq!(Widget::by_uri(w.uri).map(|b| b.name), Some(w.name));
        }
    }

    #[test]
    fn both_hosts_get_their_keys() {
        let r = DISCOVER.resource(&[]);
        assert_eq!(r.uri, DISCOVER.uri);
        let meta = r.meta.unwrap();
        assert_eq!(meta.get("ui").unwrap()["prefersBorder"], true);
        assert_eq!(meta.get("ui").unwrap()["csp"]["connectDomains"], json!([]));
        assert!(meta.get("openai/widgetCSP").is_some() && meta.get("openai/widgetDescription").is_some());
        let mime = |c: ResourceContents| match c {
            ResourceContents::TextResourceContents { mime_type, .. } => mime_type.unwrap(),
            _ => unreachable!(),
        };
        assert_eq!(mime(DISCOVER.contents(None, &[])), MCP_APP_MIME);
        assert_eq!(mime(CONNECTIONS.contents(Some(true), &[])), MCP_APP_MIME);
        assert_eq!(mime(INTENTS.contents(Some(false), &[])), SKYBRIDGE_MIME);
    }

    #[test]
    fn a_result_embeds_its_template_for_chatgpt() {
        let meta = CONNECTIONS.tool_meta();
        assert_eq!(meta["openai/outputTemplate"], CONNECTIONS.uri);
        assert_eq!(meta["ui"]["resourceUri"], CONNECTIONS.uri);
        let embedded = &CONNECTIONS.embedded(&[]);
        assert_eq!(embedded["type"], "resource");
        assert_eq!(embedded["resource"]["uri"], CONNECTIONS.uri);
        assert_eq!(embedded["resource"]["mimeType"], SKYBRIDGE_MIME);
        assert_eq!(embedded["resource"]["text"], CONNECTIONS.html());
        assert_ne!(CONNECTIONS.html(), DISCOVER.html());
    }

    #[test]
    fn avatar_origins_are_declared_to_both_hosts() {
        let origins = vec!["https://cdn.example.com".to_string()];
        let r = DISCOVER.resource(&origins);
        let meta = r.meta.unwrap();
        assert_eq!(
            meta.get("ui").unwrap()["csp"],
            json!({ "connectDomains": [], "resourceDomains": ["https://cdn.example.com"] })
        );
        assert_eq!(
            meta.get("openai/widgetCSP").unwrap(),
            &json!({ "connect_domains": [], "resource_domains": ["https://cdn.example.com"] })
        );
        let ResourceContents::TextResourceContents { meta: Some(meta), .. } = INTENTS.contents(None, &origins) else {
            unreachable!()
        };
        assert_eq!(
            meta.get("ui").unwrap()["csp"]["resourceDomains"][0],
            "https://cdn.example.com"
        );
        assert_eq!(
            DISCOVER.resource(&[]).meta.unwrap().get("ui").unwrap()["csp"]["resourceDomains"],
            json!([])
        );
    }
}
