//! The names the layers pass each other, as types rather than bare strings:
//! a downstream server's name, a tool's key (`server:tool`), and the id of
//! one upstream call. Each reads as its text (`Deref<Target = str>`,
//! `Display`, JSON as a string) and clones without copying it, so a key
//! made once in the catalog travels to the audit row as it is.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Serialize, Serializer};

use crate::wire::{KEY_SEPARATOR, split_key};

/// What every name shares: its text is all there is to compare, hash,
/// print or serialise, so a map keyed by one is read with a `&str`.
macro_rules! reads_as_text {
    ($name:ident) => {
        impl Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                self.as_str()
            }
        }
        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                self.as_str()
            }
        }
        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                self.as_str()
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
        impl PartialEq for $name {
            fn eq(&self, other: &Self) -> bool {
                self.as_str() == other.as_str()
            }
        }
        impl Eq for $name {}
        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }
        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }
        impl Hash for $name {
            fn hash<H: Hasher>(&self, state: &mut H) {
                self.as_str().hash(state);
            }
        }
        impl PartialOrd for $name {
            fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(other))
            }
        }
        impl Ord for $name {
            fn cmp(&self, other: &Self) -> std::cmp::Ordering {
                self.as_str().cmp(other.as_str())
            }
        }
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }
        impl From<$name> for String {
            fn from(name: $name) -> String {
                name.as_str().to_string()
            }
        }
    };
}

/// A downstream server's name, as the configuration gives it.
#[derive(Clone, Debug)]
pub struct ServerName(Arc<str>);

impl ServerName {
    /// `name`, as the configuration validated it.
    pub fn new(name: &str) -> Self {
        Self(name.into())
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

reads_as_text!(ServerName);

/// `server:tool`, the name of one downstream tool across the gateway. The
/// tool part may itself hold `:`; the server part never does.
#[derive(Clone, Debug)]
pub struct ToolKey {
    text: Arc<str>,
    /// Where the separator is.
    split: usize,
}

impl ToolKey {
    /// The key of `server`'s `tool`.
    pub fn new(server: &str, tool: &str) -> Self {
        Self {
            text: format!("{server}{KEY_SEPARATOR}{tool}").into(),
            split: server.len(),
        }
    }

    /// `key` as a caller wrote it, when it has a server and a tool part.
    pub fn parse(key: &str) -> Option<Self> {
        split_key(key).map(|(server, _)| Self {
            text: key.into(),
            split: server.len(),
        })
    }

    /// The whole key.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The server part.
    pub fn server(&self) -> &str {
        &self.text[..self.split]
    }

    /// The tool part, as the server names it.
    pub fn tool(&self) -> &str {
        &self.text[self.split + KEY_SEPARATOR.len_utf8()..]
    }
}

reads_as_text!(ToolKey);

/// The id of one upstream call, for logs, traces and the audit row.
#[derive(Clone, Debug)]
pub struct RequestId(Arc<str>);

impl RequestId {
    /// A fresh id: a counter from a random start, so unique within the
    /// process without a system call per call, and across processes as
    /// likely as random ids (they are labels, not secrets). In order, so a
    /// store's index of them grows at one end: random ids spread each
    /// batch of audit rows over most of the index's pages.
    pub fn fresh() -> Self {
        static NEXT: std::sync::LazyLock<AtomicU64> = std::sync::LazyLock::new(|| {
            let mut bytes = [0u8; 8];
            getrandom::fill(&mut bytes).unwrap_or_default();
            u64::from_le_bytes(bytes).into()
        });
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        Self(format!("{n:016x}").into())
    }

    /// The id another part of the gateway already gave the call (a script's
    /// calls carry their script's).
    pub fn given(id: &str) -> Self {
        Self(id.into())
    }

    /// The id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

reads_as_text!(RequestId);

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn a_key_knows_its_server_and_tool_and_reads_as_its_text() {
        let key = ToolKey::new("fs", "read_file");
        assert_eq!(
            (key.server(), key.tool(), key.as_str()),
            ("fs", "read_file", "fs:read_file")
        );
        let nested = ToolKey::parse("srv:ns:tool").unwrap();
        assert_eq!((nested.server(), nested.tool()), ("srv", "ns:tool"));
        assert_eq!(ToolKey::parse("srv:ns:tool"), Some(ToolKey::new("srv", "ns:tool")));
        assert!(ToolKey::parse("nokey").is_none());
        assert!(ToolKey::parse(":tool").is_none());
        assert!(ToolKey::parse("srv:").is_none());
        assert_eq!(serde_json::to_value(&key).unwrap(), "fs:read_file");
        assert_eq!(key.to_string(), "fs:read_file");
        let by_key = HashMap::from([(key, 1)]);
        assert_eq!(
            by_key.get("fs:read_file"),
            Some(&1),
            "a map of keys is read with a &str"
        );
        assert_eq!(ServerName::new("fs"), "fs");
    }

    #[test]
    fn request_ids_are_distinct_and_sort_as_they_were_made() {
        let ids: Vec<RequestId> = (0..1000).map(|_| RequestId::fresh()).collect();
        assert!(ids.iter().all(|id| id.len() == 16));
        // As text, as a store's index sorts them (fixed width, so also as numbers).
        assert!(ids.windows(2).all(|w| w[0].as_str() < w[1].as_str()), "{:?}", &ids[..3]);
        assert_eq!(RequestId::given("r-1"), "r-1");
    }
}
