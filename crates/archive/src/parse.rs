//! One archived file to a document: title, source URL, date, plain text and
//! links with the sentence around them. Markdown and text may open with YAML
//! front matter (`title:`, `source:`/`url:`, `date:`); saved HTML pages give
//! `<title>`, `<link rel="canonical">`/`og:url`, date `<meta>`s, and what
//! the tool that saved them wrote (Chrome and Edge, SingleFile, monolith).
//! Well-kept parsers do the reading: pulldown-cmark, html5ever (scraper) and
//! yaml-rust2.

use std::sync::LazyLock;

use regex::Regex;

use vocab::text::{one_line, truncate};

/// What kind of file this is, by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// `.md`, `.markdown`
    Markdown,
    /// `.txt`
    Text,
    /// `.html`, `.htm`
    Html,
}

impl Kind {
    /// The kind of a file name, or `None` for files the archive does not read.
    pub(super) fn of(name: &str) -> Option<Kind> {
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
pub(super) struct Link {
    /// As written (absolute URL or relative path).
    pub url: String,
    /// The sentence around it.
    pub context: String,
}

/// A parsed document.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Parsed {
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
pub(super) enum Unreadable {
    /// NUL bytes: not text.
    #[error("binary content")]
    Binary,
    /// Not UTF-8.
    #[error("not valid UTF-8 (byte {0})")]
    Encoding(usize),
}

/// Parses `bytes` of a file of `kind`; `stem` is the fallback title.
pub(super) fn parse(bytes: &[u8], kind: Kind, stem: &str) -> Result<Parsed, Unreadable> {
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

static BARE_URL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r#"https?://[^\s<>"'\)\]]+"#).unwrap());

/// Markdown (pulldown-cmark) or plain text, after YAML front matter.
fn markdown(text: &str, stem: &str, is_markdown: bool) -> Parsed {
    let (front, body) = split_front_matter(text);
    let front = front.map(front_matter).unwrap_or_default();
    let field = |names: &[&str]| {
        front
            .iter()
            .find(|(k, _)| names.contains(&k.as_str()))
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    let (heading, text, links) = if is_markdown {
        markdown_body(body)
    } else {
        (None, body.to_string(), bare_urls(body, 0..body.len()))
    };
    let title = field(&["title"]).or(heading).unwrap_or_else(|| stem.to_string());
    Parsed {
        title: one_line(title.trim()),
        source_url: field(&["source", "source_url", "url"]).filter(|u| u.contains("://")),
        date: field(&["date", "saved", "created"]),
        text,
        links,
    }
}

/// Whether a block of Markdown is page furniture, a navigation line such as
/// `[Home](/) · [Comments](/c)`: two links or more, and between them only
/// separators. Its text is not searched and its links are not citations.
fn is_navigation(outside_links: &str, links: usize) -> bool {
    links >= 2
        && outside_links
            .chars()
            .all(|c| c.is_whitespace() || matches!(c, '·' | '|' | '•' | '/' | '-' | '–' | '—' | '>' | '»' | ',' | ':'))
}

/// The first heading, the text (as it reads: no `#` marks, link targets or
/// emphasis, one line per block) and the links of a Markdown body, each link
/// with its sentence from the source. Links and URLs inside code blocks and
/// code spans are examples, not citations; images are not links; a
/// navigation line ([`is_navigation`]) is neither text nor citations.
fn markdown_body(body: &str) -> (Option<String>, String, Vec<Link>) {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let mut heading: Option<String> = None;
    let mut in_heading = false;
    let mut in_code = false;
    // Inside a link or image: its text is not scanned for bare URLs.
    let mut inside = 0usize;
    let (mut text, mut links) = (String::new(), Vec::new());
    // The block being read: its text, the text outside its links, its links.
    let (mut block, mut outside, mut block_links) = (String::new(), String::new(), Vec::new());
    let mut linked = 0usize;
    for (event, range) in
        Parser::new_ext(body, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH).into_offset_iter()
    {
        match event {
            Event::Start(Tag::Heading { .. }) if heading.is_none() => {
                in_heading = true;
                heading = Some(String::new());
            }
            Event::Start(Tag::Link { dest_url, .. }) => {
                inside += 1;
                linked += 1;
                block_links.push(Link {
                    url: dest_url.to_string(),
                    context: sentence_around(body, range.start, range.end),
                });
            }
            Event::Start(Tag::Image { .. }) => inside += 1,
            Event::Start(Tag::CodeBlock(_)) => in_code = true,
            Event::End(TagEnd::Link | TagEnd::Image) => inside = inside.saturating_sub(1),
            Event::Text(ref t) | Event::Code(ref t) => {
                if in_heading && let Some(h) = heading.as_mut() {
                    h.push_str(t);
                }
                if inside == 0 && !in_code && matches!(event, Event::Text(_)) {
                    block_links.extend(bare_urls(body, range));
                }
                if inside == 0 {
                    outside.push_str(t);
                }
                block.push_str(t);
            }
            // Markup typed into a note is what it says (a note on XSS quotes `<script>`).
            Event::InlineHtml(ref t) | Event::Html(ref t) => {
                outside.push_str(t);
                block.push_str(t);
            }
            Event::SoftBreak | Event::HardBreak => {
                block.push(' ');
                outside.push(' ');
            }
            Event::End(end) => {
                if matches!(end, TagEnd::Heading(_)) {
                    in_heading = false;
                }
                if matches!(end, TagEnd::CodeBlock) {
                    in_code = false;
                }
                let ends_block = matches!(
                    end,
                    TagEnd::Paragraph
                        | TagEnd::Heading(_)
                        | TagEnd::Item
                        | TagEnd::CodeBlock
                        | TagEnd::TableCell
                        | TagEnd::HtmlBlock
                );
                if ends_block {
                    if !is_navigation(&outside, linked) {
                        text.push_str(block.trim());
                        text.push('\n');
                        links.append(&mut block_links);
                    }
                    (block, outside, linked) = (String::new(), String::new(), 0);
                    block_links.clear();
                }
            }
            _ => {}
        }
    }
    (heading.filter(|h| !h.trim().is_empty()), text, links)
}

/// Bare `http(s)://` URLs in `text[range]`, with their sentences.
fn bare_urls(text: &str, range: std::ops::Range<usize>) -> Vec<Link> {
    BARE_URL
        .find_iter(&text[range.clone()])
        .map(|m| {
            let (start, end) = (range.start + m.start(), range.start + m.end());
            Link {
                url: m.as_str().trim_end_matches(['.', ',', ';', ':', '!', '?']).to_string(),
                context: sentence_around(text, start, end),
            }
        })
        .collect()
}

/// `---` front matter and the rest of the text.
fn split_front_matter(text: &str) -> (Option<&str>, &str) {
    let Some(rest) = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n")) else {
        return (None, text);
    };
    let Some(end) = rest.find("\n---") else {
        return (None, text);
    };
    let body = rest[end + 4..].trim_start_matches('-').trim_start_matches(['\r', '\n']);
    (Some(&rest[..end]), body)
}

/// Front matter as lower-case keys and their scalar values (YAML; a block
/// that is not YAML gives nothing).
fn front_matter(yaml: &str) -> Vec<(String, String)> {
    use yaml_rust2::{Yaml, YamlLoader};
    let Ok(docs) = YamlLoader::load_from_str(yaml) else {
        return Vec::new();
    };
    let Some(Yaml::Hash(map)) = docs.into_iter().next() else {
        return Vec::new();
    };
    map.into_iter()
        .filter_map(|(k, v)| {
            let value = match v {
                Yaml::String(s) | Yaml::Real(s) => s,
                Yaml::Integer(i) => i.to_string(),
                Yaml::Boolean(b) => b.to_string(),
                _ => return None,
            };
            Some((k.as_str()?.to_ascii_lowercase(), value.trim().to_string()))
        })
        .collect()
}

/// Elements whose text is not page text.
const SKIPPED_TAGS: &[&str] = &["script", "style", "noscript", "template", "head", "svg", "iframe"];
/// Elements that break lines.
const BLOCK_TAGS: &[&str] = &[
    "p",
    "div",
    "br",
    "li",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
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
    "nav",
    "aside",
    "main",
    "figure",
    "figcaption",
    "blockquote",
    "pre",
    "hr",
    "form",
];

/// Where a saving tool recorded the page's address and date.
#[derive(Debug, Default, PartialEq)]
struct Capture {
    url: Option<String>,
    date: Option<String>,
}

/// A saved web page, parsed as a browser would (html5ever): entities,
/// comments, scripts and broken markup are the parser's business.
fn html(page: &str, stem: &str) -> Parsed {
    use scraper::Node;
    let doc = scraper::Html::parse_document(page);
    let mut meta: Vec<(String, String)> = Vec::new();
    let mut canonical = None;
    let mut title = None;
    let mut capture = Capture::default();
    for node in doc.tree.root().descendants() {
        match node.value() {
            Node::Element(e) => match e.name() {
                "title" if title.is_none() => {
                    title = Some(
                        node.children()
                            .filter_map(|c| c.value().as_text().map(|t| t.to_string()))
                            .collect::<String>(),
                    );
                }
                "meta" => {
                    if let (Some(name), Some(content)) = (e.attr("name").or(e.attr("property")), e.attr("content")) {
                        meta.push((name.to_ascii_lowercase(), content.to_string()));
                    }
                }
                "link" if e.attr("rel").is_some_and(|r| r.eq_ignore_ascii_case("canonical")) => {
                    canonical = canonical.or(e.attr("href").map(str::to_string));
                }
                _ => {}
            },
            // Saving tools write their comment before or at the top of the page, never in its body.
            Node::Comment(c)
                if !node
                    .ancestors()
                    .any(|a| a.value().as_element().is_some_and(|e| e.name() == "body")) =>
            {
                let found = saved_by_tool(c);
                capture.url = capture.url.or(found.url);
                capture.date = capture.date.or(found.date);
            }
            _ => {}
        }
    }
    let mut text = String::with_capacity(page.len() / 4);
    let mut anchors: Vec<(String, usize)> = Vec::new();
    visible_text(doc.tree.root(), &mut text, &mut anchors);
    let text = tidy(&text, &mut anchors);
    let meta_of = |names: &[&str]| {
        meta.iter()
            .find(|(k, _)| names.contains(&k.as_str()))
            .map(|(_, v)| v.clone())
    };
    let title = title
        .map(|t| one_line(t.trim()))
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
        // The page's own word first, then what the saving tool recorded.
        source_url: canonical
            .or_else(|| meta_of(&["og:url"]))
            .or(capture.url)
            .or_else(|| meta_of(&["source", "url"])),
        date: meta_of(&[
            "date",
            "article:published_time",
            "dc.date",
            "pubdate",
            "og:updated_time",
        ])
        .or(capture.date),
        text,
        links,
    }
}

/// The text a reader sees, with each anchor's `href` and its position.
fn visible_text(node: ego_tree::NodeRef<'_, scraper::Node>, text: &mut String, anchors: &mut Vec<(String, usize)>) {
    for child in node.children() {
        match child.value() {
            scraper::Node::Text(t) => text.push_str(&t.text),
            scraper::Node::Element(e) => {
                let name = e.name();
                if SKIPPED_TAGS.contains(&name) {
                    continue;
                }
                let block = BLOCK_TAGS.contains(&name);
                if block {
                    text.push('\n');
                } else if matches!(name, "td" | "th") {
                    text.push(' ');
                }
                let start = text.len();
                visible_text(child, text, anchors);
                if name == "a"
                    && let Some(href) = e.attr("href")
                {
                    anchors.push((href.trim().to_string(), start));
                }
                if block {
                    text.push('\n');
                }
            }
            _ => {}
        }
    }
}

/// What a saving tool's comment says: Chrome and Edge ("Save page as")
/// write `saved from url=(0030)https://…` before `<html>`; SingleFile opens
/// the page with `Page saved with SingleFile`, ` url: …` and ` saved date: …`;
/// monolith writes `Saved from URL at RFC3339 using monolith vX`.
fn saved_by_tool(comment: &str) -> Capture {
    let comment = comment.trim();
    if let Some(rest) = comment.strip_prefix("saved from url=(") {
        let url = rest.split_once(')').map(|(_, u)| u.trim());
        return Capture {
            url: url.filter(|u| u.contains("://")).map(str::to_string),
            date: None,
        };
    }
    if comment.starts_with("Page saved with SingleFile") || comment.starts_with("Archive processed by SingleFile") {
        let line = |key: &str| {
            comment
                .lines()
                .find_map(|l| l.trim().strip_prefix(key).map(|v| v.trim().to_string()))
                .filter(|v| !v.is_empty())
        };
        return Capture {
            url: line("url:").filter(|u| u.contains("://")),
            date: line("saved date:").map(|d| single_file_date(&d).unwrap_or(d)),
        };
    }
    if let Some(rest) = comment.strip_prefix("Saved from ")
        && let Some((url, rest)) = rest.split_once(" at ")
        && rest.contains(" using ")
    {
        let date = rest.split_once(" using ").map(|(d, _)| d.trim().to_string());
        return Capture {
            url: url.contains("://").then(|| url.trim().to_string()),
            date,
        };
    }
    Capture::default()
}

/// SingleFile's date is JavaScript's `Date.toString()`
/// (`Thu Mar 14 2024 10:00:00 GMT+0100 (Central European Standard Time)`); as RFC 3339.
fn single_file_date(text: &str) -> Option<String> {
    let without_zone_name = text.split(" (").next()?.trim();
    chrono::DateTime::parse_from_str(without_zone_name, "%a %b %d %Y %H:%M:%S GMT%z")
        .ok()
        .map(|d| d.to_rfc3339())
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
        assert!(
            p.text.starts_with("Ignored heading\nMachine learning is big."),
            "{}",
            p.text
        );
        assert!(
            !p.text.contains("](") && !p.text.contains("ml-algorithms"),
            "{}",
            p.text
        );
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

    /// A long article saved by Chrome's "Save page as": the address only in
    /// the `saved from url` comment, markup in scripts, a link in a comment,
    /// `>` inside an attribute, unclosed `<p>`s and rarer entities.
    #[test]
    fn a_page_saved_by_chrome() {
        let page = include_str!("../../../tests/fixtures/archive/url-archive/saved/attention-chrome.html");
        let p = parse(page.as_bytes(), Kind::Html, "attention-chrome").unwrap();
        assert_eq!(p.title, "Attention, Explained … Slowly | Example Blog");
        assert_eq!(
            p.source_url.as_deref(),
            Some("https://blog.example.net/posts/attention-explained")
        );
        assert!(p.text.contains("By Ana Luís · 12 min read"), "{}", p.text);
        assert!(p.text.contains("The idea isn\u{2019}t new"), "{}", p.text);
        assert!(p.text.contains("values… then softmax(QKT/√d)V"), "{}", p.text);
        assert!(
            p.text
                .contains("© 2024 Example Blog <blog@example.net> — all rights reserved."),
            "{}",
            p.text
        );
        assert!(!p.text.contains("tracker") && !p.text.contains("console.log") && !p.text.contains("color: #333"));
        let urls: Vec<&str> = p.links.iter().map(|l| l.url.as_str()).collect();
        assert_eq!(
            urls,
            [
                "https://blog.example.net/",
                "https://blog.example.net/about",
                "https://arxiv.org/abs/1409.0473",
                "https://arxiv.org/abs/1706.03762",
                "../../research-archive/2025-05-23/transformers.md",
            ],
            "no link from the script, the comment, #top, javascript: or mailto:"
        );
        let paper = &p.links[3];
        assert_eq!(paper.context, "For the original paper, read Attention Is All You Need.");
    }

    #[test]
    fn a_page_saved_by_single_file() {
        let page = include_str!("../../../tests/fixtures/archive/url-archive/saved/vector-search-singlefile.html");
        let p = parse(page.as_bytes(), Kind::Html, "x").unwrap();
        assert_eq!(p.title, "Vector search guide");
        assert_eq!(
            p.source_url.as_deref(),
            Some("https://docs.example.io/guides/vector-search")
        );
        assert_eq!(p.date.as_deref(), Some("2024-03-14T10:00:00+01:00"));
        assert!(
            p.text.starts_with("Vector search\n\nApproximate nearest neighbour"),
            "{:?}",
            p.text
        );
    }

    #[test]
    fn saving_tools_comments() {
        let monolith = "<!-- Saved from https://example.org/a at 2024-05-01T12:00:00Z using monolith v2.8.1 -->\n<html><body>x</body></html>";
        let p = parse(monolith.as_bytes(), Kind::Html, "m").unwrap();
        assert_eq!(p.source_url.as_deref(), Some("https://example.org/a"));
        assert_eq!(p.date.as_deref(), Some("2024-05-01T12:00:00Z"));
        // The page's own canonical link wins over the tool's record.
        let both = "<!-- saved from url=(0021)https://example.org/b --><html><head><link rel=canonical href=https://example.org/canonical></head></html>";
        assert_eq!(
            parse(both.as_bytes(), Kind::Html, "b").unwrap().source_url.as_deref(),
            Some("https://example.org/canonical")
        );
        // A comment in the body is page content, not a saving tool's record.
        let quoted = "<html><body><!-- saved from url=(0021)https://example.org/c --><p>hi</body></html>";
        assert_eq!(parse(quoted.as_bytes(), Kind::Html, "c").unwrap().source_url, None);
        assert_eq!(
            single_file_date("Mon Jan 06 2025 08:30:00 GMT-0500 (Eastern Standard Time)").as_deref(),
            Some("2025-01-06T08:30:00-05:00")
        );
        assert_eq!(single_file_date("yesterday"), None);
    }

    /// Links in code blocks and code spans are examples, not citations.
    #[test]
    fn markdown_code_holds_no_citations() {
        let note = include_str!("../../../tests/fixtures/archive/research-archive/2025-05-30/citing_saved_pages.md");
        let p = parse(note.as_bytes(), Kind::Markdown, "x").unwrap();
        assert_eq!(p.title, "Notes on saved pages: attention & vector search");
        assert_eq!(p.date.as_deref(), Some("2025-05-30"));
        let urls: Vec<&str> = p.links.iter().map(|l| l.url.as_str()).collect();
        assert_eq!(
            urls,
            [
                "https://blog.example.net/posts/attention-explained",
                "https://docs.example.io/guides/vector-search"
            ]
        );
        assert!(
            p.links[1]
                .context
                .starts_with("For retrieval, the [vector search guide]"),
            "{:?}",
            p.links[1]
        );
    }

    /// Issue #72 (8): a navigation line is furniture (neither searched nor
    /// a citation), and headings lose their `#` marks.
    #[test]
    fn markdown_navigation_is_furniture() {
        let md = "[Home](https://blog.example/) · [Comments](https://blog.example/c)\n\n# Rust and WebAssembly\n\nStart with [the book](https://rustwasm.github.io/book/), then *build*.\n\n[Prev](/a) | [Next](/b)\n";
        let p = parse(md.as_bytes(), Kind::Markdown, "x").unwrap();
        let urls: Vec<&str> = p.links.iter().map(|l| l.url.as_str()).collect();
        assert_eq!(urls, ["https://rustwasm.github.io/book/"]);
        assert_eq!(p.text, "Rust and WebAssembly\nStart with the book, then build.\n");
        assert_eq!(p.title, "Rust and WebAssembly");
    }

    #[test]
    fn only_separators_between_two_links_or_more_make_navigation() {
        assert!(is_navigation(" · ", 2));
        assert!(is_navigation(" | | ", 3));
        assert!(!is_navigation(" · ", 1), "one link may be a citation");
        assert!(!is_navigation(" and see ", 2), "a sentence around links");
    }

    #[test]
    fn front_matter_is_yaml() {
        let md = "---\ntitle: >-\n  A folded\n  title\nurl: 'https://example.com/x'\ndate: 2025-01-02\nnested: {a: 1}\n---\nbody\n";
        let p = parse(md.as_bytes(), Kind::Markdown, "f").unwrap();
        assert_eq!(p.title, "A folded title");
        assert_eq!(p.source_url.as_deref(), Some("https://example.com/x"));
        assert_eq!(p.date.as_deref(), Some("2025-01-02"));
        assert_eq!(p.text, "body\n");
        // Not YAML: no fields, the block still leaves the text.
        let p = parse(b"---\ntitle: [unclosed\n---\nbody\n", Kind::Markdown, "f").unwrap();
        assert_eq!((p.title.as_str(), p.text.as_str()), ("f", "body\n"));
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
