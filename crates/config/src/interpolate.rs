//! `${VAR}` and `${VAR:-default}` in configuration strings, so secrets stay out of the file.

/// The path of the running gateway binary, always defined, so the shipped
/// config can start the built-in demo server wherever the binary lives.
pub(super) const SELF_EXE_VAR: &str = "MCP_GATEWAY_EXE";

/// Replaces `${VAR}` and `${VAR:-default}` from the environment; `$$` is a literal `$`.
///
/// An unset variable without a default is an error naming it.
pub(crate) fn interpolate(input: &str) -> Result<String, String> {
    interpolate_with(input, |name| {
        if name == SELF_EXE_VAR {
            if let Ok(v) = std::env::var(name) {
                return Some(v);
            }
            return std::env::current_exe().ok().map(|p| p.display().to_string());
        }
        std::env::var(name).ok()
    })
}

/// `text` as a configuration string that reads back as itself: every `$`
/// written `$$`, so no `${…}` in it is taken for a variable.
pub(crate) fn literal(text: &str) -> String {
    text.replace('$', "$$")
}

fn interpolate_with(input: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(body) = after.strip_prefix('{') {
            let end = body
                .find('}')
                .ok_or_else(|| format!("unclosed '${{' in '{input}'; write '$$' for a literal '$'"))?;
            let expr = &body[..end];
            let (name, default) = match expr.split_once(":-") {
                Some((n, d)) => (n, Some(d)),
                None => (expr, None),
            };
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!("'${{{expr}}}' is not a valid variable reference"));
            }
            match (lookup(name).filter(|v| !v.is_empty() || default.is_none()), default) {
                (Some(v), _) => out.push_str(&v),
                (None, Some(d)) => out.push_str(d),
                (None, None) => {
                    return Err(format!(
                        "environment variable {name} is not set (write ${{{name}:-default}} to give a default)"
                    ));
                }
            }
            rest = &body[end + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_literal_reads_back_as_itself() {
        for text in ["${USD}", "a$b", "$$", "${X:-y}$", "plain"] {
            assert_eq!(run(&literal(text)).as_deref(), Ok(text));
        }
    }

    fn run(s: &str) -> Result<String, String> {
        interpolate_with(s, |n| match n {
            "HOME" => Some("/home/u".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        })
    }

    #[test]
    fn substitutes_defaults_and_escapes() {
        assert_eq!(run("${HOME}/x").unwrap(), "/home/u/x");
        assert_eq!(run("${NOPE:-fallback}").unwrap(), "fallback");
        assert_eq!(run("${HOME:-fallback}").unwrap(), "/home/u");
        assert_eq!(run("${EMPTY:-d}").unwrap(), "d", "an empty value takes the default");
        assert_eq!(run("${EMPTY}").unwrap(), "");
        assert_eq!(run("cost $$5 and $x").unwrap(), "cost $5 and $x");
        assert_eq!(run("plain").unwrap(), "plain");
    }

    #[test]
    fn errors_name_the_problem() {
        assert!(run("${NOPE}").unwrap_err().contains("NOPE is not set"));
        assert!(run("${HOME").unwrap_err().contains("unclosed"));
        assert!(run("${A B}").unwrap_err().contains("not a valid"));
    }

    #[test]
    fn self_exe_is_always_defined() {
        assert!(!interpolate("${MCP_GATEWAY_EXE}").unwrap().is_empty());
    }
}
