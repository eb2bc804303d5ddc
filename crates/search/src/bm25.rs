//! BM25F tool search over a tantivy index built once per catalog snapshot.
//!
//! Every tool is one document with a field per kind of evidence (its name as
//! words, its whole name, title, description, parameters, server), each with
//! its own weight. A query is restricted to what the caller may see with a
//! filter on the document's ordinal, so one index serves every caller.

use std::sync::Arc;

use super::Request;

use tantivy::DocSet;
use tantivy::collector::{FilterCollector, TopDocs};
use tantivy::query::{BooleanQuery, BoostQuery, DisjunctionMaxQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::{Language, LowerCaser, RawTokenizer, SimpleTokenizer, Stemmer, StopWordFilter, TextAnalyzer};
use tantivy::{Index as TantivyIndex, IndexReader, TantivyDocument, Term};

/// Name of the analyzer for prose and split identifiers.
const WORDS: &str = "gateway_words";
/// Name of the analyzer for whole tool names.
const WHOLE: &str = "gateway_whole";
/// Saturation constant turning an unbounded BM25 score into 0..1 relevance:
/// a score of `RELEVANCE_HALF` maps to 0.5.
const RELEVANCE_HALF: f32 = 30.0;

/// Words people put around a need ("can you please get me…") that say
/// nothing about which tool; dropped from queries only, never from tools.
const QUERY_FILLER: &[&str] = &[
    "please",
    "can",
    "could",
    "would",
    "you",
    "me",
    "my",
    "i",
    "i'm",
    "we",
    "our",
    "us",
    "want",
    "need",
    "like",
    "some",
    "just",
    "thing",
    "something",
    "help",
    "let",
    "lets",
    "let's",
    "do",
    "does",
    "what",
    "what's",
    "which",
    "how",
    "whats",
    "hey",
    "ok",
    "now",
    "also",
];

/// Words that name the same action or thing in tool catalogs. A query term
/// in a group also asks for the others, at `Weights::synonyms` of its weight:
/// people say "ticket" where a tool says "issue", "grab" where it says "get".
const SYNONYMS: &[&[&str]] = &[
    &["delete", "remove", "erase", "destroy", "trash"],
    &["create", "make", "new", "add"],
    &["list", "show", "display", "enumerate"],
    &["search", "find", "lookup", "locate", "query"],
    &["get", "fetch", "retrieve", "grab", "read", "download"],
    &["send", "post", "message", "notify"],
    &["update", "change", "edit", "modify"],
    &["issue", "ticket", "bug"],
    &["repository", "repo"],
    &["pull", "pr", "merge"],
    &["email", "mail", "inbox"],
    &["event", "meeting", "calendar", "appointment"],
    &["page", "website", "site", "url", "web", "webpage"],
    &["document", "doc", "docs"],
    &["spreadsheet", "sheet", "workbook"],
    &["image", "picture", "photo", "screenshot"],
    &["error", "exception", "crash", "failure"],
    &["user", "member", "person", "people", "contact"],
    &["deploy", "deployment", "release", "ship", "publish"],
    &["price", "pricing", "cost", "billing", "invoice"],
    &["database", "db", "sql"],
    &["chart", "graph", "plot", "visualize", "diagram"],
    &["directory", "folder"],
    &["run", "execute", "launch"],
    &["schedule", "book"],
];

/// How much each kind of evidence counts. The defaults are tuned on the
/// tune half of `benches/data` (see `mcp-gateway eval --weights`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    /// Words of the tool name.
    pub name: f32,
    /// The whole tool name, when the query is one identifier.
    pub whole_name: f32,
    /// Words of the title.
    pub title: f32,
    /// Words of the description.
    pub description: f32,
    /// Parameter names and descriptions.
    pub params: f32,
    /// Tags from the rules.
    pub tags: f32,
    /// Server name and description.
    pub server: f32,
    /// `context` terms, relative to query terms.
    pub context: f32,
    /// How much the fields other than a term's best one add (0: max only, 1: sum).
    pub tie_breaker: f32,
    /// Weight of a synonym relative to the word the query used (0: off).
    pub synonyms: f32,
}

impl Default for Weights {
    fn default() -> Self {
        // Coordinate descent on the tune half, objective
        // 0.5 R@5 + 0.3 MRR@10 (single) + 0.2 R@5 (multi, per step).
        Self {
            name: 1.5,
            whole_name: 5.0,
            title: 0.5,
            description: 1.3,
            params: 1.0,
            tags: 1.5,
            server: 1.5,
            context: 0.15,
            tie_breaker: 0.2,
            synonyms: 0.3,
        }
    }
}

impl std::str::FromStr for Weights {
    type Err = String;

    /// `name=3,description=1.2,…`: unnamed weights keep their defaults.
    fn from_str(s: &str) -> Result<Self, String> {
        let mut w = Weights::default();
        for pair in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = pair
                .split_once('=')
                .ok_or_else(|| format!("'{pair}' is not key=value"))?;
            let v: f32 = v.trim().parse().map_err(|_| format!("'{v}' is not a number"))?;
            let slot = match k.trim() {
                "name" => &mut w.name,
                "whole_name" => &mut w.whole_name,
                "title" => &mut w.title,
                "description" => &mut w.description,
                "params" => &mut w.params,
                "tags" => &mut w.tags,
                "server" => &mut w.server,
                "context" => &mut w.context,
                "tie_breaker" => &mut w.tie_breaker,
                "synonyms" => &mut w.synonyms,
                other => return Err(format!("unknown weight '{other}'")),
            };
            *slot = v;
        }
        Ok(w)
    }
}

/// Why the search index could not be built.
#[derive(Debug, thiserror::Error)]
#[error("search index: {0}")]
pub struct Error(#[from] tantivy::TantivyError);

/// The text of one tool, as the index sees it.
#[derive(Debug, Clone, Copy, Default)]
pub struct ToolText<'a> {
    /// Server name.
    pub server: &'a str,
    /// Server description from the config.
    pub server_description: Option<&'a str>,
    /// Tool name.
    pub name: &'a str,
    /// Human title.
    pub title: Option<&'a str>,
    /// Description.
    pub description: Option<&'a str>,
    /// Parameter names and descriptions, flattened.
    pub params: &'a str,
    /// Tags from the rules.
    pub tags: &'a [String],
}

/// One ranked tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// Position of the tool in the catalog snapshot.
    pub ordinal: u32,
    /// Raw BM25 score.
    pub score: f32,
    /// `score` mapped to 0..1 (see [`relevance`]).
    pub relevance: f32,
    /// Which query terms matched which fields, e.g. `file: name, description; read: name`.
    pub explanation: Option<String>,
    /// Where the document is, for explaining it later.
    address: tantivy::DocAddress,
}

/// Which tools a search may return, by ordinal.
pub type Visible = Arc<dyn Fn(u32) -> bool + Send + Sync>;

#[derive(Debug, Clone, Copy)]
struct Fields {
    ordinal: Field,
    name_words: Field,
    name_whole: Field,
    title: Field,
    description: Field,
    params: Field,
    tags: Field,
    server: Field,
}

impl Fields {
    /// Each word field with its weight.
    fn weighted(&self, w: &Weights) -> [(Field, f32); 6] {
        [
            (self.name_words, w.name),
            (self.title, w.title),
            (self.description, w.description),
            (self.params, w.params),
            (self.tags, w.tags),
            (self.server, w.server),
        ]
    }
}

/// An immutable BM25 index over one catalog snapshot.
pub struct Index {
    reader: IndexReader,
    fields: Fields,
    words: TextAnalyzer,
    weights: Weights,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("docs", &self.reader.searcher().num_docs())
            .finish()
    }
}

fn words_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(LowerCaser)
        .filter(StopWordFilter::new(Language::English).expect("english stop words are built in"))
        .filter(Stemmer::new(Language::English))
        .build()
}

impl Index {
    /// Builds the index with the default weights; the n-th tool gets ordinal n.
    pub fn build<'a>(tools: impl IntoIterator<Item = ToolText<'a>>) -> Result<Self, Error> {
        Self::build_with(tools, Weights::default())
    }

    /// Builds the index with `weights`.
    pub fn build_with<'a>(tools: impl IntoIterator<Item = ToolText<'a>>, weights: Weights) -> Result<Self, Error> {
        let mut schema = Schema::builder();
        let text = |analyzer: &str| {
            TextOptions::default().set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer(analyzer)
                    .set_index_option(IndexRecordOption::WithFreqs),
            )
        };
        let fields = Fields {
            ordinal: schema.add_u64_field("ordinal", NumericOptions::default().set_fast()),
            name_words: schema.add_text_field("name_words", text(WORDS)),
            name_whole: schema.add_text_field("name_whole", text(WHOLE)),
            title: schema.add_text_field("title", text(WORDS)),
            description: schema.add_text_field("description", text(WORDS)),
            params: schema.add_text_field("params", text(WORDS)),
            tags: schema.add_text_field("tags", text(WORDS)),
            server: schema.add_text_field("server", text(WORDS)),
        };
        let index = TantivyIndex::create_in_ram(schema.build());
        index.tokenizers().register(WORDS, words_analyzer());
        index.tokenizers().register(
            WHOLE,
            TextAnalyzer::builder(RawTokenizer::default())
                .filter(LowerCaser)
                .build(),
        );

        // One thread and the smallest arena tantivy allows: catalogs are small.
        let mut writer = index.writer_with_num_threads::<TantivyDocument>(1, 15_000_000)?;
        for (ordinal, tool) in tools.into_iter().enumerate() {
            let mut doc = TantivyDocument::default();
            doc.add_u64(fields.ordinal, ordinal as u64);
            doc.add_text(fields.name_words, split_identifiers(tool.name));
            doc.add_text(fields.name_whole, tool.name);
            if let Some(t) = tool.title {
                doc.add_text(fields.title, split_identifiers(t));
            }
            if let Some(d) = tool.description {
                doc.add_text(fields.description, d);
            }
            doc.add_text(fields.params, split_identifiers(tool.params));
            doc.add_text(fields.tags, split_identifiers(&tool.tags.join(" ")));
            let server = match tool.server_description {
                Some(d) => format!("{} {d}", split_identifiers(tool.server)),
                None => split_identifiers(tool.server),
            };
            doc.add_text(fields.server, server);
            writer.add_document(doc)?;
        }
        writer.commit()?;
        let reader = index.reader()?;
        Ok(Self {
            reader,
            fields,
            words: words_analyzer(),
            weights,
        })
    }

    /// Ranks the visible tools for `q`, best first, each explained.
    pub fn search(&self, q: &Request, visible: Visible) -> Vec<Hit> {
        self.top(q, visible, true)
    }

    /// Like [`Index::search`] without explanations, for callers that keep
    /// only some hits and explain those ([`Index::explain_hits`]).
    pub fn rank(&self, q: &Request, visible: Visible) -> Vec<Hit> {
        self.top(q, visible, false)
    }

    /// Fills in the explanations of `hits`, ranked earlier for `q`.
    pub fn explain_hits<'a>(&self, q: &Request, hits: impl IntoIterator<Item = &'a mut Hit>) {
        let searcher = self.reader.searcher();
        let terms = self.query_terms(q);
        for hit in hits {
            hit.explanation = self.explain(&searcher, &terms, hit.address);
        }
    }

    fn top(&self, q: &Request, visible: Visible, explain: bool) -> Vec<Hit> {
        let mut analyzer = self.words.clone();
        let phrasings: Vec<(&str, Vec<String>)> = q
            .queries
            .iter()
            .map(|t| (t.as_str(), terms_of(&mut analyzer, t)))
            .collect();
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (text, terms) in &phrasings {
            if let Some(query) = self.text_query(text, terms, 1.0) {
                clauses.push((Occur::Should, query));
            }
        }
        if clauses.is_empty() {
            return Vec::new();
        }
        if let Some(context) = q.context.as_deref() {
            let terms = terms_of(&mut analyzer, context);
            if let Some(query) = self.text_query(context, &terms, self.weights.context) {
                clauses.push((Occur::Should, query));
            }
        }
        let query = BooleanQuery::new(clauses);
        let searcher = self.reader.searcher();
        let collector = FilterCollector::new(
            "ordinal".to_string(),
            move |ordinal: u64| visible(ordinal as u32),
            TopDocs::with_limit(q.limit.max(1)).order_by_score(),
        );
        let Ok(top) = searcher.search(&query, &collector) else {
            return Vec::new();
        };
        let terms = union(phrasings.into_iter().map(|(_, t)| t));
        top.into_iter()
            .filter_map(|(score, address)| {
                // The ordinal is a fast field: no stored document is decoded.
                let column = searcher
                    .segment_reader(address.segment_ord)
                    .fast_fields()
                    .u64("ordinal")
                    .ok()?;
                let ordinal = column.first(address.doc_id)?;
                let explanation = explain.then(|| self.explain(&searcher, &terms, address)).flatten();
                Some(Hit {
                    ordinal: ordinal as u32,
                    score,
                    relevance: relevance(score),
                    explanation,
                    address,
                })
            })
            .collect()
    }

    /// The analyzed terms of every phrasing of `request`, deduplicated.
    pub fn query_terms(&self, request: &Request) -> Vec<String> {
        let mut analyzer = self.words.clone();
        union(request.queries.iter().map(|q| terms_of(&mut analyzer, q)))
    }

    /// Which of `terms` occur in which fields of the document at `address`,
    /// read from the postings (no stored text is analyzed again).
    fn explain(&self, searcher: &tantivy::Searcher, terms: &[String], address: tantivy::DocAddress) -> Option<String> {
        let segment = searcher.segment_reader(address.segment_ord);
        let named = [
            ("name", self.fields.name_words),
            ("title", self.fields.title),
            ("description", self.fields.description),
            ("parameters", self.fields.params),
            ("tags", self.fields.tags),
            ("server", self.fields.server),
        ];
        let mut parts = Vec::new();
        for term in terms {
            let fields: Vec<&str> = named
                .iter()
                .filter(|(_, field)| {
                    let Ok(index) = segment.inverted_index(*field) else {
                        return false;
                    };
                    let t = Term::from_field_text(*field, term);
                    match index.read_postings(&t, IndexRecordOption::Basic) {
                        // A fresh cursor sits on its first document; seek only moves forward.
                        Ok(Some(mut postings)) => {
                            postings.doc() <= address.doc_id && postings.seek(address.doc_id) == address.doc_id
                        }
                        _ => false,
                    }
                })
                .map(|(name, _)| *name)
                .collect();
            if !fields.is_empty() {
                parts.push(format!("{term}: {}", fields.join(", ")));
            }
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// One phrasing: per term, the best of its weighted fields plus
    /// `tie_breaker` of the others (a BM25F-like blend), summed over terms.
    fn text_query(&self, text: &str, terms: &[String], weight: f32) -> Option<Box<dyn Query>> {
        let mut weighted: Vec<(String, f32)> = terms.iter().map(|t| (t.clone(), 1.0)).collect();
        if self.weights.synonyms > 0.0 {
            for term in terms {
                for other in synonyms_of(term) {
                    if !weighted.iter().any(|(t, _)| t == other) {
                        weighted.push((other.clone(), self.weights.synonyms));
                    }
                }
            }
        }
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (term, term_weight) in &weighted {
            let weight = weight * term_weight;
            let per_field: Vec<Box<dyn Query>> = self
                .fields
                .weighted(&self.weights)
                .into_iter()
                .filter(|(_, w)| *w > 0.0)
                .map(|(field, w)| {
                    let t = Term::from_field_text(field, term);
                    Box::new(BoostQuery::new(
                        Box::new(TermQuery::new(t, IndexRecordOption::WithFreqs)),
                        w * weight,
                    )) as Box<dyn Query>
                })
                .collect();
            clauses.push((
                Occur::Should,
                Box::new(DisjunctionMaxQuery::with_tie_breaker(
                    per_field,
                    self.weights.tie_breaker,
                )),
            ));
        }
        let whole = text.trim().to_lowercase();
        if !whole.is_empty() && !whole.contains(char::is_whitespace) {
            let t = Term::from_field_text(self.fields.name_whole, &whole);
            clauses.push((
                Occur::Should,
                Box::new(BoostQuery::new(
                    Box::new(TermQuery::new(t, IndexRecordOption::WithFreqs)),
                    self.weights.whole_name * weight,
                )),
            ));
        }
        (!clauses.is_empty()).then(|| Box::new(BooleanQuery::new(clauses)) as Box<dyn Query>)
    }
}

/// The analyzed synonyms of an analyzed term (the table is analyzed once).
fn synonyms_of(term: &str) -> &'static [String] {
    static TABLE: std::sync::OnceLock<std::collections::HashMap<String, Vec<String>>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut analyzer = words_analyzer();
        let mut table: std::collections::HashMap<String, Vec<String>> = std::collections::HashMap::new();
        for group in SYNONYMS {
            let analyzed = analyze(&mut analyzer, &group.join(" "));
            for t in &analyzed {
                let others = table.entry(t.clone()).or_default();
                others.extend(
                    analyzed
                        .iter()
                        .filter(|o| *o != t && !others.contains(o))
                        .cloned()
                        .collect::<Vec<_>>(),
                );
            }
        }
        table
    });
    table.get(term).map_or(&[], Vec::as_slice)
}

/// Terms of several phrasings, each once, in order of first use.
fn union(lists: impl IntoIterator<Item = Vec<String>>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in lists.into_iter().flatten() {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// A query's terms: identifiers split, filler words dropped, then analyzed.
fn terms_of(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let kept: Vec<&str> = text
        .split_whitespace()
        .filter(|w| {
            !QUERY_FILLER.contains(
                &w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
                    .to_lowercase()
                    .as_str(),
            )
        })
        .collect();
    analyze(analyzer, &split_identifiers(&kept.join(" ")))
}

fn analyze(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stream = analyzer.token_stream(text);
    while stream.advance() {
        let t = &stream.token().text;
        if !out.contains(t) {
            out.push(t.clone());
        }
    }
    out
}

/// Maps a raw BM25 score to 0..1. The map is fixed (not relative to the best
/// hit), so a client can keep one cut-off across queries.
pub fn relevance(score: f32) -> f32 {
    if score <= 0.0 {
        0.0
    } else {
        score / (score + RELEVANCE_HALF)
    }
}

/// Splits identifiers into words: `readFile`, `read_file`, `read-file` and
/// `read.file` all give `read file`; `HTMLParser` gives `HTML Parser`.
/// Letters and digits stay together (`s3`, `ec2`, `oauth2`), and short words
/// are never dropped: `ls`, `rm` and `db` mean something in tool names.
pub(crate) fn split_identifiers(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !out.ends_with(' ') && !out.is_empty() {
                out.push(' ');
            }
            continue;
        }
        if i > 0 && c.is_uppercase() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let boundary = prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower);
            if boundary && !out.ends_with(' ') && !out.is_empty() {
                out.push(' ');
            }
        }
        out.push(c);
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_split_into_words() {
        assert_eq!(split_identifiers("readFile"), "read File");
        assert_eq!(split_identifiers("read_file"), "read file");
        assert_eq!(split_identifiers("git-log.show"), "git log show");
        assert_eq!(split_identifiers("HTMLParser"), "HTML Parser");
        assert_eq!(split_identifiers("listS3Buckets"), "list S3 Buckets");
        assert_eq!(split_identifiers("get_ec2_instances"), "get ec2 instances");
        assert_eq!(split_identifiers("  spaced  out "), "spaced out");
    }

    #[test]
    fn short_meaningful_tokens_survive_analysis() {
        let mut a = words_analyzer();
        assert_eq!(
            analyze(&mut a, "ls rm ps db id s3"),
            ["ls", "rm", "ps", "db", "id", "s3"]
        );
        assert_eq!(analyze(&mut a, "the files are listed"), ["file", "list"]);
    }

    fn tools() -> Vec<ToolText<'static>> {
        let t = |server, name, description: &'static str, params: &'static str| ToolText {
            server,
            name,
            description: Some(description),
            params,
            ..ToolText::default()
        };
        vec![
            t(
                "fs",
                "read_file",
                "Read the complete contents of a file from disk",
                "path",
            ),
            t(
                "fs",
                "write_file",
                "Create a new file or overwrite an existing one",
                "path content",
            ),
            t("fs", "list_directory", "List the entries of a directory", "path"),
            t(
                "weather",
                "get_forecast",
                "Get the weather forecast for a city",
                "city days",
            ),
            t("db", "runQuery", "Execute a SQL query against the database", "sql"),
        ]
    }

    fn search(index: &Index, q: &[&str]) -> Vec<u32> {
        let query = Request {
            queries: q.iter().map(|s| s.to_string()).collect(),
            context: None,
            limit: 5,
            prior: None,
        };
        index
            .search(&query, Arc::new(|_| true))
            .iter()
            .map(|h| h.ordinal)
            .collect()
    }

    #[test]
    fn plain_language_finds_the_right_tool() {
        let index = Index::build(tools()).unwrap();
        assert_eq!(search(&index, &["show me what is inside a file"])[0], 0);
        assert_eq!(search(&index, &["will it rain in Paris tomorrow? weather"])[0], 3);
        assert_eq!(search(&index, &["run a SQL query"])[0], 4);
        assert_eq!(search(&index, &["runQuery"])[0], 4, "the whole name matches");
        assert_eq!(search(&index, &["list the files in a folder directory"])[0], 2);
        assert!(search(&index, &["zzzz qqqq"]).is_empty());
    }

    #[test]
    fn several_phrasings_reward_tools_matching_more_of_them() {
        let index = Index::build(tools()).unwrap();
        let hits = search(&index, &["save text to disk", "write a file"]);
        assert_eq!(hits[0], 1);
    }

    #[test]
    fn visibility_filter_hides_tools() {
        let index = Index::build(tools()).unwrap();
        let query = Request {
            queries: vec!["file".into()],
            context: None,
            limit: 10,
            prior: None,
        };
        let hits = index.search(&query, Arc::new(|o| o != 0));
        assert!(!hits.is_empty());
        assert!(hits.iter().all(|h| h.ordinal != 0));
    }

    #[test]
    fn explanations_name_terms_and_fields() {
        let index = Index::build(tools()).unwrap();
        let request = Request {
            queries: vec!["read files from the disk".into()],
            context: None,
            limit: 5,
            prior: None,
        };
        assert_eq!(index.query_terms(&request), ["read", "file", "from", "disk"]);
        let hits = index.search(&request, Arc::new(|_| true));
        assert_eq!(hits[0].ordinal, 0);
        let why = hits[0].explanation.as_deref().unwrap();
        assert_eq!(
            why,
            "read: name, description; file: name, description; from: description; disk: description"
        );
    }

    #[test]
    fn synonyms_reach_the_words_tools_use() {
        assert!(
            synonyms_of("ticket").contains(&"issu".to_string()),
            "{:?}",
            synonyms_of("ticket")
        );
        assert!(synonyms_of("zebra").is_empty());
    }

    #[test]
    fn relevance_is_bounded_and_monotone() {
        assert_eq!(relevance(0.0), 0.0);
        assert!(relevance(1.0) < relevance(10.0));
        assert!(relevance(1e9) <= 1.0);
        assert!((relevance(RELEVANCE_HALF) - 0.5).abs() < 1e-6);
    }
}
