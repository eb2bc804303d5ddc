//! `[archives]`: the local archive built-in's folders and index files.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The built-in server's name.
pub const SERVER_NAME: &str = "archives";
/// Its tool.
pub const TOOL_NAME: &str = "searchLocalArchives";
/// Overrides the SQLite file, as in the seed.
pub const DB_ENV: &str = "SEARCH_DB_PATH";

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
            let path = base.join(super::interpolate(f).map_err(|m| (format!("folders[{i}]"), m))?);
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
                Some(p) => base.join(super::interpolate(&p).map_err(|m| ("db_path".to_string(), m))?),
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
}
