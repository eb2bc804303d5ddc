//! The access model: projects, how they search and see tools, and the grants
//! that decide which servers and tools each may use. Plain values: the store
//! keeps them, and the catalog, identity and the console read them without
//! reaching into the store.

use std::collections::HashMap;

use serde::Serialize;

/// Which search a project's `tool_discovery` uses (`projects.search`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Search {
    /// Local BM25.
    Bm25,
    /// BM25F blended with the local embedding model (BM25 alone without one).
    Hybrid,
    /// The cloud provider, falling back to the best local search.
    Cloud,
}

impl Search {
    /// The column value.
    pub fn as_str(self) -> &'static str {
        match self {
            Search::Bm25 => "bm25",
            Search::Hybrid => "hybrid",
            Search::Cloud => "cloud",
        }
    }

    /// How results and notices name it.
    pub fn label(self) -> &'static str {
        match self {
            Search::Bm25 => "BM25",
            Search::Hybrid => "hybrid search",
            Search::Cloud => "cloud search",
        }
    }

    /// What new projects, and the anonymous project, start with: the best
    /// local search this build has (hybrid answers with BM25 until the
    /// embedding model is there).
    pub fn for_new_projects() -> Self {
        if cfg!(feature = "semantic") {
            Search::Hybrid
        } else {
            Search::Bm25
        }
    }

    /// The strategy [`Search::as_str`] names.
    pub fn from_word(word: &str) -> Option<Self> {
        match word {
            "bm25" => Some(Search::Bm25),
            "hybrid" => Some(Search::Hybrid),
            "cloud" => Some(Search::Cloud),
            _ => None,
        }
    }
}

/// A project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Project {
    /// Row id.
    pub id: i64,
    /// Unique name.
    pub name: String,
    /// Search strategy; `None` turns the tool catalog off.
    pub search: Option<Search>,
    /// ISO 8601.
    pub created_at: String,
    /// How its clients see the tools.
    pub exposure: Exposure,
    /// Whether the tools that carry an MCP App are listed on the `meta` exposure.
    pub apps: Apps,
}

impl Project {
    /// Whether any tool is listed, and callable, by a name of its own
    /// (`server__tool`) beside or instead of the meta-tools.
    pub fn names_tools(&self) -> bool {
        self.exposure.lists_tools() || self.apps == Apps::Listed
    }
}

/// Whether a project on the `meta` exposure lists its Apps (`projects.apps`):
/// a host renders an App only for a tool it listed, so they are by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Apps {
    /// Each permitted tool that carries an App is listed beside the meta-tools.
    #[default]
    Listed,
    /// Only the meta-tools: Apps are found and run through them, and render nowhere.
    Unlisted,
}

impl Apps {
    /// The column value.
    pub fn as_str(self) -> &'static str {
        match self {
            Apps::Listed => "listed",
            Apps::Unlisted => "unlisted",
        }
    }

    /// The setting [`Apps::as_str`] names (`listed` for anything else).
    pub fn from_word(s: &str) -> Self {
        match s {
            "unlisted" => Apps::Unlisted,
            _ => Apps::Listed,
        }
    }
}

/// How a project's clients see the tools (`projects.exposure`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Exposure {
    /// `tools/list` is `tool_discovery` and `tool_execute`.
    #[default]
    Meta,
    /// `tools/list` is the project's permitted tools, named `server__tool`.
    Direct,
    /// The meta-tools first, then the permitted tools.
    Both,
}

impl Exposure {
    /// The column value.
    pub fn as_str(self) -> &'static str {
        match self {
            Exposure::Meta => "meta",
            Exposure::Direct => "direct",
            Exposure::Both => "both",
        }
    }

    /// The exposure [`Exposure::as_str`] names (`meta` for anything else).
    pub fn from_word(s: &str) -> Self {
        match s {
            "direct" => Exposure::Direct,
            "both" => Exposure::Both,
            _ => Exposure::Meta,
        }
    }

    /// Whether the meta-tools are listed.
    pub fn lists_meta_tools(self) -> bool {
        self != Exposure::Direct
    }

    /// Whether the permitted tools are listed (and callable by their own names).
    pub fn lists_tools(self) -> bool {
        self != Exposure::Meta
    }
}

/// One grant row: a whole server (`tool: None`) or one tool override.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Permission {
    /// The server.
    pub server: String,
    /// The tool, for an override.
    pub tool: Option<String>,
    /// Allow or deny.
    pub enabled: bool,
}

/// What a project may see: servers granted whole, and per-tool overrides.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants {
    servers: HashMap<String, ServerGrant>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct ServerGrant {
    whole: bool,
    tools: HashMap<String, bool>,
}

impl Grants {
    /// Builds grants from rows.
    pub fn from_permissions(rows: impl IntoIterator<Item = Permission>) -> Self {
        let mut servers: HashMap<String, ServerGrant> = HashMap::new();
        for p in rows {
            let g = servers.entry(p.server).or_default();
            match p.tool {
                None => g.whole = p.enabled,
                Some(t) => {
                    g.tools.insert(t, p.enabled);
                }
            }
        }
        Self { servers }
    }

    /// Every tool of every server in `servers` (the anonymous local project, tests).
    pub fn all_of<'a>(servers: impl IntoIterator<Item = &'a str>) -> Self {
        Self::from_permissions(servers.into_iter().map(|s| Permission {
            server: s.to_string(),
            tool: None,
            enabled: true,
        }))
    }

    /// Whether the project may see and run `server:tool`: a tool override
    /// decides if there is one, else the server's grant.
    pub fn allows(&self, server: &str, tool: &str) -> bool {
        self.servers
            .get(server)
            .is_some_and(|g| g.tools.get(tool).copied().unwrap_or(g.whole))
    }

    /// What the project may use of `server`, decided once per server so a
    /// search need not look names up for every candidate tool.
    pub fn server_access(&self, server: &str) -> Access {
        match self.servers.get(server) {
            None => Access::Nothing,
            Some(g) if !g.tools.is_empty() => Access::PerTool,
            Some(g) if g.whole => Access::All,
            Some(_) => Access::Nothing,
        }
    }

    /// Whether the project was granted `server` whole, which opens its
    /// resources, templates, prompts and skills too; a grant of some of its
    /// tools opens those tools (and the Apps they name) and nothing else.
    pub fn opens_server(&self, server: &str) -> bool {
        self.servers.get(server).is_some_and(|g| g.whole)
    }

    /// Whether the project may use anything of `server` (a tool at least).
    pub fn sees_server(&self, server: &str) -> bool {
        self.servers
            .get(server)
            .is_some_and(|g| g.whole || g.tools.values().any(|&allowed| allowed))
    }
}

/// A project's access to one server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Every tool.
    All,
    /// No tool.
    Nothing,
    /// Tool overrides decide; ask [`Grants::allows`].
    PerTool,
}
