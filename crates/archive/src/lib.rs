//! Local research and URL archives, a built-in downstream server named
//! `archives` with one tool, `searchLocalArchives`.
//!
//! `mcp-gateway archive index` walks the `[archives]` folders ([`indexer`]):
//! documents, links and citations go to SQLite (`SEARCH_DB_PATH`), full text
//! to a tantivy index beside it, incrementally. The server ([`ArchiveServer`])
//! reads both, and while it runs keeps them following the folders
//! ([`follow`]), so indexing also runs while the gateway serves.
//!
//! A crate of its own: it knows `config`, `vocab` and `watch`, and nothing
//! of the gateway, which serves it as any MCP server, over an in-memory pipe.

mod db;
mod follow;
mod indexer;
mod links;
mod parse;
mod search;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tantivy::schema::{Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions};

pub use config::archives::{ArchivesConfig, DB_ENV, Folder, SERVER_NAME, TOOL_NAME};
pub use indexer::{Progress, Report, index};
pub use search::{Archive, Options};

/// Why the archive could not be indexed or searched.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `mcp-gateway archive index` has not run yet.
    #[error("the archive has not been indexed yet ({0} is missing); run: mcp-gateway archive index")]
    NotIndexed(String),
    /// The SQLite file.
    #[error("archive database: {0}")]
    Db(#[from] rusqlite::Error),
    /// The full-text index.
    #[error("archive full-text index: {0}")]
    Index(#[from] tantivy::TantivyError),
    /// A folder or file.
    #[error("{path}: {message}")]
    Io {
        /// What could not be read or written.
        path: String,
        /// Why.
        message: String,
    },
    /// Another `archive index` holds the writer.
    #[error("another indexer is running on {0}; try again when it is done")]
    Busy(String),
}

/// Why a `searchLocalArchives` call failed; its message is the tool's error text.
#[derive(Debug, thiserror::Error)]
enum Failure {
    /// The arguments' problems, every one.
    #[error("Invalid arguments:\n- {}", .0.join("\n- "))]
    Arguments(Vec<String>),
    /// The search itself (the archive's [`Error`], or its task's end).
    #[error("Failed to search local archives: {0}")]
    Search(String),
}

/// Most bytes of a failed search's message in its log line.
const LOGGED_ERROR_BYTES: usize = 512;

impl Failure {
    /// Logs the failure with its message. Arguments' problems quote the
    /// caller's keys and values, so they are logged as any caller's string
    /// is ([`leaks::quote`]: short, one line, credentials redacted),
    /// with their count; a search's message names the configured paths and
    /// SQLite's or tantivy's cause, never the query, and is logged whole up
    /// to [`LOGGED_ERROR_BYTES`] (redacted all the same).
    fn log(&self) {
        let message = self.to_string();
        match self {
            Failure::Arguments(problems) => tracing::warn!(
                tool = TOOL_NAME,
                problems = problems.len(),
                error = %leaks::quote(&message),
                "archive search failed: invalid arguments"
            ),
            Failure::Search(_) => tracing::warn!(
                tool = TOOL_NAME,
                error = %vocab::text::one_line(&leaks::redacted_head(&message, LOGGED_ERROR_BYTES)),
                "archive search failed"
            ),
        }
    }
}

/// The full-text index's fields.
#[derive(Debug, Clone, Copy)]
struct Fields {
    id: Field,
    path: Field,
    title: Field,
    content: Field,
    source: Field,
    date: Field,
}

impl Fields {
    fn schema() -> Schema {
        let mut b = Schema::builder();
        let text = TextOptions::default()
            .set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer("en_stem")
                    .set_index_option(IndexRecordOption::WithFreqsAndPositions),
            )
            .set_stored();
        b.add_text_field("id", STRING | STORED);
        b.add_text_field("path", STRING | STORED);
        b.add_text_field("title", text.clone());
        b.add_text_field("content", text);
        b.add_text_field("source", STORED);
        b.add_text_field("date", STORED);
        b.build()
    }

    fn of(schema: &Schema) -> Result<Self, tantivy::TantivyError> {
        Ok(Self {
            id: schema.get_field("id")?,
            path: schema.get_field("path")?,
            title: schema.get_field("title")?,
            content: schema.get_field("content")?,
            source: schema.get_field("source")?,
            date: schema.get_field("date")?,
        })
    }
}

/// The in-process MCP server.
#[derive(Debug, Clone)]
pub struct ArchiveServer {
    archive: Arc<Archive>,
    /// Keeps the index following the folders, with `[archives] watch`.
    follower: Option<Arc<follow::Follower>>,
}

impl ArchiveServer {
    /// A server over the archive of `config`; with `watch`, its index
    /// follows the folders while the server lives (needs a tokio runtime).
    pub fn new(config: Arc<ArchivesConfig>) -> Self {
        let follower = config.watch.then(|| Arc::new(follow::Follower::start(config.clone())));
        Self {
            archive: Arc::new(Archive::new(config)),
            follower,
        }
    }

    /// How fresh the index is: when it was last committed, and whether it
    /// follows the folders and is catching up with a change now.
    fn freshness(&self) -> Value {
        let indexed_at = std::fs::metadata(self.archive.config().index_dir.join("meta.json"))
            .and_then(|m| m.modified())
            .ok()
            .map(|t| chrono::DateTime::<chrono::Utc>::from(t).to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
        json!({
            "indexedAt": indexed_at,
            "followsFolders": self.follower.is_some(),
            "reindexing": self.follower.as_ref().is_some_and(|f| f.reindexing()),
        })
    }

    fn tool() -> Tool {
        let schema = json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["query"],
            "properties": {
                "query": { "type": "string", "minLength": 1, "description": "The search query; put a phrase in \"double quotes\"" },
                "fuzzy": { "type": "boolean", "default": true, "description": "Whether to enable fuzzy matching (tolerates typos)" },
                "includeCitations": { "type": "boolean", "default": false, "description": "Whether to include citation information and a citation graph" },
                "citationDepth": { "type": "integer", "default": 1, "minimum": 1, "maximum": 3, "description": "How many levels of citations to include" },
                "limit": { "type": "integer", "default": 10, "minimum": 1, "maximum": 50, "description": "Maximum number of results to return" }
            }
        });
        let Value::Object(schema) = schema else {
            unreachable!("an object")
        };
        let mut tool = Tool::new(
            TOOL_NAME,
            "Searches the local research and URL content archives: saved notes and web pages, with highlighted snippets and the citations between documents.",
            Arc::new(schema),
        );
        tool.title = Some("Search Local Archives".into());
        tool.annotations = Some(ToolAnnotations::new().read_only(true).open_world(false));
        tool
    }

    async fn run(&self, args: JsonObject) -> Result<CallToolResult, Failure> {
        let options = Options::from_args(&args).map_err(Failure::Arguments)?;
        let archive = self.archive.clone();
        let query = options.clone();
        let answer = tokio::task::spawn_blocking(move || archive.search(&query))
            .await
            .map_err(|e| Failure::Search(e.to_string()))?
            .map_err(|e| Failure::Search(e.to_string()))?;
        tracing::info!(tool = TOOL_NAME, results = answer.results.len(), "archive search");
        let index = self.freshness();
        let mut summary = answer.summary(&options);
        summary.push_str(&format!(
            "\n\nIndex updated {}{}.",
            index["indexedAt"].as_str().unwrap_or("never"),
            match (index["followsFolders"] == true, index["reindexing"] == true) {
                (_, true) => "; changes are being indexed now",
                (true, false) => "; it follows the archive folders",
                (false, false) => "; run mcp-gateway archive index after changes",
            }
        ));
        let mut result = CallToolResult::success(vec![ContentBlock::text(summary)]);
        let mut structured = answer.to_json(&options);
        structured["index"] = index;
        result.structured_content = Some(structured);
        Ok(result)
    }
}

impl ServerHandler for ArchiveServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.server_info = Implementation::new("local-archives", env!("CARGO_PKG_VERSION"));
        info
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![Self::tool()]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != TOOL_NAME {
            return Err(ErrorData::invalid_params(
                format!("unknown tool '{}'", request.name),
                None,
            ));
        }
        let result = match self.run(request.arguments.unwrap_or_default()).await {
            Ok(r) => r,
            Err(failure) => {
                failure.log();
                CallToolResult::error(vec![ContentBlock::text(failure.to_string())])
            }
        };
        Ok(result.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tool_has_the_seed_schema() {
        let t = ArchiveServer::tool();
        let props = &t.input_schema["properties"];
        assert_eq!(props["citationDepth"]["maximum"], 3);
        assert_eq!(props["limit"]["maximum"], 50);
        assert_eq!(props["fuzzy"]["default"], true);
        assert_eq!(t.input_schema["required"], json!(["query"]));
    }
}
