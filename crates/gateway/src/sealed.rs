//! What the gateway hands a caller and later reads back: task ids and its
//! own 2026-07-28 request states. Each is sealed with AES-256-GCM under the
//! store's key (as the vault holds it) and bound to the project and to its
//! purpose, so none can be forged, read, used by another project, or passed
//! off as the other kind.

use base64::Engine;
use serde::Serialize;
use serde::de::DeserializeOwned;

use store::secrets::Key;

/// What a sealed string is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Purpose {
    /// A downstream task's id (`tasks.rs`).
    Task,
    /// The `requestState` of a call waiting for its caller's input (`rounds_parked.rs`).
    RequestState,
}

impl Purpose {
    fn prefix(self) -> &'static str {
        match self {
            Self::Task => "gwt_",
            Self::RequestState => "gwr_",
        }
    }

    /// The data the seal is bound to: it opens only for this project and purpose.
    fn aad(self, project_id: i64) -> String {
        let what = match self {
            Self::Task => "task",
            Self::RequestState => "request state",
        };
        format!("mcp-gateway {what} of project {project_id}")
    }

    /// Whether `text` looks like one of these (it may still fail to open).
    pub(super) fn marks(self, text: &str) -> bool {
        text.starts_with(self.prefix())
    }
}

/// `<prefix><key id>_<base64url(nonce, ciphertext, tag)>`.
pub(super) fn seal<T: Serialize>(key: &Key, purpose: Purpose, project_id: i64, value: &T) -> String {
    let plain = serde_json::to_vec(value).expect("sealed values serialize");
    let bytes = key.seal(&purpose.aad(project_id), &plain);
    format!(
        "{}{}_{}",
        purpose.prefix(),
        key.id(),
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    )
}

/// What `text` seals, if this key sealed it for this project and purpose;
/// forged, altered, other projects' and other purposes' strings are all `None`.
pub(super) fn open<T: DeserializeOwned>(key: &Key, purpose: Purpose, project_id: i64, text: &str) -> Option<T> {
    let (key_id, body) = text.strip_prefix(purpose.prefix())?.split_once('_')?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(body).ok()?;
    let plain = key.open(key_id, &purpose.aad(project_id), &bytes).ok()?;
    serde_json::from_slice(&plain).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(byte: u8) -> Key {
        Key::from_bytes(&[byte; 32], "test").unwrap()
    }

    #[test]
    fn a_sealed_string_opens_only_for_its_project_key_and_purpose() {
        let k = key(7);
        let value = ("srv:slow".to_string(), "t-1".to_string());
        let id = seal(&k, Purpose::Task, 1, &value);
        assert!(Purpose::Task.marks(&id) && !id.contains("t-1") && !id.contains("srv"));
        let open_task = |k: &Key, project, text: &str| open::<(String, String)>(k, Purpose::Task, project, text);
        assert_eq!(open_task(&k, 1, &id), Some(value.clone()));
        assert_eq!(open_task(&k, 2, &id), None, "another project");
        assert_eq!(open_task(&key(8), 1, &id), None, "another key");
        let mut altered = id.clone().into_bytes();
        let last = altered.len() - 3;
        altered[last] = if altered[last] == b'A' { b'B' } else { b'A' };
        assert_eq!(open_task(&k, 1, &String::from_utf8(altered).unwrap()), None);
        assert_eq!(open_task(&k, 1, "t-1"), None);
        assert_ne!(seal(&k, Purpose::Task, 1, &value), id, "a fresh nonce each time");

        let state = seal(&k, Purpose::RequestState, 1, &value);
        assert!(Purpose::RequestState.marks(&state) && !Purpose::Task.marks(&state));
        let as_task = format!("gwt_{}", &state[4..]);
        assert_eq!(open_task(&k, 1, &as_task), None, "a request state is not a task id");
        assert_eq!(open(&k, Purpose::RequestState, 1, &state), Some(value));
    }
}
