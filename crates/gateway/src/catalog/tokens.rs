//! o200k token counts of what a snapshot lists: each tool's definition as a
//! `tools/list` would carry it, counted once per snapshot off the request
//! path, for what discovery saves a model against listing every tool.

use std::sync::Arc;

/// o200k tokens of `text` (OpenAI's encoding of GPT-4o and later).
pub fn tokens(text: &str) -> i64 {
    tiktoken_rs::o200k_base_singleton().encode_ordinary(text).len() as i64
}

/// Each of `definitions`' tokens, as JSON, in order.
pub(super) fn each(definitions: impl Iterator<Item = rmcp::model::Tool>) -> Arc<[u32]> {
    definitions
        .map(|tool| tokens(&serde_json::to_string(&tool).unwrap_or_default()) as u32)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_o200k() {
        // "hello world" is two tokens in o200k_base (as in cl100k_base).
        assert_eq!(tokens("hello world"), 2);
        assert_eq!(tokens(""), 0);
        assert!(tokens(r#"{"name":"read_file","description":"Read a file"}"#) > 8);
    }
}
