//! What operators change, in one place: the command line and the console
//! both call these, and each change is recorded in the store's admin log
//! (who, what, on what; never a secret).

use crate::access::{Project, Search};
use crate::store::{self, AdminTokenInfo, Store, TokenInfo};

/// Who made a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    /// Someone with the store file: the command line.
    Cli,
    /// The console, signed in with an admin token.
    AdminToken(i64),
    /// The console, signed in with an OAuth access token holding the admin scope.
    OAuth {
        /// `iss`.
        issuer: String,
        /// `sub`.
        subject: String,
    },
}

impl std::fmt::Display for Actor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Actor::Cli => f.write_str("cli"),
            Actor::AdminToken(id) => write!(f, "admin-token:{id}"),
            Actor::OAuth { issuer, subject } => write!(f, "oauth:{issuer}#{subject}"),
        }
    }
}

/// Records an action that is not a store change (a server restarted from the console).
pub fn record(
    store: &Store,
    actor: &Actor,
    action: &str,
    target: &str,
    detail: Option<&str>,
) -> Result<(), store::Error> {
    tracing::info!(actor = %actor, action, target, "operator action");
    store.record_admin_action(&actor.to_string(), action, target, detail)
}

/// What a grant names: a whole server, or one of its tools.
fn grant_target(project: &str, server: &str, tool: Option<&str>) -> String {
    match tool {
        Some(t) => format!("project {project}, tool {server}:{t}"),
        None => format!("project {project}, server {server}"),
    }
}

/// Grants (`allow`) or revokes a server or one tool. Revoking a whole
/// server drops its tool overrides and keeps an explicit deny.
pub fn grant(
    store: &Store,
    actor: &Actor,
    project: &str,
    server: &str,
    tool: Option<&str>,
    allow: bool,
) -> Result<(), store::Error> {
    match (tool, allow) {
        (None, false) => store.deny_server(project, server)?,
        (tool, allow) => store.set_permission(project, server, tool, allow)?,
    }
    let action = if allow { "grant" } else { "revoke" };
    record(store, actor, action, &grant_target(project, server, tool), None)
}

/// Issues a project token; the secret is returned once.
pub fn issue_token(
    store: &Store,
    actor: &Actor,
    project: &str,
    label: &str,
) -> Result<(TokenInfo, String), store::Error> {
    let issued = store.issue_token(project, label)?;
    record(
        store,
        actor,
        "token.issue",
        &format!("project {project}, token #{}", issued.0.id),
        (!label.is_empty()).then_some(label),
    )?;
    Ok(issued)
}

/// Revokes a project token; refused from the next request on.
pub fn revoke_token(store: &Store, actor: &Actor, id: i64) -> Result<(), store::Error> {
    if !store.revoke_token(id)? {
        return Err(store::Error::NoToken(id));
    }
    record(store, actor, "token.revoke", &format!("token #{id}"), None)
}

/// Sets a project's search (`None`: catalog off).
pub fn set_search(
    store: &Store,
    actor: &Actor,
    project: &str,
    search: Option<Search>,
) -> Result<Project, store::Error> {
    let p = store.set_search(project, search)?;
    let word = search.map_or("off", Search::as_str);
    record(
        store,
        actor,
        "project.search",
        &format!("project {}", p.name),
        Some(word),
    )?;
    Ok(p)
}

/// Issues an admin token; the secret is returned once.
pub fn issue_admin_token(store: &Store, actor: &Actor, label: &str) -> Result<(AdminTokenInfo, String), store::Error> {
    let issued = store.issue_admin_token(label)?;
    let target = format!("admin token #{}", issued.0.id);
    record(
        store,
        actor,
        "admin-token.issue",
        &target,
        (!label.is_empty()).then_some(label),
    )?;
    Ok(issued)
}

/// Revokes an admin token; its console sessions end at their next request.
pub fn revoke_admin_token(store: &Store, actor: &Actor, id: i64) -> Result<(), store::Error> {
    if !store.revoke_admin_token(id)? {
        return Err(store::Error::NoToken(id));
    }
    record(store, actor, "admin-token.revoke", &format!("admin token #{id}"), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_recorded_with_their_actor() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&dir.path().join("g.db")).unwrap();
        s.create_project("p", None).unwrap();
        grant(&s, &Actor::AdminToken(4), "p", "srv", Some("t"), true).unwrap();
        let (info, _) = issue_token(&s, &Actor::Cli, "p", "laptop").unwrap();
        revoke_token(&s, &Actor::Cli, info.id).unwrap();
        assert!(matches!(
            revoke_token(&s, &Actor::Cli, info.id),
            Err(store::Error::NoToken(_))
        ));
        let actions = s.admin_actions(10).unwrap();
        let seen: Vec<(&str, &str, &str)> = actions
            .iter()
            .map(|a| (a.actor.as_str(), a.action.as_str(), a.target.as_str()))
            .collect();
        assert_eq!(
            seen,
            [
                ("cli", "token.revoke", "token #1"),
                ("cli", "token.issue", "project p, token #1"),
                ("admin-token:4", "grant", "project p, tool srv:t"),
            ]
        );
        assert!(
            actions
                .iter()
                .all(|a| !a.detail.as_deref().unwrap_or("").contains("mgw_"))
        );
    }
}
