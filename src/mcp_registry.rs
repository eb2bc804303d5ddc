//! The official MCP Registry's API (`/v0.1`), as `mcp-gateway add` reads it:
//! one version of a server, its versions, and names like an unknown one.
//! A private sub-registry serves the same API at another URL. What an
//! error quotes of a registry's text is escaped: a registry is not trusted
//! to write to the operator's terminal.

use std::time::Duration;

use serde::Deserialize;
use serde::de::DeserializeOwned;

use config::server_json::ServerJson;
use vocab::text::escape_control;

/// The public registry.
pub const DEFAULT_URL: &str = "https://registry.modelcontextprotocol.io";
/// The variable that names another registry.
pub const URL_ENV: &str = "MCP_GATEWAY_REGISTRY";

/// How long one request may take.
const TIMEOUT: Duration = Duration::from_secs(15);
/// The most bytes of one answer read: a server.json is a few KiB, a page of
/// versions a few hundred.
const MAX_BODY_BYTES: usize = 4 << 20;
/// The most characters of a name or version sent (the registry's own limit on names is 200).
pub const MAX_NAME_CHARS: usize = 200;

/// Why a lookup failed. Each says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The URL is not one.
    #[error("registry URL '{0}' is not an http(s) URL")]
    BadUrl(String),
    /// No answer.
    #[error("cannot reach the MCP Registry at {url}: {why} (another registry: --registry URL or {URL_ENV})")]
    Unreachable {
        /// The registry.
        url: String,
        /// What failed.
        why: String,
    },
    /// An answer other than the server.
    #[error("the MCP Registry at {url} answered {status}: {detail}")]
    Refused {
        /// The registry.
        url: String,
        /// The HTTP status.
        status: u16,
        /// Its problem's title and detail.
        detail: String,
    },
    /// An answer this gateway cannot read.
    #[error("the MCP Registry at {url} answered with something that is not its API's JSON: {why}")]
    Malformed {
        /// The registry.
        url: String,
        /// What was wrong.
        why: String,
    },
    /// No server by that name.
    #[error("no server named '{name}' in the MCP Registry at {url}{}", similar_words(similar))]
    UnknownName {
        /// The name asked for.
        name: String,
        /// The registry.
        url: String,
        /// Names the registry's search found for it, escaped.
        similar: Vec<String>,
    },
    /// The server, but not that version.
    #[error("{name} has no version '{version}'; its versions: {}", versions.join(", "))]
    UnknownVersion {
        /// The server.
        name: String,
        /// The version asked for.
        version: String,
        /// The versions it has, oldest first, escaped.
        versions: Vec<String>,
    },
}

fn similar_words(similar: &[String]) -> String {
    match similar {
        [] => String::new(),
        names => format!("; names like it: {}", names.join(", ")),
    }
}

/// One version of a server, as the registry lists it.
#[derive(Debug, Clone)]
pub struct Listed {
    /// Its `server.json`.
    pub server: ServerJson,
    /// `active`, `deprecated` or `deleted` (absent from registries that do not say).
    pub status: Option<String>,
}

/// `{ server, _meta }`: one entry, of a page or alone.
#[derive(Deserialize)]
struct Entry<T> {
    server: T,
    #[serde(rename = "_meta", default)]
    meta: Meta,
}

#[derive(Deserialize, Default)]
struct Meta {
    #[serde(rename = "io.modelcontextprotocol.registry/official", default)]
    official: Option<Official>,
}

#[derive(Deserialize)]
struct Official {
    #[serde(default)]
    status: Option<String>,
}

#[derive(Deserialize)]
struct Page<T> {
    servers: Vec<Entry<T>>,
}

#[derive(Deserialize)]
struct Named {
    name: String,
}

#[derive(Deserialize)]
struct Versioned {
    version: String,
}

/// A Huma error (`application/problem+json`).
#[derive(Deserialize, Default)]
struct Problem {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    detail: Option<String>,
}

/// A client of one registry.
pub struct Client {
    base: url::Url,
    http: reqwest::Client,
}

impl Client {
    /// A client of the registry at `url` (with or without a trailing `/`).
    pub fn new(url: &str) -> Result<Self, Error> {
        let base = url::Url::parse(url.trim_end_matches('/'))
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && !u.cannot_be_a_base())
            .ok_or_else(|| Error::BadUrl(url.to_string()))?;
        let http = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .user_agent(concat!("mcp-gateway/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| Error::Unreachable {
                url: url.to_string(),
                why: e.to_string(),
            })?;
        Ok(Self { base, http })
    }

    fn shown(&self) -> String {
        vocab::mask::url(self.base.as_str())
    }

    /// `/v0.1/<segments>`, each segment percent-encoded (a name's `/` too).
    fn url(&self, segments: &[&str]) -> url::Url {
        let mut url = self.base.clone();
        url.path_segments_mut()
            .expect("checked in new")
            .pop_if_empty()
            .push("v0.1")
            .extend(segments);
        url
    }

    /// `version` of `name` (`None`: the latest).
    pub async fn server(&self, name: &str, version: Option<&str>) -> Result<Listed, Error> {
        let url = self.url(&["servers", name, "versions", version.unwrap_or("latest")]);
        match self.get::<Entry<ServerJson>>(url).await? {
            Some(entry) => Ok(Listed {
                server: entry.server,
                status: entry.meta.official.and_then(|o| o.status),
            }),
            None => Err(self.missing(name, version).await),
        }
    }

    /// Why `name` (at `version`) is not there: an unknown version of a known
    /// server, or an unknown name (with names like it).
    async fn missing(&self, name: &str, version: Option<&str>) -> Error {
        let versions = self.url(&["servers", name, "versions"]);
        if let (Some(version), Ok(Some(page))) = (version, self.get::<Page<Versioned>>(versions).await) {
            return Error::UnknownVersion {
                name: name.to_string(),
                version: version.to_string(),
                versions: page.servers.iter().map(|e| escape_control(&e.server.version)).collect(),
            };
        }
        let mut search = self.url(&["servers"]);
        // The last part of a name is what people remember ("github", "brave-search").
        let term = name.rsplit('/').next().unwrap_or(name);
        search
            .query_pairs_mut()
            .append_pair("search", term)
            .append_pair("version", "latest")
            .append_pair("limit", "5");
        let similar = match self.get::<Page<Named>>(search).await {
            Ok(Some(page)) => page.servers.iter().map(|e| escape_control(&e.server.name)).collect(),
            _ => Vec::new(),
        };
        Error::UnknownName {
            name: name.to_string(),
            url: self.shown(),
            similar,
        }
    }

    /// GETs `url`: its JSON, or `None` on 404.
    async fn get<T: DeserializeOwned>(&self, url: url::Url) -> Result<Option<T>, Error> {
        let unreachable = |e: reqwest::Error| Error::Unreachable {
            url: self.shown(),
            why: vocab::text::root_cause(&e),
        };
        let mut response = self.http.get(url).send().await.map_err(unreachable)?;
        let status = response.status();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(unreachable)? {
            if body.len() + chunk.len() > MAX_BODY_BYTES {
                return Err(Error::Malformed {
                    url: self.shown(),
                    why: format!("an answer over {} MiB", MAX_BODY_BYTES >> 20),
                });
            }
            body.extend_from_slice(&chunk);
        }
        if status == reqwest::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !status.is_success() {
            let problem: Problem = serde_json::from_slice(&body).unwrap_or_default();
            let detail = [problem.title, problem.detail]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(": ");
            return Err(Error::Refused {
                url: self.shown(),
                status: status.as_u16(),
                detail: match detail.is_empty() {
                    true => status.canonical_reason().unwrap_or("no reason given").to_string(),
                    false => escape_control(&leaks::quote(&detail)),
                },
            });
        }
        serde_json::from_slice(&body).map(Some).map_err(|e| Error::Malformed {
            url: self.shown(),
            why: escape_control(&e.to_string()),
        })
    }
}
