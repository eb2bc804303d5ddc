//! Resolving a document's links against the archive: a relative path to
//! another archived file, or that file's source URL, is a citation edge with
//! confidence 1.0; the same URL up to scheme, `www.`, trailing slash, query
//! and fragment is a looser match.

use std::collections::HashMap;

/// Confidence of a link that names a document exactly.
pub(super) const EXACT: f64 = 1.0;
/// Confidence of a link that matches a document's URL only loosely.
pub(super) const LOOSE: f64 = 0.8;

/// Every archived document by path and by source URL.
#[derive(Debug, Default)]
pub(super) struct Resolver {
    by_path: HashMap<String, String>,
    by_url: HashMap<String, String>,
    by_loose_url: HashMap<String, String>,
}

impl Resolver {
    /// Learns a document: its id, archive path (`archive/dir/file.md`) and source URL.
    pub(super) fn add(&mut self, id: &str, path: &str, source_url: Option<&str>) {
        self.by_path.insert(path.to_string(), id.to_string());
        if let Some(url) = source_url {
            self.by_url.insert(without_fragment(url).to_string(), id.to_string());
            self.by_loose_url.entry(loose(url)).or_insert_with(|| id.to_string());
        }
    }

    /// The document a link in the document at `from` points to, with confidence.
    pub(super) fn resolve(&self, from: &str, url: &str) -> Option<(String, f64)> {
        if url.contains("://") {
            if let Some(id) = self.by_url.get(without_fragment(url)) {
                return Some((id.clone(), EXACT));
            }
            return self.by_loose_url.get(&loose(url)).map(|id| (id.clone(), LOOSE));
        }
        if url.starts_with('#') || url.contains(':') {
            return None;
        }
        let dir = from.rsplit_once('/').map_or("", |(d, _)| d);
        let target = normalize_path(dir, url.split(['#', '?']).next().unwrap_or(url))?;
        self.by_path.get(&target).map(|id| (id.clone(), EXACT))
    }
}

fn without_fragment(url: &str) -> &str {
    url.split('#').next().unwrap_or(url)
}

/// `HTTPS://www.Example.com/a/?q=1#x` → `example.com/a`.
pub(super) fn loose(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.split(['#', '?']).next().unwrap_or(rest);
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let host = host.to_ascii_lowercase();
    let host = host.strip_prefix("www.").unwrap_or(&host);
    let path = path.trim_end_matches('/');
    if path.is_empty() {
        host.to_string()
    } else {
        format!("{host}/{path}")
    }
}

/// `dir` joined with a relative `path`, `.` and `..` resolved; `None` above the archive root.
fn normalize_path(dir: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = if path.starts_with('/') {
        Vec::new()
    } else {
        dir.split('/').filter(|p| !p.is_empty()).collect()
    };
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolver() -> Resolver {
        let mut r = Resolver::default();
        r.add("doc-a", "research/2025/a.md", Some("https://example.com/ml-algorithms"));
        r.add("doc-b", "research/notes/b.md", None);
        r
    }

    #[test]
    fn relative_paths_and_urls_resolve() {
        let r = resolver();
        assert_eq!(
            r.resolve("research/2025/x.md", "../notes/b.md"),
            Some(("doc-b".into(), EXACT))
        );
        assert_eq!(
            r.resolve("research/notes/x.md", "./b.md#part"),
            Some(("doc-b".into(), EXACT))
        );
        assert_eq!(
            r.resolve("other/y.md", "https://example.com/ml-algorithms#intro"),
            Some(("doc-a".into(), EXACT))
        );
        assert_eq!(
            r.resolve("other/y.md", "http://www.example.com/ml-algorithms/?ref=feed"),
            Some(("doc-a".into(), LOOSE))
        );
        assert_eq!(r.resolve("other/y.md", "https://elsewhere.org/"), None);
        assert_eq!(r.resolve("research/y.md", "../../../etc/passwd"), None);
        assert_eq!(r.resolve("research/y.md", "mailto:a@b.c"), None);
    }

    #[test]
    fn loose_urls() {
        assert_eq!(loose("HTTPS://www.Example.com/a/?q=1#x"), "example.com/a");
        assert_eq!(loose("http://example.com"), "example.com");
    }
}
