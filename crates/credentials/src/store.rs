//! What the gateway asks of the store about credentials: the key's home,
//! a project's rows for one server, one row, and writing one. The store
//! implements [`CredentialRows`] with its SQL (the store crate's
//! `credentials.rs`); the operator's lists and removals stay there.

use std::path::Path;

use crate::{CredentialKind, SealedCredential};

/// The store, as credentials use it: each call runs inline.
pub trait CredentialRows: Send + Sync + 'static {
    /// Why the store refused.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Where the key that seals credentials is kept beside (`<key_home>.key`).
    fn key_home(&self) -> &Path;

    /// A project's credentials for one server (on the request path: one indexed read).
    fn credentials(&self, project_id: i64, server: &str) -> Result<Vec<SealedCredential>, Self::Error>;

    /// One credential, if set.
    fn credential(
        &self,
        project_id: i64,
        server: &str,
        kind: CredentialKind,
        name: &str,
    ) -> Result<Option<SealedCredential>, Self::Error>;

    /// Sets a credential. A header or variable set anew gets a fresh
    /// `set_at`; OAuth tokens saved after a refresh keep theirs (`renew = false`).
    #[allow(clippy::too_many_arguments)]
    fn put_credential(
        &self,
        project_id: i64,
        server: &str,
        kind: CredentialKind,
        name: &str,
        key_id: &str,
        sealed: &[u8],
        renew: bool,
    ) -> Result<(), Self::Error>;
}
