//! DNS-rebinding protection for every route of the HTTP listener, not only
//! `/mcp` (where rmcp checks the same lists): the console, its API,
//! `/readyz` and `/metrics` answer only the hosts and origins in `[http]`.
//! The matching follows rmcp's, so one list means the same everywhere.

use std::sync::Arc;

use http::HeaderMap;
use http::uri::{Authority, Uri};

use config::HttpConfig;

/// `[http] allowed_hosts` and `allowed_origins`, parsed once.
#[derive(Debug, Clone)]
pub(super) struct Hosts {
    hosts: Vec<(String, Option<u16>)>,
    origins: Vec<Allowed>,
}

#[derive(Debug, Clone, PartialEq)]
enum Allowed {
    Null,
    /// Scheme, host, and the port (`None`: any, as `:*` or no port).
    Origin(String, String, Option<u16>),
}

fn host_of(authority: &Authority) -> String {
    authority.host().trim_matches(['[', ']']).to_ascii_lowercase()
}

/// Scheme, host and port of an `Origin` value (`None` for `null`).
fn origin_of(value: &str) -> Option<Option<(String, String, Option<u16>)>> {
    let value = value.trim();
    if value.eq_ignore_ascii_case("null") {
        return Some(None);
    }
    let uri: Uri = value.parse().ok()?;
    let authority = uri.authority()?;
    Some(Some((
        uri.scheme_str()?.to_ascii_lowercase(),
        host_of(authority),
        authority.port_u16(),
    )))
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

impl Hosts {
    pub(super) fn new(config: &HttpConfig) -> Arc<Self> {
        let hosts = config
            .allowed_hosts
            .iter()
            .filter(|h| !h.trim().is_empty())
            .map(|h| match h.trim().parse::<Authority>() {
                Ok(a) => (host_of(&a), a.port_u16()),
                Err(_) => (h.trim().trim_matches(['[', ']']).to_ascii_lowercase(), None),
            })
            .collect();
        let origins = config
            .allowed_origins
            .iter()
            .filter_map(|o| {
                let (base, any) = match o.trim().strip_suffix(":*") {
                    Some(base) => (base, true),
                    None => (o.trim(), false),
                };
                Some(match origin_of(base)? {
                    None if !any => Allowed::Null,
                    None => return None,
                    Some((scheme, host, port)) => Allowed::Origin(scheme, host, if any { None } else { port }),
                })
            })
            .collect();
        Arc::new(Self { hosts, origins })
    }

    /// Why a request with these headers is refused, if it is.
    fn refusal(&self, uri: &Uri, headers: &HeaderMap) -> Option<(http::StatusCode, &'static str)> {
        let bad = http::StatusCode::BAD_REQUEST;
        let forbidden = http::StatusCode::FORBIDDEN;
        let authority = match headers.get(http::header::HOST) {
            Some(v) => {
                let Some(a) = v.to_str().ok().and_then(|s| s.parse::<Authority>().ok()) else {
                    return Some((bad, "Bad Request: Invalid Host header"));
                };
                a
            }
            None => match uri.authority() {
                Some(a) => a.clone(),
                None => return Some((bad, "Bad Request: missing Host header")),
            },
        };
        let host = host_of(&authority);
        let port = authority.port_u16();
        let host_ok = self.hosts.is_empty()
            || self
                .hosts
                .iter()
                .any(|(h, p)| *h == host && p.is_none_or(|p| Some(p) == port));
        if !host_ok {
            return Some((forbidden, "Forbidden: Host header is not allowed"));
        }
        let origin = headers.get(http::header::ORIGIN)?;
        if self.origins.is_empty() {
            return None;
        }
        let Some(origin) = origin.to_str().ok().and_then(origin_of) else {
            return Some((forbidden, "Forbidden: Invalid Origin header"));
        };
        let allowed = self.origins.iter().any(|a| match (a, &origin) {
            (Allowed::Null, None) => true,
            (Allowed::Origin(s, h, p), Some((scheme, host, port))) => {
                s == scheme && h == host && p.is_none_or(|p| Some(p) == port.or_else(|| default_port(scheme)))
            }
            _ => false,
        });
        (!allowed).then_some((forbidden, "Forbidden: Origin header is not allowed"))
    }
}

/// The middleware: a refused request never reaches a route.
pub(super) async fn check(
    axum::extract::State(hosts): axum::extract::State<Arc<Hosts>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    if let Some((status, message)) = hosts.refusal(request.uri(), request.headers()) {
        tracing::warn!(
            path = %leaks::quote(request.uri().path()),
            "refused a request for its Host or Origin header"
        );
        return (status, message).into_response();
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(http::header::HOST, host.parse().unwrap());
        if let Some(o) = origin {
            h.insert(http::header::ORIGIN, o.parse().unwrap());
        }
        h
    }

    #[test]
    fn the_default_lists_admit_local_names_only() {
        let hosts = Hosts::new(&HttpConfig::default());
        let uri: Uri = "/console".parse().unwrap();
        let ok = |host, origin| hosts.refusal(&uri, &headers(host, origin)).is_none();
        assert!(ok("127.0.0.1:8931", None));
        assert!(ok("localhost", Some("http://localhost:5173")));
        assert!(ok("[::1]:8931", Some("https://[::1]:8931")));
        assert!(!ok("evil.example", None), "DNS rebinding");
        assert!(!ok("evil.example:8931", None));
        assert!(!ok("127.0.0.1:8931", Some("http://evil.example")));
        assert!(!ok("127.0.0.1:8931", Some("null")));
    }

    #[test]
    fn ports_and_null_follow_the_entries() {
        let config = HttpConfig {
            allowed_hosts: vec!["gw.example:443".into(), "other.example".into()],
            allowed_origins: vec![
                "https://app.example".into(),
                "null".into(),
                "http://dev.example:8080".into(),
            ],
            ..HttpConfig::default()
        };
        let hosts = Hosts::new(&config);
        let uri: Uri = "/readyz".parse().unwrap();
        let ok = |host, origin| hosts.refusal(&uri, &headers(host, origin)).is_none();
        assert!(ok("gw.example:443", None));
        assert!(!ok("gw.example:8443", None), "the entry names its port");
        assert!(ok("other.example:1234", None), "no port in the entry: any");
        assert!(ok("other.example", Some("null")));
        assert!(ok("other.example", Some("https://app.example")));
        assert!(ok("other.example", Some("http://dev.example:8080")));
        assert!(!ok("other.example", Some("http://dev.example")), "port 80 is not 8080");
        let open = Hosts::new(&HttpConfig {
            allowed_hosts: vec![],
            allowed_origins: vec![],
            ..HttpConfig::default()
        });
        assert!(
            open.refusal(&uri, &headers("anything.example", Some("https://x.example")))
                .is_none()
        );
    }
}
