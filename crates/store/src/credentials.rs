//! Rows of sealed per-project credentials. The store keeps bytes it cannot
//! read; sealing and opening are the gateway's `credentials` module's business.

use super::sql::args;
use serde::Serialize;

use super::{Error, Store, now};

/// What a credential row holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CredentialKind {
    /// An HTTP header sent to the server.
    Header,
    /// An environment variable of the server's child process.
    Env,
    /// An OAuth sign-in: the tokens `mcp-gateway login` obtained.
    #[serde(rename = "oauth")]
    OAuth,
}

impl CredentialKind {
    /// The word stored in the `kind` column.
    pub fn as_str(self) -> &'static str {
        match self {
            CredentialKind::Header => "header",
            CredentialKind::Env => "env",
            CredentialKind::OAuth => "oauth",
        }
    }

    fn parse(word: &str) -> Result<Self, Error> {
        match word {
            "header" => Ok(CredentialKind::Header),
            "env" => Ok(CredentialKind::Env),
            "oauth" => Ok(CredentialKind::OAuth),
            other => Err(Error::Column(format!("unknown credential kind '{other}'"))),
        }
    }
}

/// One credential as stored: sealed.
#[derive(Clone)]
pub struct SealedCredential {
    /// Header or env; OAuth.
    pub kind: CredentialKind,
    /// The header or variable name; empty for OAuth.
    pub name: String,
    /// Id of the key that sealed it.
    pub key_id: String,
    /// Nonce, ciphertext and tag.
    pub sealed: Vec<u8>,
    /// When the value was set (a token refresh keeps it).
    pub set_at: String,
}

impl std::fmt::Debug for SealedCredential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SealedCredential({} {})", self.kind.as_str(), self.name)
    }
}

/// A credential as `secret list` shows it: names and times, never a value.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CredentialInfo {
    /// The project's name.
    pub project: String,
    /// The server.
    pub server: String,
    /// What it is.
    pub kind: CredentialKind,
    /// Header or variable name; empty for OAuth.
    pub name: String,
    /// When it was set.
    pub set_at: String,
    /// When it last changed (a refreshed token, for OAuth).
    pub updated_at: String,
}

impl Store {
    /// Sets a credential. A header or variable set anew gets a fresh
    /// `set_at`; OAuth tokens saved after a refresh keep theirs (`renew = false`).
    #[allow(clippy::too_many_arguments)]
    pub fn put_credential(
        &self,
        project_id: i64,
        server: &str,
        kind: CredentialKind,
        name: &str,
        key_id: &str,
        sealed: &[u8],
        renew: bool,
    ) -> Result<(), Error> {
        let at = now();
        self.with(|c| {
            c.execute(
                "INSERT INTO credentials (project_id, server, kind, name, key_id, sealed, set_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)
                 ON CONFLICT (project_id, server, kind, name) DO UPDATE SET
                   key_id = excluded.key_id, sealed = excluded.sealed, updated_at = excluded.updated_at,
                   set_at = CASE WHEN CAST(?8 AS BIGINT) <> 0 THEN excluded.set_at ELSE credentials.set_at END",
                args![project_id, server, kind.as_str(), name, key_id, sealed, at, renew],
            )
        })?;
        Ok(())
    }

    /// A project's credentials for one server (on the request path: one indexed read).
    pub fn credentials(&self, project_id: i64, server: &str) -> Result<Vec<SealedCredential>, Error> {
        self.with(|c| {
            c.all(
                "SELECT kind, name, key_id, sealed, set_at FROM credentials
                 WHERE project_id = ?1 AND server = ?2 ORDER BY kind, name",
                args![project_id, server],
                |r| {
                    Ok(SealedCredential {
                        kind: CredentialKind::parse(r.text(0))?,
                        name: r.get(1)?,
                        key_id: r.get(2)?,
                        sealed: r.get(3)?,
                        set_at: r.get(4)?,
                    })
                },
            )
        })
    }

    /// One credential, if set.
    pub fn credential(
        &self,
        project_id: i64,
        server: &str,
        kind: CredentialKind,
        name: &str,
    ) -> Result<Option<SealedCredential>, Error> {
        Ok(self
            .credentials(project_id, server)?
            .into_iter()
            .find(|c| c.kind == kind && c.name == name))
    }

    /// Names of every credential, of one project or all, by project, server, kind, name.
    pub fn credential_list(&self, project: Option<&str>) -> Result<Vec<CredentialInfo>, Error> {
        let project_id = project.map(|p| self.require_project(p)).transpose()?.map(|p| p.id);
        self.with(|c| {
            c.all(
                "SELECT p.name, c.server, c.kind, c.name, c.set_at, c.updated_at
                 FROM credentials c JOIN projects p ON p.id = c.project_id
                 WHERE CAST(?1 AS BIGINT) IS NULL OR c.project_id = ?1
                 ORDER BY p.name, c.server, c.kind, c.name",
                args![project_id],
                |r| {
                    Ok(CredentialInfo {
                        project: r.get(0)?,
                        server: r.get(1)?,
                        kind: CredentialKind::parse(r.text(2))?,
                        name: r.get(3)?,
                        set_at: r.get(4)?,
                        updated_at: r.get(5)?,
                    })
                },
            )
        })
    }

    /// Removes a credential (`name = None`: every one of that kind); how many went.
    pub fn remove_credential(
        &self,
        project_id: i64,
        server: &str,
        kind: CredentialKind,
        name: Option<&str>,
    ) -> Result<usize, Error> {
        self.with(|c| {
            c.execute(
                "DELETE FROM credentials WHERE project_id = ?1 AND server = ?2 AND kind = ?3
                 AND (CAST(?4 AS TEXT) IS NULL OR name = ?4)",
                args![project_id, server, kind.as_str(), name],
            )
        })
    }

    /// Projects holding a credential for `server`, oldest first.
    pub fn projects_with_credentials(&self, server: &str) -> Result<Vec<crate::access::Project>, Error> {
        self.with(|c| {
            c.all(
                "SELECT id, name, search, created_at, exposure, apps FROM projects
                 WHERE id IN (SELECT project_id FROM credentials WHERE server = ?1) ORDER BY id",
                args![server],
                super::project_row,
            )
        })
    }
}
