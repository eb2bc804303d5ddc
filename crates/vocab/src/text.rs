//! Small helpers for text shown to people and models.

/// At most `limit` characters; a cut text ends in `…` (counted in the limit).
pub fn truncate(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_string();
    }
    let kept: String = text.chars().take(limit.saturating_sub(1)).collect();
    format!("{}…", kept.trim_end())
}

/// At most `max_bytes` bytes of `text` (a bound of at least 3), cut at a
/// character boundary; a cut text ends in `…` (counted in the bound).
pub fn clip(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_string();
    }
    format!(
        "{}…",
        &text[..char_floor(text, max_bytes.saturating_sub('…'.len_utf8()))]
    )
}

/// The largest character boundary of `text` at or before byte `at`.
pub fn char_floor(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The key of `query`: lower case, whitespace collapsed, trimmed, so
/// "Read a file" and "read  a file " share an embedding (the model's
/// tokenizer lower-cases and splits on whitespace the same way) and a
/// remembered meaning.
pub fn normalise_query(query: &str) -> String {
    query.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// Lower-case hexadecimal of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `text` safe inside HTML or XML (SVG) content and quoted attributes.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Every run of whitespace (newlines included) as one space, trimmed.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` with each control character written as its escape (`\n`,
/// `\u{1b}`): another party's text, shown on a terminal, can neither start
/// a line of its own nor send an escape code.
pub fn escape_control(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c.is_control() {
            true => out.extend(c.escape_debug()),
            false => out.push(c),
        }
    }
    out
}

/// An error and each of its causes, `: ` apart ("error sending request: connection refused").
pub fn with_sources(e: &(dyn std::error::Error + 'static)) -> String {
    let mut message = e.to_string();
    let mut cause = e.source();
    while let Some(next) = cause {
        message.push_str(": ");
        message.push_str(&next.to_string());
        cause = next.source();
    }
    message
}

/// The innermost cause of an error ("connection refused", not "error sending request").
pub fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_escaped_and_the_rest_as_is() {
        assert_eq!(
            escape_control("v1\n[[servers]]\u{1b}[2J\t\"é\\"),
            "v1\\n[[servers]]\\u{1b}[2J\\t\"é\\"
        );
    }

    #[test]
    fn spellings_of_one_query_share_a_key() {
        assert_eq!(normalise_query("  Read   a FILE\n"), "read a file");
    }

    #[test]
    fn truncation_counts_the_ellipsis() {
        assert_eq!(truncate("abcdef", 6), "abcdef");
        assert_eq!(truncate("abcdefg", 4), "abc…");
        assert_eq!(truncate("héllo wörld", 6).chars().count(), 6);
    }

    #[test]
    fn clipping_counts_bytes_and_keeps_characters_whole() {
        assert_eq!(clip("abcdef", 6), "abcdef");
        assert_eq!(clip("abcdefg", 6), "abc…");
        let clipped = clip(&"é".repeat(100), 10);
        assert!(clipped.len() <= 10, "{clipped}");
        assert_eq!(clipped, "ééé…", "no half character");
        assert_eq!(char_floor("aé", 2), 1);
        assert_eq!(char_floor("ab", 9), 2);
    }

    #[test]
    fn lines_are_flattened() {
        assert_eq!(one_line("  a\n b\t\tc "), "a b c");
    }
}
