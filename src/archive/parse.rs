//! One archived file to a document: title, source URL, date, plain text and
//! links with the sentence around them. Markdown and text may open with
//! front matter (`title:`, `source:`/`url:`, `date:`); saved HTML pages give
//! `<title>`, `<link rel="canonical">`/`og:url` and date `<meta>`s.

use std::sync::LazyLock;

use regex::Regex;

use crate::text::{one_line, truncate};

/// What kind of file this is, by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `.md`, `.markdown`
    Markdown,
    /// `.txt`
    Text,
    /// `.html`, `.htm`
    Html,
}

impl Kind {
    /// The kind of a file name, or `None` for files the archive does not read.
    pub fn of(name: &str) -> Option<Kind> {
        let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
        match ext.as_str() {
            "md" | "markdown" => Some(Kind::Markdown),
            "txt" => Some(Kind::Text),
            "html" | "htm" => Some(Kind::Html),
            _ => None,
        }
    }
}

/// A link found in a document.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// As written (absolute URL or relative path).
    pub url: String,
    /// The sentence around it.
    pub context: String,
}

/// A parsed document.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// Title from metadata, a first heading, or the file name.
    pub title: String,
    /// Where it was saved from.
    pub source_url: Option<String>,
    /// When (as written in the metadata).
    pub date: Option<String>,
    /// The text to search.
    pub text: String,
    /// Its links.
    pub links: Vec<Link>,
}

/// Why a file is skipped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    /// NUL bytes: not text.
    #[error("binary content")]
    Binary,
    /// Not UTF-8.
    #[error("not valid UTF-8 (byte {0})")]
    Encoding(usize),
}

/// Parses `bytes` of a file of `kind`; `stem` is the fallback title.
pub fn parse(bytes: &[u8], kind: Kind, stem: &str) -> Result<Parsed, Unreadable> {
    if bytes.iter().take(8192).any(|&b| b == 0) {
        return Err(Unreadable::Binary);
    }
    let text = std::str::from_utf8(bytes).map_err(|e| Unreadable::Encoding(e.valid_up_to()))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    Ok(match kind {
        Kind::Html => html(text, stem),
        Kind::Markdown | Kind::Text => markdown(text, stem, kind == Kind::Markdown),
    })
}

static MD_LINK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(!?)\[([^\]\n]*)\]\(\s*<?([^)\s>]+)>?(?:\s+[^)]*)?\)").unwrap());
static BARE_URL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r#"https?://[^\s<>"'\)\]]+"#).unwrap());
static HEADING: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?m)^#{1,6}\s+(.+?)\s*#*\s*$").unwrap());

fn markdown(text: &str, stem: &str, is_markdown: bool) -> Parsed {
    let (front, body) = front_matter(text);
    let field = |names: &[&str]| {
        front
            .iter()
            .find(|(k, _)| names.contains(&k.as_str()))
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    let title = field(&["title"])
        .or_else(|| {
            is_markdown
                .then(|| HEADING.captures(body).map(|c| c[1].to_string()))
                .flatten()
        })
        .unwrap_or_else(|| stem.to_string());
    let mut links = Vec::new();
    let mut covered = Vec::new();
    for c in MD_LINK.captures_iter(body) {
        let whole = c.get(0).unwrap();
        covered.push(whole.range());
        if &c[1] == "!" {
            continue;
        }
        links.push(Link {
            url: c[3].to_string(),
            context: sentence_around(body, whole.start(), whole.end()),
        });
    }
    for m in BARE_URL.find_iter(body) {
        if covered.iter().any(|r| r.contains(&m.start())) {
            continue;
        }
        let url = m.as_str().trim_end_matches(['.', ',', ';', ':', '!', '?']);
        links.push(Link {
            url: url.to_string(),
            context: sentence_around(body, m.start(), m.end()),
        });
    }
    Parsed {
        title: title.trim().to_string(),
        source_url: field(&["source", "source_url", "url"]).filter(|u| u.contains("://")),
        date: field(&["date", "saved", "created"]),
        text: body.to_string(),
        links,
    }
}

/// `---` front matter as `key: value` pairs (quotes removed), and the rest.
fn front_matter(text: &str) -> (Vec<(String, String)>, &str) {
    let Some(rest) = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n")) else {
        return (Vec::new(), text);
    };
    let Some(end) = rest.find("\n---") else {
        return (Vec::new(), text);
    };
    let pairs = rest[..end]
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| {
            let v = v.trim();
            let v = v
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(v);
            (k.trim().to_ascii_lowercase(), v.to_string())
        })
        .collect();
    let body = rest[end + 4..]
        .trim_start_matches(['-'])
        .trim_start_matches(['\r', '\n']);
    (pairs, body)
}

static HTML_DROP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?is)<!--.*?-->|<(script|style|noscript|template)\b[^>]*>.*?</(script|style|noscript|template)\s*>")
        .unwrap()
});
static HTML_TITLE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?is)<title[^>]*>(.*?)</title>").unwrap());
static HTML_TAG: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?s)<(/?)([a-zA-Z][a-zA-Z0-9]*)\b([^>]*)>").unwrap());
static HTML_ATTR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?is)([a-zA-Z_:][-a-zA-Z0-9_:.]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))"#).unwrap()
});
const BLOCK_TAGS: &[&str] = &[
    "p",
    "div",
    "br",
    "li",
    "ul",
    "ol",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "tr",
    "table",
    "section",
    "article",
    "header",
    "footer",
    "blockquote",
    "pre",
    "hr",
    "title",
];

fn attributes(raw: &str) -> Vec<(String, String)> {
    HTML_ATTR
        .captures_iter(raw)
        .map(|c| {
            let value = c.get(2).or(c.get(3)).or(c.get(4)).map_or("", |m| m.as_str());
            (c[1].to_ascii_lowercase(), decode_entities(value))
        })
        .collect()
}

fn html(page: &str, stem: &str) -> Parsed {
    let page = HTML_DROP.replace_all(page, " ");
    let mut meta: Vec<(String, String)> = Vec::new();
    let mut canonical = None;
    // Text with anchors tracked by byte position in the output.
    let mut text = String::with_capacity(page.len() / 2);
    let mut anchors: Vec<(String, usize)> = Vec::new();
    let mut open_anchor: Option<(String, usize)> = None;
    let mut last = 0;
    let body_start = page.to_ascii_lowercase().find("<body").unwrap_or(0);
    for c in HTML_TAG.captures_iter(&page) {
        let whole = c.get(0).unwrap();
        if whole.start() >= body_start {
            text.push_str(&decode_entities(&page[last..whole.start()]));
        }
        last = whole.end();
        let closing = !c[1].is_empty();
        let tag = c[2].to_ascii_lowercase();
        match (tag.as_str(), closing) {
            ("meta", _) => {
                let attrs = attributes(&c[3]);
                let get = |k: &str| attrs.iter().find(|(a, _)| a == k).map(|(_, v)| v.clone());
                if let (Some(name), Some(content)) = (get("name").or_else(|| get("property")), get("content")) {
                    meta.push((name.to_ascii_lowercase(), content));
                }
            }
            ("link", _) => {
                let attrs = attributes(&c[3]);
                let get = |k: &str| attrs.iter().find(|(a, _)| a == k).map(|(_, v)| v.clone());
                if get("rel").is_some_and(|r| r.eq_ignore_ascii_case("canonical")) {
                    canonical = get("href");
                }
            }
            ("a", false) => {
                open_anchor = attributes(&c[3])
                    .into_iter()
                    .find(|(a, _)| a == "href")
                    .map(|(_, href)| (href, text.len()));
            }
            ("a", true) => {
                if let Some((href, start)) = open_anchor.take() {
                    anchors.push((href, start));
                }
            }
            (t, _) if BLOCK_TAGS.contains(&t) => text.push('\n'),
            _ => text.push(' '),
        }
    }
    if last >= body_start {
        text.push_str(&decode_entities(&page[last..]));
    }
    let text = tidy(&text, &mut anchors);
    let meta_of = |names: &[&str]| {
        meta.iter()
            .find(|(k, _)| names.contains(&k.as_str()))
            .map(|(_, v)| v.clone())
    };
    let title = HTML_TITLE
        .captures(&page)
        .map(|c| decode_entities(c[1].trim()))
        .filter(|t| !t.is_empty())
        .or_else(|| meta_of(&["og:title", "title"]))
        .unwrap_or_else(|| stem.to_string());
    let links = anchors
        .into_iter()
        .filter(|(href, _)| !href.starts_with('#') && !href.starts_with("javascript:") && !href.starts_with("mailto:"))
        .map(|(url, at)| Link {
            context: sentence_around(&text, at, at),
            url,
        })
        .collect();
    Parsed {
        title: one_line(&title),
        source_url: canonical.or_else(|| meta_of(&["og:url", "source", "url"])),
        date: meta_of(&[
            "date",
            "article:published_time",
            "dc.date",
            "pubdate",
            "og:updated_time",
        ]),
        text,
        links,
    }
}

/// Collapses runs of spaces and blank lines, moving anchor positions along.
fn tidy(text: &str, anchors: &mut [(String, usize)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut map = Vec::with_capacity(text.len() + 1);
    let mut pending_space = false;
    let mut newlines = 0;
    for (i, ch) in text.char_indices() {
        while map.len() <= i {
            map.push(out.len());
        }
        if ch == '\n' {
            newlines += 1;
            pending_space = false;
        } else if ch.is_whitespace() {
            pending_space = true;
        } else {
            if !out.is_empty() {
                if newlines > 0 {
                    out.push_str(if newlines > 1 { "\n\n" } else { "\n" });
                } else if pending_space {
                    out.push(' ');
                }
            }
            newlines = 0;
            pending_space = false;
            out.push(ch);
        }
    }
    while map.len() <= text.len() {
        map.push(out.len());
    }
    for (_, at) in anchors.iter_mut() {
        *at = map[(*at).min(text.len())];
    }
    out
}

fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    static ENTITY: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);").unwrap());
    ENTITY
        .replace_all(s, |c: &regex::Captures| {
            let e = &c[1];
            let decoded = match e {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some(' '),
                "mdash" => Some('—'),
                "ndash" => Some('–'),
                "hellip" => Some('…'),
                _ if e.starts_with("#x") => u32::from_str_radix(&e[2..], 16).ok().and_then(char::from_u32),
                _ if e.starts_with('#') => e[1..].parse().ok().and_then(char::from_u32),
                _ => None,
            };
            decoded.map_or_else(|| c[0].to_string(), String::from)
        })
        .into_owned()
}

/// The sentence (or line) of `text` around `start..end`, on one line.
fn sentence_around(text: &str, start: usize, end: usize) -> String {
    let is_break = |c: char| matches!(c, '\n');
    let before = &text[..start];
    let from = before
        .char_indices()
        .rev()
        .find(|&(i, c)| is_break(c) || (matches!(c, '.' | '!' | '?') && text[i + 1..].starts_with(char::is_whitespace)))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let after = &text[end..];
    let to = after
        .char_indices()
        .find(|&(i, c)| {
            is_break(c)
                || (matches!(c, '.' | '!' | '?') && after[i + 1..].chars().next().is_none_or(char::is_whitespace))
        })
        .map_or(text.len(), |(i, c)| {
            end + i + if is_break(c) { 0 } else { c.len_utf8() }
        });
    truncate(&one_line(&text[from..to]), 300)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_front_matter_heading_and_links() {
        let md = "---\ntitle: \"Intro to ML\"\nsource: https://example.com/ml\ndate: 2025-05-20\n---\n# Ignored heading\n\nMachine learning is big. For more, see [this resource](https://example.com/ml-algorithms \"algos\"). Also ../notes/b.md is [local](../notes/b.md).\n![diagram](img.png) and https://bare.example.org/x, too.\n";
        let p = parse(md.as_bytes(), Kind::Markdown, "intro").unwrap();
        assert_eq!(p.title, "Intro to ML");
        assert_eq!(p.source_url.as_deref(), Some("https://example.com/ml"));
        assert_eq!(p.date.as_deref(), Some("2025-05-20"));
        let urls: Vec<&str> = p.links.iter().map(|l| l.url.as_str()).collect();
        assert_eq!(
            urls,
            [
                "https://example.com/ml-algorithms",
                "../notes/b.md",
                "https://bare.example.org/x"
            ]
        );
        assert_eq!(
            p.links[0].context,
            "For more, see [this resource](https://example.com/ml-algorithms \"algos\")."
        );
        assert!(p.text.starts_with("# Ignored heading"));
    }

    #[test]
    fn titles_fall_back_to_a_heading_then_the_file_name() {
        assert_eq!(
            parse(b"intro\n\n## Deep Nets ##\n", Kind::Markdown, "f").unwrap().title,
            "Deep Nets"
        );
        assert_eq!(
            parse(b"# not a heading in text\n", Kind::Text, "notes").unwrap().title,
            "notes"
        );
    }

    #[test]
    fn html_pages_give_title_canonical_date_text_and_anchors() {
        let page = r#"<!doctype html><html><head><title>Rust &amp; WebAssembly</title>
<link rel="canonical" href="https://www.example.com/rust-wasm/">
<meta property="article:published_time" content="2025-03-01">
<style>body{color:red}</style><script>var x = "<a href='no'>";</script></head>
<body><h1>Rust &amp; Wasm</h1><p>Start with <a href="https://rustwasm.github.io/book/">the book</a>. It is good.</p>
<p>Local: <a href='../notes/b.md'>notes</a></p><!-- <a href="hidden">x</a> --></body></html>"#;
        let p = parse(page.as_bytes(), Kind::Html, "page").unwrap();
        assert_eq!(p.title, "Rust & WebAssembly");
        assert_eq!(p.source_url.as_deref(), Some("https://www.example.com/rust-wasm/"));
        assert_eq!(p.date.as_deref(), Some("2025-03-01"));
        assert!(
            p.text
                .contains("Rust & Wasm\n\nStart with the book. It is good.\n\nLocal: notes"),
            "{:?}",
            p.text
        );
        assert!(!p.text.contains("color:red") && !p.text.contains("var x"));
        let urls: Vec<&str> = p.links.iter().map(|l| l.url.as_str()).collect();
        assert_eq!(urls, ["https://rustwasm.github.io/book/", "../notes/b.md"]);
        assert_eq!(p.links[0].context, "Start with the book.");
    }

    #[test]
    fn binary_and_broken_files_are_refused() {
        assert_eq!(parse(b"PNG\0\0data", Kind::Text, "x"), Err(Unreadable::Binary));
        assert_eq!(
            parse(b"ok \xff\xfe bad", Kind::Markdown, "x"),
            Err(Unreadable::Encoding(3))
        );
    }

    #[test]
    fn kinds_by_extension() {
        assert_eq!(Kind::of("a.MD"), Some(Kind::Markdown));
        assert_eq!(Kind::of("a.htm"), Some(Kind::Html));
        assert_eq!(Kind::of("a.png"), None);
        assert_eq!(Kind::of("README"), None);
    }
}
