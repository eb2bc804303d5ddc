//! Resource URIs under their server's name. Two servers may both ship
//! `ui://widget/card.html` or `skill://git/SKILL.md`, so where the gateway
//! shows many servers' URIs side by side, each goes under
//! `<scheme>://mcp-gateway/<server>/`. The scheme stays, because MCP Apps
//! ask for `ui://` and skills for `skill://`, and a read of the namespaced
//! URI reaches the server it names.

/// The schemes namespaced this way.
const SCHEMES: [&str; 2] = ["ui", "skill"];

/// What follows `<scheme>://` in a namespaced URI, before the server's name.
const AUTHORITY: &str = "mcp-gateway/";

/// `server`'s `uri` in its namespace; `None` for other schemes. A URI the
/// server gave in another server's namespace goes under its own as well: a
/// server names only its own resources, and the read reaches it.
pub fn scoped(server: &str, uri: &str) -> Option<String> {
    let (scheme, rest) = uri.split_once("://")?;
    SCHEMES
        .contains(&scheme)
        .then(|| format!("{scheme}://{AUTHORITY}{server}/{rest}"))
}

/// The server and its own URI behind a namespaced URI (server names have no
/// `/`, so the first one ends it).
pub fn origin(uri: &str) -> Option<(&str, String)> {
    let (scheme, rest) = uri.split_once("://")?;
    if !SCHEMES.contains(&scheme) {
        return None;
    }
    let (server, rest) = rest.strip_prefix(AUTHORITY)?.split_once('/')?;
    Some((server, format!("{scheme}://{rest}")))
}

/// Whether `uri` is an instance of the RFC 6570 `template` (a resource
/// template a server listed): its literal text, and at each expression
/// what that operator can expand to. A simple `{var}` stays within one
/// path segment; `{+var}` and `{#var}` may span several.
pub fn matches_template(template: &str, uri: &str) -> bool {
    let mut pattern = String::from("^");
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            return false;
        };
        pattern.push_str(&regex::escape(&rest[..open]));
        let expression = &rest[open + 1..open + close];
        pattern.push_str(match expression.chars().next() {
            Some('+' | '#') => ".*",
            Some('/') => "(?:/[^?#]*)?",
            Some('?' | '&') => "(?:[?&][^#]*)?",
            Some('.') => r"(?:\.[^/?#]*)?",
            Some(';') => "(?:;[^/?#]*)?",
            _ => "[^/?#]*",
        });
        rest = &rest[open + close + 1..];
    }
    pattern.push_str(&regex::escape(rest));
    pattern.push('$');
    // A template is the server's text: one too large for a regex matches nothing.
    regex::RegexBuilder::new(&pattern)
        .size_limit(1 << 20)
        .build()
        .is_ok_and(|re| re.is_match(uri))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uri_matches_the_templates_it_instantiates() {
        assert!(matches_template("file:///blue/{name}", "file:///blue/notes.txt"));
        assert!(!matches_template("file:///blue/{name}", "file:///red/notes.txt"));
        assert!(
            !matches_template("file:///blue/{name}", "file:///blue/a/b"),
            "one segment"
        );
        assert!(matches_template("file:///blue/{+path}", "file:///blue/a/b"));
        assert!(matches_template("test://template/{id}/data", "test://template/7/data"));
        assert!(!matches_template(
            "test://template/{id}/data",
            "test://template/7/other"
        ));
        assert!(matches_template(
            "db://rows{?limit,offset}",
            "db://rows?limit=1&offset=2"
        ));
        assert!(matches_template("db://rows{?limit}", "db://rows"));
        assert!(!matches_template("a.b://{x}", "aXb://y"), "literal text is literal");
        assert!(!matches_template("file:///{unclosed", "file:///x"));
    }

    #[test]
    fn uris_go_into_their_servers_namespace_and_back() {
        let namespaced = scoped("blue", "ui://widget/card.html?v=2").unwrap();
        assert_eq!(namespaced, "ui://mcp-gateway/blue/widget/card.html?v=2");
        assert_eq!(origin(&namespaced), Some(("blue", "ui://widget/card.html?v=2".into())));
        let skill = scoped("red", "skill://git/commit/SKILL.md").unwrap();
        assert_eq!(skill, "skill://mcp-gateway/red/git/commit/SKILL.md");
        assert_eq!(origin(&skill), Some(("red", "skill://git/commit/SKILL.md".into())));
        assert_eq!(scoped("blue", "demo://readme"), None, "only ui:// and skill://");
        let foreign = scoped("red", &namespaced).unwrap();
        assert_eq!(foreign, "ui://mcp-gateway/red/mcp-gateway/blue/widget/card.html?v=2");
        assert_eq!(
            origin(&foreign),
            Some(("red", namespaced.clone())),
            "red's URI naming blue's namespace is read from red"
        );
        assert_eq!(origin("ui://widget/card.html"), None);
        assert_eq!(origin("ui://mcp-gateway/blue"), None, "no resource after the server");
        assert_eq!(origin("demo://mcp-gateway/blue/x"), None);
    }
}
