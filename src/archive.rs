//! Local research and URL archives, a built-in downstream server named
//! `archives` with one tool, `searchLocalArchives`.
//!
//! `mcp-gateway archive index` walks the `[archives]` folders ([`indexer`]):
//! documents, links and citations go to SQLite (`SEARCH_DB_PATH`), full text
//! to a tantivy index beside it, incrementally. The server ([`ArchiveServer`])
//! reads both, and while it runs keeps them following the folders
//! ([`follow`]), so indexing also runs while the gateway serves.

mod db;
mod follow;
mod indexer;
mod links;
mod parse;
mod search;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::Deserialize;
use serde_json::{Value, json};
use tantivy::schema::{Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions};

pub use indexer::{Progress, Report, index};
pub use search::{Archive, Options};

/// The built-in server's name.
pub const SERVER_NAME: &str = "archives";
/// Its tool.
pub const TOOL_NAME: &str = "searchLocalArchives";
/// Overrides the SQLite file, as in the seed.
pub const DB_ENV: &str = "SEARCH_DB_PATH";

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

/// `[archives]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawArchives {
    /// Register the `archives` server (default true).
    pub enabled: Option<bool>,
    /// Folders of archived material, relative to the config file.
    #[serde(default)]
    pub folders: Vec<String>,
    /// SQLite file (default `data/search.db` beside the config; `SEARCH_DB_PATH` wins).
    pub db_path: Option<String>,
    /// Keep the index following the folders while serving (default true).
    pub watch: Option<bool>,
}

/// One archive folder.
#[derive(Debug, Clone, PartialEq)]
pub struct Folder {
    /// Its name: the first segment of every document path.
    pub name: String,
    /// Where it is.
    pub path: PathBuf,
}

/// `[archives]`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchivesConfig {
    /// Registered at all.
    pub enabled: bool,
    /// The folders.
    pub folders: Vec<Folder>,
    /// The SQLite file.
    pub db_path: PathBuf,
    /// The tantivy index folder, beside it.
    pub index_dir: PathBuf,
    /// Index at start and after changes while serving.
    pub watch: bool,
}

impl ArchivesConfig {
    /// Validates `[archives]`; paths are relative to `base`. An error names the key.
    pub fn from_raw(raw: RawArchives, base: &Path) -> Result<Self, (String, String)> {
        let mut folders: Vec<Folder> = Vec::new();
        for (i, f) in raw.folders.iter().enumerate() {
            let path = base.join(crate::config::interpolate(f).map_err(|m| (format!("folders[{i}]"), m))?);
            let name = path
                .components()
                .filter_map(|c| c.as_os_str().to_str())
                .rfind(|c| *c != "." && *c != "..")
                .unwrap_or("archive")
                .to_string();
            if folders.iter().any(|other| other.name == name) {
                return Err((
                    format!("folders[{i}]"),
                    format!(
                        "two folders are named '{name}'; document paths start with the folder's name, so names must differ"
                    ),
                ));
            }
            folders.push(Folder { name, path });
        }
        let db_path = match std::env::var_os(DB_ENV).filter(|v| !v.is_empty()) {
            Some(p) => PathBuf::from(p),
            None => match raw.db_path {
                Some(p) => base.join(crate::config::interpolate(&p).map_err(|m| ("db_path".to_string(), m))?),
                None => base.join("data").join("search.db"),
            },
        };
        let index_dir = db_path.with_extension("tantivy");
        Ok(Self {
            enabled: raw.enabled.unwrap_or(true),
            folders,
            db_path,
            index_dir,
            watch: raw.watch.unwrap_or(true),
        })
    }

    /// Why the server cannot run, if it cannot.
    pub fn unconfigured(&self) -> Option<String> {
        self.folders
            .is_empty()
            .then(|| "not configured: set [archives] folders = [\"…\"]".to_string())
    }

    /// The first folder that is not there (or is not a folder): its index in
    /// `folders`, and why, in words for the status line. Asked when the
    /// server starts, not only at load: a folder may appear later (a mount,
    /// a sync), and the server then starts on its next attempt.
    pub fn missing_folder(&self) -> Option<(usize, String)> {
        self.folders.iter().enumerate().find_map(|(i, f)| {
            let why = match std::fs::metadata(&f.path) {
                Ok(m) if m.is_dir() => return None,
                Ok(_) => "is not a folder".to_string(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => "does not exist".to_string(),
                Err(e) => format!("cannot be read ({e})"),
            };
            Some((
                i,
                format!(
                    "archive folder '{}' {why}; create it, or fix [archives] folders (relative to the config file)",
                    f.path.display()
                ),
            ))
        })
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

    async fn run(&self, args: JsonObject) -> Result<CallToolResult, String> {
        let options = Options::from_args(&args).map_err(|p| format!("Invalid arguments:\n- {}", p.join("\n- ")))?;
        let archive = self.archive.clone();
        let query = options.clone();
        let answer = tokio::task::spawn_blocking(move || archive.search(&query))
            .await
            .map_err(|e| format!("Failed to search local archives: {e}"))?
            .map_err(|e| format!("Failed to search local archives: {e}"))?;
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
            Err(message) => {
                tracing::warn!(tool = TOOL_NAME, "archive search failed");
                CallToolResult::error(vec![ContentBlock::text(message)])
            }
        };
        Ok(result.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_named_and_paths_resolved() {
        let c = ArchivesConfig::from_raw(
            RawArchives {
                folders: vec!["research-archive".into(), "saved/url-archive/".into()],
                ..Default::default()
            },
            Path::new("/etc/gw"),
        )
        .unwrap();
        let names: Vec<&str> = c.folders.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["research-archive", "url-archive"]);
        if std::env::var_os(DB_ENV).is_none() {
            assert_eq!(c.db_path, Path::new("/etc/gw/data/search.db"));
            assert_eq!(c.index_dir, Path::new("/etc/gw/data/search.tantivy"));
        }
        let e = ArchivesConfig::from_raw(
            RawArchives {
                folders: vec!["a/notes".into(), "b/notes".into()],
                ..Default::default()
            },
            Path::new("/"),
        )
        .unwrap_err();
        assert_eq!(e.0, "folders[1]");
        assert!(
            ArchivesConfig::from_raw(RawArchives::default(), Path::new("/"))
                .unwrap()
                .unconfigured()
                .is_some()
        );
    }

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
