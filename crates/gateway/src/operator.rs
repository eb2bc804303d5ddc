//! What operators read and change, in one place: the command line and the
//! console both go through [`Operator`], and each change is recorded in the
//! store's admin log (who, what, on what; never a secret).

use std::collections::HashMap;

use store::access::{Apps, Exposure, Grants, Permission, Project, Search};
use store::{self, AdminAction, AdminTokenInfo, AuditRow, CredentialInfo, Store, TokenInfo, Usage, UsageRange};

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

/// An operator's reads and changes over one store. The command line and the
/// console both go through it, never around it to the store; each change is
/// recorded with its actor.
#[derive(Debug, Clone, Copy)]
pub struct Operator<'a> {
    store: &'a Store,
}

/// A project as an overview lists it.
#[derive(Debug)]
pub struct ProjectLine {
    pub project: Project,
    /// Tokens issued for it and not revoked.
    pub live_tokens: usize,
}

/// One project as an operator inspects it: names and counts, never a
/// secret or a credential's value.
#[derive(Debug)]
pub struct ProjectView {
    pub project: Project,
    pub grants: Vec<Permission>,
    pub tokens: Vec<TokenInfo>,
    pub credentials: Vec<CredentialInfo>,
    /// Associations learning from use keeps for it.
    pub learned_associations: u64,
    /// Meanings of past queries it remembers.
    pub remembered_meanings: u64,
}

impl<'a> Operator<'a> {
    pub fn new(store: &'a Store) -> Self {
        Operator { store }
    }

    /// Every project, with its live tokens counted.
    pub fn projects(&self) -> Result<Vec<ProjectLine>, store::Error> {
        let tokens = self.store.tokens(None)?;
        let lines = self.store.projects()?.into_iter().map(|project| {
            let live_tokens = tokens
                .iter()
                .filter(|t| t.project_id == project.id && t.revoked_at.is_none())
                .count();
            ProjectLine { project, live_tokens }
        });
        Ok(lines.collect())
    }

    /// One project by name or id, as [`ProjectView`] shows it.
    pub fn project(&self, name: &str) -> Result<ProjectView, store::Error> {
        let project = self
            .store
            .project(name)?
            .ok_or_else(|| store::Error::NoProject(name.to_string()))?;
        let (learned_associations, remembered_meanings) = self.store.learning_size(project.id)?;
        Ok(ProjectView {
            grants: self.store.permissions(project.id)?,
            tokens: self.store.tokens(Some(&project.name))?,
            credentials: self.store.credential_list(Some(&project.name))?,
            learned_associations,
            remembered_meanings,
            project,
        })
    }

    /// What each project may see, by name.
    pub fn grants_by_project(&self) -> Result<Vec<(String, Grants)>, store::Error> {
        let mut out = Vec::new();
        for p in self.store.projects()? {
            out.push((p.name, Grants::from_permissions(self.store.permissions(p.id)?)));
        }
        Ok(out)
    }

    /// The latest operators' actions, newest first.
    pub fn recent_actions(&self, limit: usize) -> Result<Vec<AdminAction>, store::Error> {
        self.store.admin_actions(limit)
    }

    /// Calls that started and have no outcome row yet, newest first.
    pub fn started_calls(&self, limit: usize) -> Result<Vec<AuditRow>, store::Error> {
        self.store.started_calls(limit)
    }

    /// One request's audit rows: a script's own row, then its inner calls.
    pub fn request(&self, request_id: &str) -> Result<Vec<AuditRow>, store::Error> {
        self.store.audit_request(request_id)
    }

    /// Calls over `range`, of one project or tool when given, with each
    /// project named rather than numbered. It reads many rows: call it off the runtime.
    pub fn usage(&self, range: UsageRange, project: Option<&str>, tool: Option<&str>) -> Result<Usage, store::Error> {
        let project_id = match project {
            Some(name) => Some(
                self.store
                    .project(name)?
                    .ok_or_else(|| store::Error::NoProject(name.to_string()))?
                    .id,
            ),
            None => None,
        };
        let names: HashMap<String, String> = self
            .store
            .projects()?
            .into_iter()
            .map(|p| (p.id.to_string(), p.name))
            .collect();
        let mut usage = self.store.usage(range, project_id, tool, chrono::Utc::now())?;
        for row in &mut usage.projects {
            if let Some(name) = names.get(&row.name) {
                row.name.clone_from(name);
            }
        }
        Ok(usage)
    }

    /// Keeps the hourly usage rollups current; the rows rolled up.
    pub fn roll_up_usage(&self) -> Result<usize, store::Error> {
        self.store.roll_up_usage()
    }

    /// Creates a project (`search: None`: its catalog off).
    pub fn create_project(&self, actor: &Actor, name: &str, search: Option<Search>) -> Result<Project, store::Error> {
        let p = self.store.create_project(name, search)?;
        let word = search.map_or("off", Search::as_str);
        self.record(actor, "project.create", &format!("project {}", p.name), Some(word))?;
        Ok(p)
    }

    /// Sets which tools a project's `tools/list` names directly.
    pub fn set_exposure(&self, actor: &Actor, project: &str, exposure: Exposure) -> Result<Project, store::Error> {
        let p = self.store.set_exposure(project, exposure)?;
        let target = format!("project {}", p.name);
        self.record(actor, "project.exposure", &target, Some(exposure.as_str()))?;
        Ok(p)
    }

    /// Sets whether a project's callers get Apps.
    pub fn set_apps(&self, actor: &Actor, project: &str, apps: Apps) -> Result<Project, store::Error> {
        let p = self.store.set_apps(project, apps)?;
        self.record(
            actor,
            "project.apps",
            &format!("project {}", p.name),
            Some(apps.as_str()),
        )?;
        Ok(p)
    }

    /// Forgets what a project's use taught search.
    pub fn reset_learning(&self, actor: &Actor, project: &str) -> Result<store::Forgotten, store::Error> {
        let forgotten = self.store.reset_learning(project)?;
        self.record(actor, "project.reset-learning", &format!("project {project}"), None)?;
        Ok(forgotten)
    }

    /// Approves (`approve`) or rejects the definition of `server`'s `tool`
    /// waiting for review; false when none waits.
    pub fn review_tool(&self, actor: &Actor, server: &str, tool: &str, approve: bool) -> Result<bool, store::Error> {
        let done = match approve {
            true => self.store.approve_tool(server, tool)?,
            false => self.store.reject_tool(server, tool)?,
        };
        if done {
            let action = if approve { "tool.approve" } else { "tool.reject" };
            self.record(actor, action, &format!("tool {server}:{tool}"), None)?;
        }
        Ok(done)
    }

    /// Records a change to a project's own credentials (`secret.set`,
    /// `secret.remove`, `sign-in`, `sign-out`), made through the vault:
    /// what it names, never its value.
    pub fn record_credential(
        &self,
        actor: &Actor,
        action: &str,
        project: &str,
        server: &str,
        name: Option<&str>,
    ) -> Result<(), store::Error> {
        let target = format!("project {project}, server {server}");
        self.record(actor, action, &target, name)
    }

    /// Records an action that is not a store change (a server restarted from the console).
    pub fn record(&self, actor: &Actor, action: &str, target: &str, detail: Option<&str>) -> Result<(), store::Error> {
        tracing::info!(actor = %actor, action, target, "operator action");
        self.store
            .record_admin_action(&actor.to_string(), action, target, detail)
    }

    /// Grants (`allow`) or revokes a server or one tool. Revoking a whole
    /// server drops its tool overrides and keeps an explicit deny.
    pub fn grant(
        &self,
        actor: &Actor,
        project: &str,
        server: &str,
        tool: Option<&str>,
        allow: bool,
    ) -> Result<(), store::Error> {
        match (tool, allow) {
            (None, false) => self.store.deny_server(project, server)?,
            (tool, allow) => self.store.set_permission(project, server, tool, allow)?,
        }
        let action = if allow { "grant" } else { "revoke" };
        self.record(actor, action, &grant_target(project, server, tool), None)
    }

    /// Issues a project token; the secret is returned once.
    pub fn issue_token(&self, actor: &Actor, project: &str, label: &str) -> Result<(TokenInfo, String), store::Error> {
        let issued = self.store.issue_token(project, label)?;
        let target = format!("project {project}, token #{}", issued.0.id);
        self.record(actor, "token.issue", &target, (!label.is_empty()).then_some(label))?;
        Ok(issued)
    }

    /// Revokes a project token; refused from the next request on.
    pub fn revoke_token(&self, actor: &Actor, id: i64) -> Result<(), store::Error> {
        if !self.store.revoke_token(id)? {
            return Err(store::Error::NoToken(id));
        }
        self.record(actor, "token.revoke", &format!("token #{id}"), None)
    }

    /// Sets a project's search (`None`: catalog off).
    pub fn set_search(&self, actor: &Actor, project: &str, search: Option<Search>) -> Result<Project, store::Error> {
        let p = self.store.set_search(project, search)?;
        let word = search.map_or("off", Search::as_str);
        self.record(actor, "project.search", &format!("project {}", p.name), Some(word))?;
        Ok(p)
    }

    /// Issues an admin token; the secret is returned once.
    pub fn issue_admin_token(&self, actor: &Actor, label: &str) -> Result<(AdminTokenInfo, String), store::Error> {
        let issued = self.store.issue_admin_token(label)?;
        let target = format!("admin token #{}", issued.0.id);
        self.record(
            actor,
            "admin-token.issue",
            &target,
            (!label.is_empty()).then_some(label),
        )?;
        Ok(issued)
    }

    /// Revokes an admin token; its console sessions end at their next request.
    pub fn revoke_admin_token(&self, actor: &Actor, id: i64) -> Result<(), store::Error> {
        if !self.store.revoke_admin_token(id)? {
            return Err(store::Error::NoToken(id));
        }
        self.record(actor, "admin-token.revoke", &format!("admin token #{id}"), None)
    }
}

/// What a grant names: a whole server, or one of its tools.
fn grant_target(project: &str, server: &str, tool: Option<&str>) -> String {
    match tool {
        Some(t) => format!("project {project}, tool {server}:{t}"),
        None => format!("project {project}, server {server}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_recorded_with_their_actor() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&dir.path().join("g.db")).unwrap();
        s.create_project("p", None).unwrap();
        let op = Operator::new(&s);
        op.grant(&Actor::AdminToken(4), "p", "srv", Some("t"), true).unwrap();
        let (info, _) = op.issue_token(&Actor::Cli, "p", "laptop").unwrap();
        op.revoke_token(&Actor::Cli, info.id).unwrap();
        assert!(matches!(
            op.revoke_token(&Actor::Cli, info.id),
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
