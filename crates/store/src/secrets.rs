//! The key that seals per-project credentials at rest, and sealing itself;
//! and the primitives behind tokens and sessions: random secrets and
//! constant-time comparison.
//!
//! AES-256-GCM from aws-lc-rs (already in the tree through rustls) with a
//! random 96-bit nonce per value. The associated data names the row a value
//! belongs to (project, server, kind, name), so a sealed value copied onto
//! another row does not open. The key is 32 random bytes, from
//! `MCP_GATEWAY_SECRET_KEY` (Base64) or from a key file beside the store,
//! created with mode 0600 on first use. Each sealed value records the key's
//! id, so a store opened with another key (or none) says so instead of
//! failing obscurely.

use std::io::Write;
use std::path::{Path, PathBuf};

use aws_lc_rs::aead::{AES_256_GCM, Aad, NONCE_LEN, Nonce, RandomizedNonceKey};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::Digest;

/// Environment variable holding the key, Base64 (32 bytes); it takes precedence over the key file.
pub(crate) const KEY_ENV: &str = "MCP_GATEWAY_SECRET_KEY";
/// Bytes of a key.
const KEY_BYTES: usize = 32;

/// Why a key could not be had or a value could not be opened. Never carries a value.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Neither the environment variable nor the key file is there.
    #[error(
        "the store holds encrypted credentials but their key is missing: set {KEY_ENV} or restore the key file {}", file.display()
    )]
    Missing {
        /// Where the key file was looked for.
        file: PathBuf,
    },
    /// The key in the environment or the file is not 32 bytes of Base64.
    #[error("{source_name} is not a key: expected 32 bytes in Base64 (e.g. `openssl rand -base64 32`)")]
    Malformed {
        /// `MCP_GATEWAY_SECRET_KEY` or the file's path.
        source_name: String,
    },
    /// A value was sealed with another key.
    #[error(
        "credentials were encrypted with key {sealed_with}, but the key in use is {in_use} ({KEY_ENV} or the key file beside the store)"
    )]
    OtherKey {
        /// Id of the key that sealed it.
        sealed_with: String,
        /// Id of the key at hand.
        in_use: String,
    },
    /// The value does not open: tampered with, or moved to another row.
    #[error("an encrypted credential does not decrypt (altered, or copied from another project or server)")]
    Corrupt,
    /// The key file could not be read or written.
    #[error("key file {}: {reason}", file.display())]
    Io {
        /// The file.
        file: PathBuf,
        /// What failed.
        reason: String,
    },
}

/// 256 random bits in hex: a token's secret, a session id.
pub fn random_hex() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(vocab::text::hex(&bytes))
}

/// Compares in time independent of where the first difference is.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The sealing key. `Debug` shows only its id.
pub struct Key {
    key: RandomizedNonceKey,
    id: String,
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key({})", self.id)
    }
}

/// The key file of the store at `store`: `<store>.key` beside it.
pub fn key_file(store: &Path) -> PathBuf {
    let mut name = store.file_name().unwrap_or_default().to_os_string();
    name.push(".key");
    store.with_file_name(name)
}

impl Key {
    /// A key from its raw bytes; `source_name` says where they came from in errors.
    pub fn from_bytes(bytes: &[u8], source_name: &str) -> Result<Self, Error> {
        let malformed = || Error::Malformed {
            source_name: source_name.to_string(),
        };
        if bytes.len() != KEY_BYTES {
            return Err(malformed());
        }
        let key = RandomizedNonceKey::new(&AES_256_GCM, bytes).map_err(|_| malformed())?;
        // An id that names the key without helping anyone guess it.
        let digest = sha2::Sha256::new()
            .chain_update(b"mcp-gateway key id\0")
            .chain_update(bytes)
            .finalize();
        Ok(Self {
            key,
            id: vocab::text::hex(&digest[..6]),
        })
    }

    fn decode(text: &str, source_name: &str) -> Result<Self, Error> {
        let bytes = STANDARD.decode(text.trim()).map_err(|_| Error::Malformed {
            source_name: source_name.to_string(),
        })?;
        Self::from_bytes(&bytes, source_name)
    }

    /// The key from the environment or the key file of `store`, if either is there.
    pub fn find(store: &Path) -> Result<Option<Self>, Error> {
        if let Ok(text) = std::env::var(KEY_ENV) {
            return Self::decode(&text, KEY_ENV).map(Some);
        }
        let file = key_file(store);
        match std::fs::read_to_string(&file) {
            Ok(text) => Self::decode(&text, &file.display().to_string()).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::Io {
                file,
                reason: e.to_string(),
            }),
        }
    }

    /// The key, as [`Key::find`], or the one the store's credentials need.
    pub fn require(store: &Path) -> Result<Self, Error> {
        Self::find(store)?.ok_or_else(|| Error::Missing { file: key_file(store) })
    }

    /// The key, creating the key file (mode 0600) when there is none; for
    /// the first credential a store receives.
    pub fn find_or_create(store: &Path) -> Result<Self, Error> {
        if let Some(key) = Self::find(store)? {
            return Ok(key);
        }
        let file = key_file(store);
        let io = |e: std::io::Error| Error::Io {
            file: file.clone(),
            reason: e.to_string(),
        };
        let mut bytes = [0u8; KEY_BYTES];
        aws_lc_rs::rand::fill(&mut bytes).map_err(|_| io(std::io::Error::other("no randomness")))?;
        let text = STANDARD.encode(bytes);
        if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        use std::os::unix::fs::OpenOptionsExt;
        // create_new: two processes racing here must not both write a key.
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&file)
        {
            Ok(mut f) => {
                f.write_all(format!("{text}\n").as_bytes()).map_err(io)?;
                f.sync_all().map_err(io)?;
                tracing::info!(file = %file.display(), "created the key that encrypts stored credentials");
                Self::from_bytes(&bytes, &file.display().to_string())
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Self::require(store),
            Err(e) => Err(io(e)),
        }
    }

    /// The key's id, stored beside each value it seals.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Seals `plaintext` for the row named by `aad`: nonce, then ciphertext and tag.
    pub fn seal(&self, aad: &str, plaintext: &[u8]) -> Vec<u8> {
        let mut sealed = plaintext.to_vec();
        let nonce = self
            .key
            .seal_in_place_append_tag(Aad::from(aad.as_bytes()), &mut sealed)
            .expect("AES-GCM sealing cannot fail for in-memory input");
        let mut out = Vec::with_capacity(NONCE_LEN + sealed.len());
        out.extend_from_slice(nonce.as_ref());
        out.extend_from_slice(&sealed);
        out
    }

    /// Opens what [`Key::seal`] made for the same `aad`, checking first that
    /// it was sealed by this key (`key_id`).
    pub fn open(&self, key_id: &str, aad: &str, sealed: &[u8]) -> Result<Vec<u8>, Error> {
        if key_id != self.id {
            return Err(Error::OtherKey {
                sealed_with: key_id.to_string(),
                in_use: self.id.clone(),
            });
        }
        if sealed.len() < NONCE_LEN {
            return Err(Error::Corrupt);
        }
        let (nonce, body) = sealed.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| Error::Corrupt)?;
        let mut body = body.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(aad.as_bytes()), &mut body)
            .map_err(|_| Error::Corrupt)?;
        Ok(plain.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_time_compare() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
        assert_eq!(random_hex().unwrap().len(), 64);
        assert_ne!(random_hex().unwrap(), random_hex().unwrap());
    }

    fn key() -> Key {
        Key::from_bytes(&[7u8; KEY_BYTES], "test").unwrap()
    }

    #[test]
    fn sealed_values_open_only_for_their_own_row_and_key() {
        let k = key();
        let sealed = k.seal("p1\0github\0header\0Authorization", b"Bearer ghp_secret");
        assert!(
            !sealed.windows(6).any(|w| w == b"secret"),
            "sealed bytes hold no plaintext"
        );
        assert_eq!(
            k.open(k.id(), "p1\0github\0header\0Authorization", &sealed).unwrap(),
            b"Bearer ghp_secret"
        );
        assert!(matches!(
            k.open(k.id(), "p2\0github\0header\0Authorization", &sealed),
            Err(Error::Corrupt)
        ));
        let other = Key::from_bytes(&[8u8; KEY_BYTES], "test").unwrap();
        assert!(matches!(
            other.open(k.id(), "p1\0github\0header\0Authorization", &sealed),
            Err(Error::OtherKey { .. })
        ));
        let mut tampered = sealed.clone();
        *tampered.last_mut().unwrap() ^= 1;
        assert!(matches!(
            k.open(k.id(), "p1\0github\0header\0Authorization", &tampered),
            Err(Error::Corrupt)
        ));
    }

    #[test]
    fn two_seals_of_one_value_differ() {
        let k = key();
        assert_ne!(k.seal("a", b"same"), k.seal("a", b"same"));
    }

    #[test]
    fn a_key_file_is_created_private_once_and_then_reused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("gateway.db");
        // SAFETY-free: the test does not set KEY_ENV, so the file decides.
        if std::env::var_os(KEY_ENV).is_some() {
            return;
        }
        assert!(Key::find(&store).unwrap().is_none());
        assert!(matches!(Key::require(&store), Err(Error::Missing { .. })));
        let first = Key::find_or_create(&store).unwrap();
        let file = key_file(&store);
        assert_eq!(file, dir.path().join("gateway.db.key"));
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
        let again = Key::find_or_create(&store).unwrap();
        assert_eq!(first.id(), again.id());
        std::fs::write(&file, "not base64!").unwrap();
        assert!(matches!(Key::find(&store), Err(Error::Malformed { .. })));
    }

    #[test]
    fn errors_never_carry_the_key() {
        let text = STANDARD.encode([1u8; 31]);
        let e = Key::decode(&text, KEY_ENV).unwrap_err().to_string();
        assert!(!e.contains(&text), "{e}");
    }
}
