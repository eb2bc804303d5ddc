//! A fake MCP Registry on loopback, serving the real `server.json` files of
//! `tests/registry/` through the read API as modelcontextprotocol/registry
//! v1.7.0 does (tests/registry/SOURCES.md): `/v0` and `/v0.1` alike;
//! `{server, _meta}` entries with the official `_meta`; a list with
//! `search`, `version`, `limit` and `cursor`; one Huma 404 "Server not
//! found" for an unknown name and for an unknown version alike; 422 for a
//! `limit` outside 1..=100 or not a number; 400 for a name that stays badly
//! encoded after the registry decodes it a second time; its own sorted-key
//! 404 for any other path. It can be made to fail every request with the
//! registry's 500, it records the paths it was asked for, and a test can
//! publish a document of its own.
#![allow(dead_code)] // each test binary uses a different part of this module

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

/// The version the fake publishes GitHub's release template at.
pub(crate) const GITHUB_VERSION: &str = "1.0.0";

#[derive(Default)]
struct Data {
    /// `(name, version, published_at, document)`, sorted by name then version.
    servers: Vec<(String, String, String, Value)>,
    fail: bool,
    seen: Vec<String>,
}

type Shared = Arc<Mutex<Data>>;

/// A running fake registry.
pub(crate) struct FakeRegistry {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    data: Shared,
}

impl FakeRegistry {
    /// Serves every document of `tests/registry/`.
    pub(crate) async fn start() -> FakeRegistry {
        let dir = crate::common::repo_path("tests/registry");
        let mut servers = Vec::new();
        for (n, entry) in std::fs::read_dir(&dir).unwrap().enumerate() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            // Published, a release template has its version filled in.
            let text = std::fs::read_to_string(&path)
                .unwrap()
                .replace("${VERSION}", GITHUB_VERSION);
            let doc: Value = serde_json::from_str(&text).unwrap();
            let name = doc["name"].as_str().unwrap().to_string();
            let version = doc["version"].as_str().unwrap().to_string();
            servers.push((name, version, format!("2026-0{}-01T10:30:00.123456Z", n % 9 + 1), doc));
        }
        servers.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        let data: Shared = Arc::new(Mutex::new(Data {
            servers,
            ..Data::default()
        }));
        let mut app = Router::new();
        for prefix in ["/v0", "/v0.1"] {
            app = app
                .route(&format!("{prefix}/servers"), get(list))
                .route(&format!("{prefix}/servers/{{name}}/versions"), get(versions))
                .route(&format!("{prefix}/servers/{{name}}/versions/{{version}}"), get(one));
        }
        let app = app
            .fallback(not_found)
            .layer(axum::middleware::from_fn_with_state(data.clone(), record))
            .with_state(data.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        FakeRegistry { base, data }
    }

    /// Every request from now on fails as the registry's database does.
    pub(crate) fn fail(&self, fail: bool) {
        self.data.lock().unwrap().fail = fail;
    }

    /// Serves `doc` as `version` of `name`, whatever the document itself
    /// says: a registry may serve anything.
    pub(crate) fn publish(&self, name: &str, version: &str, doc: Value) {
        let mut data = self.data.lock().unwrap();
        let published = "2026-12-01T10:30:00.123456Z".to_string();
        data.servers
            .push((name.to_string(), version.to_string(), published, doc));
        data.servers.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    }

    /// The paths (with queries) asked for so far, as sent.
    pub(crate) fn seen(&self) -> Vec<String> {
        self.data.lock().unwrap().seen.clone()
    }
}

async fn record(State(data): State<Shared>, request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let fail = {
        let mut data = data.lock().unwrap();
        data.seen.push(request.uri().to_string());
        data.fail
    };
    if fail {
        return problem(StatusCode::INTERNAL_SERVER_ERROR, "Failed to get server details", None);
    }
    next.run(request).await
}

/// Huma's error: `application/problem+json`, no `$schema`.
fn problem(status: StatusCode, detail: &str, errors: Option<Value>) -> Response {
    let mut body = json!({ "title": status.canonical_reason().unwrap(), "status": status.as_u16(), "detail": detail });
    if let Some(errors) = errors {
        body["errors"] = errors;
    }
    (
        status,
        [(header::CONTENT_TYPE, "application/problem+json")],
        body.to_string(),
    )
        .into_response()
}

/// The router's own 404: a Go map, so its keys come sorted.
async fn not_found(uri: Uri) -> Response {
    let path = uri.path();
    let detail = if path.starts_with("/v0/") || path.starts_with("/v0.1/") {
        "Endpoint not found. See /docs for the API documentation.".to_string()
    } else {
        format!("Endpoint not found. Did you mean '/v0.1{path}' or '/v0{path}'? See /docs for the API documentation.")
    };
    let body = format!(r#"{{"detail":{},"status":404,"title":"Not Found"}}"#, json!(detail));
    (
        StatusCode::NOT_FOUND,
        [(header::CONTENT_TYPE, "application/problem+json")],
        body,
    )
        .into_response()
}

fn entry(row: &(String, String, String, Value), latest: bool) -> Value {
    json!({
        "server": row.3,
        "_meta": { "io.modelcontextprotocol.registry/official": {
            "status": "active", "statusChangedAt": row.2, "publishedAt": row.2, "updatedAt": row.2, "isLatest": latest,
        } },
    })
}

fn is_latest(rows: &[(String, String, String, Value)], row: &(String, String, String, Value)) -> bool {
    rows.iter()
        .filter(|r| r.0 == row.0)
        .max_by(|a, b| a.2.cmp(&b.2))
        .is_some_and(|r| r.1 == row.1)
}

/// The registry decodes the (already decoded) segment once more: a bad
/// escape is its 400, with Go's message.
fn unescape(segment: &str) -> Result<String, Box<Response>> {
    decode(segment).map_err(|message| {
        let errors = message.map(|m| json!([{ "message": m }]));
        Box::new(problem(StatusCode::BAD_REQUEST, "Invalid server name encoding", errors))
    })
}

fn decode(segment: &str) -> Result<String, Option<String>> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = segment.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok());
            let Some(byte) = hex else {
                let bad = segment.get(i..(i + 3).min(segment.len())).unwrap_or("%");
                return Err(Some(format!("invalid URL escape {}", json!(bad))));
            };
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| None)
}

async fn one(State(data): State<Shared>, Path((name, version)): Path<(String, String)>) -> Response {
    let name = match unescape(&name) {
        Ok(n) => n,
        Err(r) => return *r,
    };
    let data = data.lock().unwrap();
    let rows = &data.servers;
    let found = rows.iter().filter(|r| r.0 == name).find(|r| {
        if version == "latest" {
            is_latest(rows, r)
        } else {
            r.1 == version
        }
    });
    match found {
        Some(row) => axum::Json(entry(row, is_latest(rows, row))).into_response(),
        None => problem(StatusCode::NOT_FOUND, "Server not found", None),
    }
}

async fn versions(State(data): State<Shared>, Path(name): Path<String>) -> Response {
    let name = match unescape(&name) {
        Ok(n) => n,
        Err(r) => return *r,
    };
    let data = data.lock().unwrap();
    let rows = &data.servers;
    let mut found: Vec<_> = rows.iter().filter(|r| r.0 == name).collect();
    if found.is_empty() {
        return problem(StatusCode::NOT_FOUND, "Server not found", None);
    }
    found.sort_by(|a, b| b.2.cmp(&a.2));
    let servers: Vec<Value> = found.iter().map(|r| entry(r, is_latest(rows, r))).collect();
    axum::Json(json!({ "servers": servers, "metadata": { "count": servers.len() } })).into_response()
}

async fn list(State(data): State<Shared>, Query(q): Query<HashMap<String, String>>) -> Response {
    let limit = match q.get("limit").filter(|l| !l.is_empty()) {
        None => 30,
        Some(l) => match l.parse::<i64>() {
            Ok(n) if (1..=100).contains(&n) => n as usize,
            Ok(n) => {
                let message = if n < 1 {
                    "expected number >= 1"
                } else {
                    "expected number <= 100"
                };
                let errors = json!([{ "message": message, "location": "query.limit", "value": n }]);
                return problem(StatusCode::UNPROCESSABLE_ENTITY, "validation failed", Some(errors));
            }
            Err(_) => {
                let errors = json!([{ "message": "invalid integer", "location": "query.limit", "value": l }]);
                return problem(StatusCode::UNPROCESSABLE_ENTITY, "validation failed", Some(errors));
            }
        },
    };
    let data = data.lock().unwrap();
    let rows = &data.servers;
    let search = q.get("search").map(|s| s.to_lowercase());
    let after = q.get("cursor").map(|c| match c.split_once(':') {
        Some((n, v)) => (n.to_string(), Some(v.to_string())),
        None => (c.clone(), None),
    });
    let page: Vec<_> = rows
        .iter()
        .filter(|r| search.as_ref().is_none_or(|s| r.0.to_lowercase().contains(s.as_str())))
        .filter(|r| match q.get("version").map(String::as_str) {
            None | Some("") => true,
            Some("latest") => is_latest(rows, r),
            Some(v) => r.1 == v,
        })
        .filter(|r| match &after {
            None => true,
            Some((n, Some(v))) => r.0 > *n || (r.0 == *n && r.1 > *v),
            Some((n, None)) => r.0 > *n,
        })
        .take(limit)
        .collect();
    let mut metadata = json!({ "count": page.len() });
    if page.len() >= limit {
        let last = page.last().unwrap();
        metadata["nextCursor"] = json!(format!("{}:{}", last.0, last.1));
    }
    let servers: Vec<Value> = page.iter().map(|r| entry(r, is_latest(rows, r))).collect();
    axum::Json(json!({ "servers": servers, "metadata": metadata })).into_response()
}
