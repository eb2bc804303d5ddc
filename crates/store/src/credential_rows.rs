//! Rows of sealed per-project credentials, in SQL: the store's side of the
//! `credentials` crate's [`CredentialRows`], and the operator's lists and
//! removals. The store keeps bytes it cannot read; the rules of sealing
//! and opening are the crate's, the opening itself the gateway's `vault`.

use std::path::Path;

use credentials::{CredentialKind, CredentialRows, SealedCredential};
use serde::Serialize;

use super::sql::args;
use super::{Error, Store, now};

/// The kind in a `kind` column, or why the row cannot be read.
fn kind(word: &str) -> Result<CredentialKind, Error> {
    CredentialKind::from_column(word).ok_or_else(|| Error::Column(format!("unknown credential kind '{word}'")))
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

impl CredentialRows for Store {
    type Error = Error;

    fn key_home(&self) -> &Path {
        Store::key_home(self)
    }

    /// Sets a credential. A header or variable set anew gets a fresh
    /// `set_at`; OAuth tokens saved after a refresh keep theirs (`renew = false`).
    fn put_credential(
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
    fn credentials(&self, project_id: i64, server: &str) -> Result<Vec<SealedCredential>, Error> {
        self.with(|c| {
            c.all(
                "SELECT kind, name, key_id, sealed, set_at FROM credentials
                 WHERE project_id = ?1 AND server = ?2 ORDER BY kind, name",
                args![project_id, server],
                |r| {
                    Ok(SealedCredential {
                        kind: kind(r.text(0))?,
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
    fn credential(
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
}

impl Store {
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
                        kind: kind(r.text(2))?,
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
