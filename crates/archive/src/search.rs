//! Searching the archive: BM25 over title (boosted) and content, typo
//! tolerance that never outranks exact hits, phrases in quotes, `<mark>`ed
//! snippets, and citations with a graph up to `citationDepth` hops.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::{Map, Value, json};
use tantivy::collector::TopDocs;
use tantivy::query::{
    BooleanQuery, BoostQuery, DisjunctionMaxQuery, FuzzyTermQuery, Occur, PhraseQuery, Query, TermQuery,
};
use tantivy::schema::{IndexRecordOption, Value as _};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{Index, IndexReader, ReloadPolicy, TantivyDocument, Term};

use super::db::{self, Citation};
use super::{ArchivesConfig, Error, Fields};
use vocab::validate::Checker;

/// Title matches count this much more than content matches.
const TITLE_BOOST: f32 = 2.5;
/// A typo-tolerant match scores at most this (exact BM25 hits score more).
const FUZZY_BOOST: f32 = 0.3;
/// A phrase match on top of its words.
const PHRASE_BOOST: f32 = 1.5;
/// Characters of content around the first matches in a snippet.
const SNIPPET_CHARS: usize = 180;
/// Snippets per field.
const SNIPPETS: usize = 2;

/// A validated `searchLocalArchives` call.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Words and "quoted phrases".
    pub query: String,
    /// Tolerate typos.
    pub fuzzy: bool,
    /// Add citations and the citation graph.
    pub include_citations: bool,
    /// Hops of the graph, 1..=3.
    pub citation_depth: u64,
    /// Results, 1..=50.
    pub limit: u64,
}

impl Options {
    /// Checks the tool's arguments, every problem at once.
    pub fn from_args(args: &Map<String, Value>) -> Result<Self, Vec<String>> {
        let mut c = Checker::new(args);
        let query = c.string("query").unwrap_or_default();
        if query.trim().is_empty() {
            c.problem("query: a non-empty search query is required".into());
        }
        let options = Options {
            query,
            fuzzy: c.boolean("fuzzy").unwrap_or(true),
            include_citations: c.boolean("includeCitations").unwrap_or(false),
            citation_depth: c.integer("citationDepth", 1, Some(3)).unwrap_or(1),
            limit: c.integer("limit", 1, Some(50)).unwrap_or(10),
        };
        for key in args.keys() {
            if !["query", "fuzzy", "includeCitations", "citationDepth", "limit"].contains(&key.as_str()) {
                c.problem(format!("{key}: unknown argument"));
            }
        }
        c.finish(options)
    }
}

/// The document part of a result.
#[derive(Debug, Clone, Serialize)]
pub struct Document {
    /// Stable id (`doc-` and a hash of the path).
    pub id: String,
    /// Title.
    pub title: String,
    /// `archive-folder/relative/path`.
    pub path: String,
    /// Source URL when the page says where it came from, else the archive folder.
    pub source: String,
    /// Date from the metadata.
    pub date: Option<String>,
    /// BM25 relative to the best result (1.0).
    pub score: f64,
}

/// Snippets of one field.
#[derive(Debug, Clone, Serialize)]
pub struct Highlight {
    /// `title` or `content`.
    pub field: &'static str,
    /// HTML-escaped text with matches in `<mark>`.
    pub snippets: Vec<String>,
}

/// One result.
#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    /// The document.
    pub document: Document,
    /// Where it matched.
    pub highlights: Vec<Highlight>,
    /// Its citations, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub citations: Option<Citations>,
}

/// Both directions of a document's citations.
#[derive(Debug, Clone, Serialize)]
pub struct Citations {
    /// Links in this document.
    pub citing: Vec<Citation>,
    /// Links to it from other documents.
    pub cited: Vec<Citation>,
}

/// What a search found: its hits, and the citation graph over them.
#[derive(Debug, Clone)]
pub struct Hits {
    /// Best first.
    pub results: Vec<Hit>,
    /// Over the results, when citations were asked for.
    pub graph: Option<Value>,
}

impl Hits {
    /// The tool's `structuredContent` (the seed's shape).
    pub fn to_json(&self, o: &Options) -> Value {
        let mut v = json!({
            "results": self.results,
            "metadata": {
                "totalResults": self.results.len(),
                "query": o.query,
                "fuzzy": o.fuzzy,
                "includeCitations": o.include_citations,
                "citationDepth": o.citation_depth,
                "limit": o.limit,
            }
        });
        if let Some(graph) = &self.graph {
            v["citationGraph"] = graph.clone();
        }
        v
    }

    /// The tool's text: titles, paths and a first snippet.
    pub fn summary(&self, o: &Options) -> String {
        if self.results.is_empty() {
            return format!("No archived documents match \"{}\".", o.query);
        }
        let mut text = format!(
            "Found {} archived document{} for \"{}\":",
            self.results.len(),
            if self.results.len() == 1 { "" } else { "s" },
            o.query
        );
        for (i, hit) in self.results.iter().enumerate() {
            let d = &hit.document;
            text.push_str(&format!("\n{}. {} ({}", i + 1, d.title, d.path));
            if let Some(date) = &d.date {
                text.push_str(&format!(", {date}"));
            }
            text.push(')');
            if let Some(s) = hit
                .highlights
                .iter()
                .find(|h| h.field == "content")
                .and_then(|h| h.snippets.first())
            {
                text.push_str(&format!("\n   {}", unmark(s)));
            }
            if let Some(c) = &hit.citations {
                text.push_str(&format!("\n   cites {}, cited by {}", c.citing.len(), c.cited.len()));
            }
        }
        text
    }
}

/// A snippet as plain text: marks as `**`, entities decoded.
fn unmark(snippet: &str) -> String {
    snippet
        .replace("<mark>", "**")
        .replace("</mark>", "**")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

struct Opened {
    index: Index,
    reader: IndexReader,
    fields: Fields,
    db: Mutex<rusqlite::Connection>,
}

/// The archive as the server reads it; opened on first use (the index may
/// be built after the gateway started) and reloaded as the indexer commits.
#[derive(Debug)]
pub struct Archive {
    config: Arc<ArchivesConfig>,
    opened: Mutex<Option<Arc<Opened>>>,
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Opened")
    }
}

impl Archive {
    /// The archive of `config`, not opened yet.
    pub fn new(config: Arc<ArchivesConfig>) -> Self {
        Self {
            config,
            opened: Mutex::new(None),
        }
    }

    /// Its settings.
    pub fn config(&self) -> &ArchivesConfig {
        &self.config
    }

    fn open(&self) -> Result<Arc<Opened>, Error> {
        let mut slot = self.opened.lock().expect("archive lock");
        if let Some(o) = &*slot {
            return Ok(o.clone());
        }
        let meta = self.config.index_dir.join("meta.json");
        if !meta.exists() || !self.config.db_path.exists() {
            return Err(Error::NotIndexed(self.config.index_dir.display().to_string()));
        }
        let index = Index::open_in_dir(&self.config.index_dir)?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::OnCommitWithDelay)
            .try_into()?;
        let fields = Fields::of(&index.schema())?;
        let db = db::open(&self.config.db_path, false)?;
        let opened = Arc::new(Opened {
            index,
            reader,
            fields,
            db: Mutex::new(db),
        });
        *slot = Some(opened.clone());
        Ok(opened)
    }

    /// Runs a search.
    pub fn search(&self, o: &Options) -> Result<Hits, Error> {
        let opened = self.open()?;
        let f = opened.fields;
        let mut analyzer = opened.index.tokenizer_for_field(f.content)?;
        let parsed = QueryText::parse(&o.query, &mut analyzer);
        let Some(query) = parsed.query(f, o.fuzzy) else {
            return Ok(Hits {
                results: Vec::new(),
                graph: None,
            });
        };
        let searcher = opened.reader.searcher();
        let top = searcher.search(&query, &TopDocs::with_limit(o.limit as usize).order_by_score())?;
        let best = top.first().map_or(1.0, |(s, _)| *s).max(f32::EPSILON);
        let db = opened.db.lock().expect("archive db lock");
        let mut results = Vec::with_capacity(top.len());
        let matcher = parsed.matcher(o.fuzzy);
        for (score, address) in top {
            let doc: TantivyDocument = searcher.doc(address)?;
            let text = |field| doc.get_first(field).and_then(|v| v.as_str()).map(str::to_string);
            let id = text(f.id).unwrap_or_default();
            let path = text(f.path).unwrap_or_default();
            let title = text(f.title).unwrap_or_default();
            let content = text(f.content).unwrap_or_default();
            let mut highlights = Vec::new();
            for (field, value, window) in [("title", &title, usize::MAX), ("content", &content, SNIPPET_CHARS)] {
                let snippets = snippets(value, &mut analyzer, &matcher, window);
                if !snippets.is_empty() {
                    highlights.push(Highlight { field, snippets });
                }
            }
            let citations = if o.include_citations {
                Some(Citations {
                    citing: db::citing(&db, &id)?,
                    cited: db::cited_by(&db, &id)?,
                })
            } else {
                None
            };
            results.push(Hit {
                document: Document {
                    source: text(f.source).unwrap_or_else(|| path.split('/').next().unwrap_or_default().to_string()),
                    date: text(f.date),
                    score: ((score / best) as f64 * 1000.0).round() / 1000.0,
                    id,
                    path,
                    title,
                },
                highlights,
                citations,
            });
        }
        let graph = if o.include_citations && !results.is_empty() {
            Some(graph(&db, &results, o.citation_depth)?)
        } else {
            None
        };
        Ok(Hits { results, graph })
    }
}

/// The citation graph around `results`, `depth` hops both ways.
fn graph(conn: &rusqlite::Connection, results: &[Hit], depth: u64) -> Result<Value, Error> {
    let mut nodes: BTreeMap<String, (String, &'static str, u64)> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut queue = VecDeque::new();
    for hit in results {
        let d = &hit.document;
        if nodes.insert(d.id.clone(), (d.title.clone(), "source", 0)).is_none() {
            order.push(d.id.clone());
            queue.push_back((d.id.clone(), 0));
        }
    }
    let mut edges: Vec<(String, String, f64)> = Vec::new();
    let mut seen_edges = HashSet::new();
    while let Some((id, hops)) = queue.pop_front() {
        if hops >= depth {
            continue;
        }
        let out = db::citing(conn, &id)?;
        let inc = db::cited_by(conn, &id)?;
        for c in out.into_iter().chain(inc) {
            let Some(target) = c.target_id.clone() else { continue };
            if seen_edges.insert((c.source_id.clone(), target.clone())) {
                edges.push((c.source_id.clone(), target.clone(), c.confidence));
            }
            let other = if c.source_id == id { target } else { c.source_id };
            if !nodes.contains_key(&other) {
                let title = db::title(conn, &other)?.unwrap_or_else(|| other.clone());
                let kind = if hops == 0 && other != id { "target" } else { "related" };
                nodes.insert(other.clone(), (title, kind, hops + 1));
                order.push(other.clone());
                queue.push_back((other, hops + 1));
            }
        }
    }
    let nodes: Vec<Value> = order
        .iter()
        .map(|id| {
            let (label, kind, hops) = &nodes[id];
            json!({ "id": id, "label": label, "type": kind, "depth": hops })
        })
        .collect();
    let edges: Vec<Value> = edges
        .into_iter()
        .map(|(from, to, confidence)| json!({ "from": from, "to": to, "confidence": confidence }))
        .collect();
    Ok(json!({ "nodes": nodes, "edges": edges }))
}

/// A query: loose words and "quoted phrases", each analysed like the index.
struct QueryText {
    words: Vec<String>,
    phrases: Vec<Vec<String>>,
}

impl QueryText {
    fn parse(query: &str, analyzer: &mut TextAnalyzer) -> Self {
        let mut analyse = |text: &str| {
            let mut out = Vec::new();
            let mut stream = analyzer.token_stream(text);
            while let Some(t) = stream.next() {
                out.push(t.text.clone());
            }
            out
        };
        let mut words = Vec::new();
        let mut phrases = Vec::new();
        for (i, part) in query.split('"').enumerate() {
            let stems = analyse(part);
            // Odd parts sit between quotes (an unclosed quote counts as closed at the end).
            if i % 2 == 1 && stems.len() > 1 {
                phrases.push(stems.clone());
            }
            words.extend(stems);
        }
        let mut seen = HashSet::new();
        words.retain(|w| seen.insert(w.clone()));
        Self { words, phrases }
    }

    /// Every word may match exactly (title boosted) or, when fuzzy, within
    /// its edit distance at a fraction of the score; every phrase must match.
    fn query(&self, f: Fields, fuzzy: bool) -> Option<Box<dyn Query>> {
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for word in &self.words {
            let mut alternatives: Vec<Box<dyn Query>> = Vec::new();
            for (field, boost) in [(f.title, TITLE_BOOST), (f.content, 1.0)] {
                let term = Term::from_field_text(field, word);
                alternatives.push(Box::new(BoostQuery::new(
                    Box::new(TermQuery::new(term.clone(), IndexRecordOption::WithFreqs)),
                    boost,
                )));
                let distance = edit_distance(word);
                if fuzzy && distance > 0 {
                    alternatives.push(Box::new(BoostQuery::new(
                        Box::new(FuzzyTermQuery::new(term, distance, true)),
                        FUZZY_BOOST * boost / TITLE_BOOST,
                    )));
                }
            }
            clauses.push((Occur::Should, Box::new(DisjunctionMaxQuery::new(alternatives))));
        }
        for phrase in &self.phrases {
            let in_field = |field| -> Box<dyn Query> {
                let terms = phrase.iter().map(|w| Term::from_field_text(field, w)).collect();
                Box::new(BoostQuery::new(Box::new(PhraseQuery::new(terms)), PHRASE_BOOST))
            };
            clauses.push((
                Occur::Must,
                Box::new(DisjunctionMaxQuery::new(vec![in_field(f.title), in_field(f.content)])),
            ));
        }
        (!clauses.is_empty()).then(|| Box::new(BooleanQuery::new(clauses)) as Box<dyn Query>)
    }

    /// Decides whether an analysed token of a document matches the query.
    fn matcher(&self, fuzzy: bool) -> impl Fn(&str) -> bool + '_ {
        move |token: &str| {
            self.words.iter().any(|w| {
                let d = edit_distance(w) as usize;
                w == token
                    || (fuzzy
                        && d > 0
                        && w.len().abs_diff(token.len()) <= d
                        && strsim::damerau_levenshtein(w, token) <= d)
            })
        }
    }
}

/// Typos tolerated in a word: none under 3 characters, 1 up to 5, else 2.
fn edit_distance(word: &str) -> u8 {
    match word.chars().count() {
        0..=2 => 0,
        3..=5 => 1,
        _ => 2,
    }
}

/// Snippets of `text` with matching tokens in `<mark>`, HTML-escaped
/// otherwise: the whole text when it fits `window`, else windows around the
/// first matches.
fn snippets(text: &str, analyzer: &mut TextAnalyzer, matches: &impl Fn(&str) -> bool, window: usize) -> Vec<String> {
    let mut hits: Vec<(usize, usize)> = Vec::new();
    let mut stream = analyzer.token_stream(text);
    while let Some(t) = stream.next() {
        if matches(&t.text) {
            hits.push((t.offset_from, t.offset_to));
        }
    }
    if hits.is_empty() {
        return Vec::new();
    }
    if text.len() <= window {
        return vec![mark(text, 0, text.len(), &hits)];
    }
    let mut out = Vec::new();
    let mut covered_to = 0;
    for &(start, _) in &hits {
        if out.len() == SNIPPETS {
            break;
        }
        if start < covered_to {
            continue;
        }
        let from = floor_char(text, start.saturating_sub(window / 3));
        let from = text[from..start]
            .find(char::is_whitespace)
            .map_or(from, |i| from + i + 1)
            .min(start);
        let to = ceil_char(text, (from + window).min(text.len()));
        let to = text[..to]
            .rfind(char::is_whitespace)
            .filter(|&i| i > start)
            .unwrap_or(to);
        let mut s = mark(text, from, to, &hits);
        if from > 0 {
            s.insert(0, '…');
        }
        if to < text.len() {
            s.push('…');
        }
        out.push(s);
        covered_to = to;
    }
    out
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// `text[from..to]` escaped, with every hit inside wrapped in `<mark>`.
fn mark(text: &str, from: usize, to: usize, hits: &[(usize, usize)]) -> String {
    let mut out = String::new();
    let mut at = from;
    for &(s, e) in hits.iter().filter(|(s, e)| *s >= from && *e <= to) {
        if s < at {
            continue;
        }
        out.push_str(&vocab::text::escape_html(&text[at..s]));
        out.push_str("<mark>");
        out.push_str(&vocab::text::escape_html(&text[s..e]));
        out.push_str("</mark>");
        at = e;
    }
    out.push_str(&vocab::text::escape_html(&text[at..to]));
    vocab::text::one_line(&out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tantivy::tokenizer::TokenizerManager;

    fn analyzer() -> TextAnalyzer {
        TokenizerManager::default().get("en_stem").unwrap()
    }

    #[test]
    fn options_are_validated_with_every_problem() {
        let args = json!({ "query": "", "citationDepth": 4, "limit": 0, "fuzzy": "yes", "colour": 1 });
        let problems = Options::from_args(args.as_object().unwrap()).unwrap_err();
        assert_eq!(problems.len(), 5, "{problems:?}");
        let ok = Options::from_args(json!({ "query": "ml" }).as_object().unwrap()).unwrap();
        assert_eq!(
            (ok.fuzzy, ok.include_citations, ok.citation_depth, ok.limit),
            (true, false, 1, 10)
        );
    }

    #[test]
    fn quoted_phrases_and_words() {
        let q = QueryText::parse("\"neural networks\" training", &mut analyzer());
        assert_eq!(q.phrases, vec![vec!["neural".to_string(), "network".to_string()]]);
        assert_eq!(q.words, ["neural", "network", "train"]);
    }

    #[test]
    fn snippets_mark_matches_and_escape_the_rest() {
        let q = QueryText::parse("machine learning", &mut analyzer());
        let text = "<b>Machine</b> learning & friends: machines learn.";
        let s = snippets(text, &mut analyzer(), &q.matcher(false), 500);
        assert_eq!(
            s,
            [
                "&lt;b&gt;<mark>Machine</mark>&lt;/b&gt; <mark>learning</mark> &amp; friends: <mark>machines</mark> <mark>learn</mark>."
            ]
        );
        let fuzzy = QueryText::parse("machne", &mut analyzer());
        assert_eq!(
            snippets("A machine.", &mut analyzer(), &fuzzy.matcher(true), 500),
            ["A <mark>machine</mark>."]
        );
        assert!(snippets("A machine.", &mut analyzer(), &fuzzy.matcher(false), 500).is_empty());
    }

    #[test]
    fn long_texts_get_windows_around_matches() {
        let q = QueryText::parse("needle", &mut analyzer());
        let text = format!("{} needle {} needle end", "hay ".repeat(100), "straw ".repeat(100));
        let s = snippets(&text, &mut analyzer(), &q.matcher(false), 60);
        assert_eq!(s.len(), 2);
        assert!(
            s.iter()
                .all(|x| x.contains("<mark>needle</mark>") && x.starts_with('…')),
            "{s:?}"
        );
        assert!(s[0].chars().count() < 80);
    }

    #[test]
    fn edit_distances_grow_with_length() {
        assert_eq!(
            (edit_distance("ml"), edit_distance("rust"), edit_distance("learning")),
            (0, 1, 2)
        );
    }
}
