//! `[store]`: where projects, tokens, grants and the audit log live. A file
//! path (or nothing) keeps them in SQLite beside the configuration; a
//! `postgres://` URL puts them in PostgreSQL, which several gateway
//! replicas can share. `MCP_GATEWAY_DB` overrides either.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Environment variable that overrides the store's location (a file, or a `postgres://` URL).
pub const DB_ENV: &str = "MCP_GATEWAY_DB";

/// What a PostgreSQL store's key file is named after, beside the configuration.
const POSTGRES_KEY_HOME: &str = "mcp-gateway-postgres";

/// `[store]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawStore {
    /// SQLite file, relative to this config (default `mcp-gateway.db` beside it).
    pub path: Option<String>,
    /// A PostgreSQL database, `postgres://user:password@host:port/db` (`${VAR}` expands),
    /// instead of the file: the store gateway replicas share.
    pub url: Option<String>,
    /// `strict` (the default): a call is answered only once its audit row is
    /// written, and refused when the audit log cannot take rows;
    /// `best_effort`: rows are written behind the answers.
    #[serde(default)]
    pub audit: AuditMode,
}

/// Whether an answer waits for its audit row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditMode {
    /// An answer leaves after its row is durable; a call its `started` row
    /// cannot be written for is refused before its server is called.
    #[default]
    Strict,
    /// Rows are written behind the answers; a store that cannot take them
    /// delays them (they wait in memory), and calls go on.
    BestEffort,
}

impl AuditMode {
    /// As written in `[store] audit`, and as `servers` and `/readyz` say it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Strict => "strict",
            Self::BestEffort => "best_effort",
        }
    }
}

/// Where the store is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreLocation {
    /// A SQLite file.
    File(PathBuf),
    /// A PostgreSQL database.
    Postgres {
        /// The connection URL (may hold a password: never log it whole).
        url: String,
        /// What the credentials key file is named after (`<key_home>.key`),
        /// when `MCP_GATEWAY_SECRET_KEY` does not give the key.
        key_home: PathBuf,
    },
}

impl StoreLocation {
    /// What the credentials key file is named after: the SQLite file, or
    /// `mcp-gateway-postgres` beside the configuration.
    pub fn key_home(&self) -> &Path {
        match self {
            Self::File(path) => path,
            Self::Postgres { key_home, .. } => key_home,
        }
    }
}

/// The store a setting names, relative to `base`: a `postgres://` or
/// `postgresql://` URL, `sqlite:PATH`, or a path. Any other URL scheme is
/// refused rather than taken for a folder; the value itself is not repeated,
/// as a database URL may hold a password.
pub(super) fn locate(value: &str, base: &Path) -> Result<StoreLocation, String> {
    if value.starts_with("postgres://") || value.starts_with("postgresql://") {
        return Ok(StoreLocation::Postgres {
            url: value.to_string(),
            key_home: base.join(POSTGRES_KEY_HOME),
        });
    }
    if let Some(path) = value
        .strip_prefix("sqlite://")
        .or_else(|| value.strip_prefix("sqlite:"))
    {
        return Ok(StoreLocation::File(base.join(path)));
    }
    match value.split_once("://") {
        Some((scheme, _))
            if !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c)) =>
        {
            Err(format!(
                "'{scheme}://…' is a {scheme} URL, but the store is a SQLite file or a PostgreSQL database: give a file path (e.g. data/mcp-gateway.db), sqlite:PATH or postgres://…"
            ))
        }
        _ => Ok(StoreLocation::File(base.join(value))),
    }
}

/// Where `[store]` (written in a file under `base`), or `MCP_GATEWAY_DB`
/// (`from_env`) over it, puts the store; `invalid` words a file error for a key.
pub(super) fn resolve(
    raw: RawStore,
    from_env: Option<String>,
    base: &Path,
    invalid: impl Fn(&str, String) -> super::Error,
) -> Result<StoreLocation, super::Error> {
    if let Some(value) = from_env.filter(|v| !v.is_empty()) {
        // A file named in the environment is relative to the working
        // directory; a shared store's key file stays beside the configuration.
        let located = locate(&value, Path::new("")).map_err(|message| super::Error::Env { var: DB_ENV, message })?;
        return Ok(match located {
            StoreLocation::Postgres { url, .. } => StoreLocation::Postgres {
                url,
                key_home: base.join(POSTGRES_KEY_HOME),
            },
            file => file,
        });
    }
    let (key, value) = match (raw.path, raw.url) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "store.url",
                "set either path (a SQLite file) or url (PostgreSQL), not both".into(),
            ));
        }
        (Some(path), None) => ("store.path", path),
        (None, Some(url)) => ("store.url", url),
        (None, None) => return Ok(StoreLocation::File(base.join("mcp-gateway.db"))),
    };
    let value = super::interpolate(&value).map_err(|m| invalid(key, m))?;
    locate(&value, base).map_err(|m| invalid(key, m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_sqlite_and_postgres_urls_are_told_apart() {
        let base = Path::new("/etc/gw");
        assert_eq!(
            locate("data/gw.db", base),
            Ok(StoreLocation::File("/etc/gw/data/gw.db".into()))
        );
        assert_eq!(
            locate("sqlite:data/gw.db", base),
            Ok(StoreLocation::File("/etc/gw/data/gw.db".into()))
        );
        assert_eq!(
            locate("sqlite:///var/lib/gw.db", base),
            Ok(StoreLocation::File("/var/lib/gw.db".into()))
        );
        let pg = locate("postgresql://gw:pw@db:5432/gw", base).unwrap();
        assert!(matches!(&pg, StoreLocation::Postgres { url, .. } if url == "postgresql://gw:pw@db:5432/gw"));
        assert_eq!(pg.key_home(), Path::new("/etc/gw/mcp-gateway-postgres"));
        let err = locate("mysql://root:hunter2@localhost/gw", base).unwrap_err();
        assert!(err.contains("mysql URL") && !err.contains("hunter2"), "{err}");
    }

    #[test]
    fn store_url_in_the_file_selects_postgres_and_path_with_url_is_refused() {
        if std::env::var_os(DB_ENV).is_some() {
            return; // the variable wins over the file, by design
        }
        let parse = |toml: &str| crate::Config::parse(toml, "g.toml", Path::new("/etc/gw"));
        let config = parse("[store]\nurl = \"postgres://gw@db/gw\"\n").unwrap();
        assert_eq!(
            config.store,
            StoreLocation::Postgres {
                url: "postgres://gw@db/gw".into(),
                key_home: "/etc/gw/mcp-gateway-postgres".into()
            }
        );
        let err = parse("[store]\npath = \"gw.db\"\nurl = \"postgres://gw@db/gw\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("store.url") && err.contains("not both"), "{err}");
    }

    #[test]
    fn the_environment_wins_and_a_shared_stores_key_stays_beside_the_config() {
        let base = Path::new("/etc/gw");
        let raw = || RawStore {
            path: Some("file.db".into()),
            url: None,
            audit: AuditMode::default(),
        };
        let invalid = |key: &str, m: String| crate::Error::Env {
            var: "test",
            message: format!("{key}: {m}"),
        };
        let pg = resolve(raw(), Some("postgres://gw@db/gw".into()), base, invalid).unwrap();
        assert_eq!(pg.key_home(), Path::new("/etc/gw/mcp-gateway-postgres"));
        let file = resolve(raw(), Some("other.db".into()), base, invalid).unwrap();
        assert_eq!(file, StoreLocation::File("other.db".into()));
        let written = resolve(raw(), Some(String::new()), base, invalid).unwrap();
        assert_eq!(written, StoreLocation::File("/etc/gw/file.db".into()));
    }
}
