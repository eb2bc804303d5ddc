//! Direct exposure: each tool under a name of its own in `tools/list`, for
//! projects set to `direct` or `both`. The name is `server__tool`, within the
//! MCP tool-name rules (1 to 128 of `A-Z a-z 0-9 _ - .`); a name that would
//! break them, be too long, or be taken gets a short hash of its key instead
//! of its tail, so every tool keeps one stable name.

use sha2::{Digest, Sha256};

/// Between server and tool in a direct name.
pub const SEPARATOR: &str = "__";

/// Longest tool name the MCP schema allows.
const MAX_NAME: usize = 128;

/// Direct names for `(server, tool)` pairs, in the same order.
pub fn names<'a>(tools: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<String> {
    let tools: Vec<(&str, &str)> = tools.into_iter().collect();
    // (name, whether it is the plain `server__tool` within the rules)
    let plain: Vec<(String, bool)> = tools
        .iter()
        .map(|(server, tool)| {
            let name = format!("{server}{SEPARATOR}{tool}");
            let valid: String = name.chars().map(allowed).collect();
            let kept = valid == name && name.len() <= MAX_NAME;
            (valid, kept)
        })
        .collect();
    // Only plain names claim themselves; an adjusted one always takes a hash.
    let mut claimed = std::collections::HashMap::<&str, usize>::new();
    for (name, _) in plain.iter().filter(|(_, kept)| *kept) {
        *claimed.entry(name).or_default() += 1;
    }
    tools
        .iter()
        .zip(&plain)
        .map(|((server, tool), (name, kept))| {
            if *kept && claimed[name.as_str()] == 1 {
                return name.clone();
            }
            let hash = Sha256::digest(format!("{server}:{tool}").as_bytes());
            let tag: String = hash.iter().take(4).map(|b| format!("{b:02x}")).collect();
            let keep = name.len().min(MAX_NAME - tag.len() - 1);
            format!("{}_{tag}", &name[..keep])
        })
        .collect()
}

fn allowed(c: char) -> char {
    if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
        c
    } else {
        '_'
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_server_tool_within_the_rules_and_distinct() {
        let long = "t".repeat(200);
        let names = names([
            ("fs", "read_file"),
            ("git", "log"),
            ("web", "fetch page"),
            ("web", "fetch_page"),
            ("x", long.as_str()),
        ]);
        assert_eq!(names[0], "fs__read_file");
        assert_eq!(names[1], "git__log");
        // "fetch page" would become "fetch_page", which the server also has: both differ now.
        assert!(
            names[2].starts_with("web__fetch_page_") && names[2].len() == "web__fetch_page_".len() + 8,
            "{names:?}"
        );
        assert_eq!(
            names[3], "web__fetch_page",
            "the tool that needs no change keeps its name"
        );
        assert_eq!(names[4].len(), 128);
        let valid = |n: &String| n.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
        assert!(names.iter().all(valid), "{names:?}");
        let distinct: std::collections::HashSet<_> = names.iter().collect();
        assert_eq!(distinct.len(), names.len());
    }
}
