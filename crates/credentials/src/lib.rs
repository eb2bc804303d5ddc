//! Per-project credentials for downstream servers, in one place: what a
//! credential row holds, the rules that bind a sealed value to its row and
//! tell a changed credential from a refreshed one, and what the gateway
//! asks of the store ([`CredentialRows`], which the store implements). See
//! the [`README`](../README.md).
//!
//! The key that seals them is the store's (`store::secrets`); the gateway's
//! `vault` opens them on each call, and signs in with OAuth.

use serde::Serialize;
use sha2::Digest;

mod store;

pub use store::CredentialRows;

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

    /// From the word stored in the `kind` column; `None` for another word.
    pub fn from_column(word: &str) -> Option<Self> {
        match word {
            "header" => Some(CredentialKind::Header),
            "env" => Some(CredentialKind::Env),
            "oauth" => Some(CredentialKind::OAuth),
            _ => None,
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

/// The associated data a value is sealed under: the row it belongs to, so
/// a sealed value copied onto another row does not open.
pub fn row_aad(project_id: i64, server: &str, kind: CredentialKind, name: &str) -> String {
    format!(
        "mcp-gateway/credential/v1\0{project_id}\0{server}\0{}\0{name}",
        kind.as_str()
    )
}

/// Tells apart credentials that were set anew: header and variable values
/// by their sealed bytes, a sign-in by when it was made (a token refresh
/// keeps the sign-in, and its connection).
pub fn fingerprint(rows: &[SealedCredential]) -> String {
    let mut hash = sha2::Sha256::new();
    for row in rows {
        hash.update(row.kind.as_str());
        hash.update([0]);
        hash.update(&row.name);
        hash.update([0]);
        match row.kind {
            CredentialKind::OAuth => hash.update(&row.set_at),
            _ => hash.update(&row.sealed),
        }
        hash.update([0]);
    }
    vocab::text::hex(&hash.finalize()[..12])
}

/// The bearer token among `headers`: an `Authorization: Bearer …` value.
pub fn bearer_header<'a>(headers: impl IntoIterator<Item = (&'a String, &'a String)>) -> Option<&'a str> {
    headers
        .into_iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("authorization"))
        .and_then(|(_, value)| value.strip_prefix("Bearer ").or(value.strip_prefix("bearer ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kind: CredentialKind, name: &str, sealed: &[u8], set_at: &str) -> SealedCredential {
        SealedCredential {
            kind,
            name: name.into(),
            key_id: "k".into(),
            sealed: sealed.to_vec(),
            set_at: set_at.into(),
        }
    }

    #[test]
    fn a_new_value_changes_the_fingerprint_but_a_refreshed_sign_in_does_not() {
        let header = |v: &[u8]| row(CredentialKind::Header, "X-Account", v, "t0");
        let oauth = |at: &str| row(CredentialKind::OAuth, "", b"tokens", at);
        assert_eq!(fingerprint(&[header(b"a")]), fingerprint(&[header(b"a")]));
        assert_ne!(fingerprint(&[header(b"a")]), fingerprint(&[header(b"b")]));
        let mut refreshed = oauth("t1");
        refreshed.sealed = b"other tokens".to_vec();
        assert_eq!(fingerprint(&[oauth("t1")]), fingerprint(&[refreshed]));
        assert_ne!(fingerprint(&[oauth("t1")]), fingerprint(&[oauth("t2")]));
    }

    #[test]
    fn rows_are_bound_to_project_server_kind_and_name() {
        let a = row_aad(1, "github", CredentialKind::Header, "Authorization");
        assert_ne!(a, row_aad(2, "github", CredentialKind::Header, "Authorization"));
        assert_ne!(a, row_aad(1, "linear", CredentialKind::Header, "Authorization"));
        assert_ne!(a, row_aad(1, "github", CredentialKind::Env, "Authorization"));
    }

    #[test]
    fn kinds_read_back_as_stored_and_a_bearer_header_is_found_in_any_case() {
        for kind in [CredentialKind::Header, CredentialKind::Env, CredentialKind::OAuth] {
            assert_eq!(CredentialKind::from_column(kind.as_str()), Some(kind));
        }
        assert_eq!(CredentialKind::from_column("cookie"), None);
        let headers = std::collections::BTreeMap::from([
            ("X-Other".to_string(), "Bearer no".to_string()),
            ("authorization".to_string(), "bearer t0k".to_string()),
        ]);
        assert_eq!(bearer_header(&headers), Some("t0k"));
        let basic = std::collections::BTreeMap::from([("Authorization".to_string(), "Basic x".to_string())]);
        assert_eq!(bearer_header(&basic), None);
    }
}
