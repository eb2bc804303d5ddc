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

#[cfg(test)]
mod tests {
    use super::*;

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
