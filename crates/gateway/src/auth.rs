//! Who is calling: a token (Authorization header, `_meta.token`, or the
//! stdio session's `MCP_GATEWAY_TOKEN`) resolves to its project and grants;
//! no token means refusal unless anonymous access names a project.
//!
//! Two kinds of token are accepted side by side: the gateway's own `mgw_…`
//! tokens (hashed in the store) and, with `[auth.oauth]`, access tokens from
//! trusted authorization servers ([`oauth`]), mapped to a project.

mod known;

use std::sync::{Arc, Mutex};
use std::time::Instant;

use arc_swap::ArcSwap;
use oauth::{self, Verifier};
use store::access;
use store::access::{Grants, Project};
use store::{self, Store};

/// The prefix of the gateway's own tokens; anything else is an OAuth access token.
const GATEWAY_TOKEN_PREFIX: &str = "mgw_";

/// `_meta.projectId` values that mean "no project".
pub const UNASSIGNED_PROJECT_ID: &str = "UNASSIGNED_PROJECT_ID";

/// Environment variable a stdio client can set to authenticate its whole session.
pub const TOKEN_ENV: &str = "MCP_GATEWAY_TOKEN";

/// An authenticated caller.
#[derive(Debug, Clone)]
pub struct Caller {
    /// Its project.
    pub project: Project,
    /// The token used; `None` for anonymous access.
    pub token_id: Option<i64>,
    /// What the project may see.
    pub grants: Arc<Grants>,
    /// An OAuth access token as presented, with its issuer; only a built-in
    /// that declares that issuer as its own receives it (Index exchanges it).
    /// A gateway token is never kept here: it reaches no downstream.
    pub credential: Option<Credential>,
    /// The OAuth subject (`sub`), for logs and the audit log.
    pub subject: Option<String>,
    /// The OAuth issuer of the token.
    pub issuer: Option<String>,
    /// The store's access generation this caller was resolved at; what is
    /// cached about the caller's project holds while it stays the same.
    pub generation: i64,
}

/// An OAuth access token as the caller presented it. `Debug` never prints it.
#[derive(Clone)]
pub struct Credential {
    token: Arc<str>,
    issuer: Arc<str>,
}

impl Caller {
    /// Whose learning this caller reads and teaches: its project, as of
    /// the access generation it was admitted at.
    pub fn learning_scope(&self) -> learning::Scope {
        learning::Scope {
            project_id: self.project.id,
            generation: self.generation,
        }
    }

    /// Who the caller is, beyond its project: its gateway token, or its
    /// OAuth issuer and subject; `None` for anonymous access. What a
    /// caller's own limits (its request rate, its scripts at once) count by.
    pub fn identity(&self) -> Option<String> {
        match (self.token_id, &self.issuer, &self.subject) {
            (Some(id), _, _) => Some(format!("token:{id}")),
            (None, Some(issuer), Some(subject)) => Some(format!("oauth:{issuer}#{subject}")),
            _ => None,
        }
    }
}

impl Credential {
    /// The token itself.
    pub fn expose(&self) -> &str {
        &self.token
    }

    /// Who issued it.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Credential(…)")
    }
}

/// Why a caller was refused. Unknown, revoked and mistyped tokens all read
/// as [`Error::Unauthorized`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No valid token.
    #[error(
        "unauthorized: a valid token is required (Authorization: Bearer <token>, _meta.token, or MCP_GATEWAY_TOKEN for stdio)"
    )]
    Unauthorized,
    /// `_meta.projectId` names another project than the token's.
    #[error("_meta.projectId '{}' is not the project of this token", leaks::quote(.0))]
    ProjectMismatch(String),
    /// An OAuth access token was refused.
    #[error(transparent)]
    OAuth(#[from] oauth::Error),
    /// A valid OAuth token whose subject and groups map to no project (default deny).
    #[error("subject '{subject}' of {issuer} maps to no project; an operator maps it in [[auth.oauth.projects]]")]
    NoProject {
        /// `sub`.
        subject: String,
        /// `iss`.
        issuer: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// Resolves callers against the store.
#[derive(Debug, Clone)]
pub struct Authenticator {
    store: Arc<Store>,
    /// `[auth]`, swapped whole on reload: who gets in follows the file at once.
    doors: Arc<ArcSwap<Doors>>,
    known: Arc<Mutex<known::Known>>,
}

/// Who gets in besides gateway tokens, as `[auth]` says.
#[derive(Debug, Default)]
pub struct Doors {
    /// The project callers without a token act as, if any.
    pub anonymous_project: Option<String>,
    /// The verifier of OAuth access tokens, if `[auth.oauth]` is configured.
    pub oauth: Option<Arc<Verifier>>,
}

impl Authenticator {
    /// `doors`: who gets in besides gateway tokens.
    pub fn new(store: Arc<Store>, doors: Doors) -> Self {
        Self {
            store,
            doors: Arc::new(ArcSwap::from_pointee(doors)),
            known: Arc::default(),
        }
    }

    /// Lets in whom `doors` says from the next request on (a reload).
    pub fn set_doors(&self, doors: Doors) {
        self.doors.store(Arc::new(doors));
    }

    /// The OAuth verifier, when `[auth.oauth]` is configured.
    pub fn oauth(&self) -> Option<Arc<Verifier>> {
        self.doors.load().oauth.clone()
    }

    /// The caller behind any token: OAuth access tokens are verified (which
    /// may fetch keys or introspect), gateway tokens and anonymous callers
    /// go to [`Authenticator::caller`].
    pub async fn authenticate(&self, token: Option<&str>, hint: Option<&str>) -> Result<Caller, Error> {
        let token = token.map(str::trim).filter(|t| !t.is_empty());
        let (Some(token), Some(verifier)) = (token, self.oauth()) else {
            return self.caller(token, hint);
        };
        if token.starts_with(GATEWAY_TOKEN_PREFIX) {
            return self.caller(Some(token), hint);
        }
        let identity = verifier.verify(token).await?;
        let project = verifier.project_for(&identity).ok_or_else(|| Error::NoProject {
            subject: identity.subject.clone(),
            issuer: identity.issuer.clone(),
        })?;
        let mut known = self.known()?;
        // A mapped project that does not exist is no project either (default deny).
        let project = self.project(&mut known, project)?.ok_or_else(|| Error::NoProject {
            subject: identity.subject.clone(),
            issuer: identity.issuer.clone(),
        })?;
        let mut caller = self.caller_of(&mut known, project, None)?;
        caller.credential = Some(Credential {
            token: token.into(),
            issuer: identity.issuer.as_str().into(),
        });
        caller.subject = Some(identity.subject);
        caller.issuer = Some(identity.issuer);
        check_hint(&caller, hint)?;
        Ok(caller)
    }

    /// Makes sure the anonymous project exists and has a decision for every
    /// configured server: servers never granted nor denied to it are granted,
    /// so a personal setup sees the servers it adds; an explicit deny stays.
    pub fn prepare_anonymous<'a>(&self, servers: impl IntoIterator<Item = &'a str>) -> Result<(), store::Error> {
        let doors = self.doors.load();
        let Some(name) = &doors.anonymous_project else {
            return Ok(());
        };
        if self.store.project(name)?.is_none() {
            self.store
                .create_project(name, Some(access::Search::for_new_projects()))?;
            tracing::debug!(project = %name, "created the anonymous project");
        }
        for server in servers {
            self.store.grant_if_undecided(name, server)?;
        }
        Ok(())
    }

    /// The caller behind `token` (or anonymous), checked against `hint`
    /// (`_meta.projectId`). Reads the store inline (see [`store`]):
    /// the access generation always, the rest when it moved.
    pub fn caller(&self, token: Option<&str>, hint: Option<&str>) -> Result<Caller, Error> {
        let token = token.map(str::trim).filter(|t| !t.is_empty());
        let mut known = self.known()?;
        let (project, token_id) = match token {
            Some(t) => {
                let key = known::token_key(t);
                let now = Instant::now();
                match known.token(&key, now) {
                    Some((id, project, due)) => {
                        if due {
                            self.store.record_token_use(id);
                        }
                        (project, Some(id))
                    }
                    None => match self.store.authenticate(t)? {
                        Some((id, project)) => {
                            known.remember_token(key, id, &project, now);
                            (project, Some(id))
                        }
                        None => return Err(Error::Unauthorized),
                    },
                }
            }
            None => match &self.doors.load().anonymous_project {
                Some(name) => (self.project(&mut known, name)?.ok_or(Error::Unauthorized)?, None),
                None => return Err(Error::Unauthorized),
            },
        };
        let caller = self.caller_of(&mut known, project, token_id)?;
        check_hint(&caller, hint)?;
        Ok(caller)
    }

    /// The caller an operator acts as with `--project` on the command line.
    pub fn caller_for_project(&self, name: &str) -> Result<Caller, store::Error> {
        let mut known = self.known()?;
        let project = self
            .project(&mut known, name)?
            .ok_or_else(|| store::Error::NoProject(name.to_string()))?;
        self.caller_of(&mut known, project, None)
    }

    /// What is known about callers, up to date with the store's generation.
    fn known(&self) -> Result<std::sync::MutexGuard<'_, known::Known>, store::Error> {
        let generation = self.store.access_generation()?;
        let mut known = self.known.lock().expect("known callers lock");
        known.follow(generation);
        Ok(known)
    }

    fn project(&self, known: &mut known::Known, name: &str) -> Result<Option<Project>, store::Error> {
        if let Some(p) = known.project(name) {
            return Ok(Some(p));
        }
        let project = self.store.project(name)?;
        if let Some(p) = &project {
            known.remember_project(p);
        }
        Ok(project)
    }

    fn caller_of(
        &self,
        known: &mut known::Known,
        project: Project,
        token_id: Option<i64>,
    ) -> Result<Caller, store::Error> {
        let grants = match known.grants(project.id) {
            Some(g) => g,
            None => {
                let g = Arc::new(Grants::from_permissions(self.store.permissions(project.id)?));
                known.remember_grants(project.id, g.clone());
                g
            }
        };
        Ok(Caller {
            project,
            token_id,
            grants,
            credential: None,
            subject: None,
            issuer: None,
            generation: known.generation(),
        })
    }

    /// Whether callers without a token get in.
    pub fn allows_anonymous(&self) -> bool {
        self.doors.load().anonymous_project.is_some()
    }
}

/// `_meta.projectId` may only narrow to the caller's own project (by name or id);
/// empty or `UNASSIGNED_PROJECT_ID` means none.
pub fn check_hint(caller: &Caller, hint: Option<&str>) -> Result<(), Error> {
    match hint
        .map(str::trim)
        .filter(|h| !h.is_empty() && *h != UNASSIGNED_PROJECT_ID)
    {
        Some(h) if h != caller.project.name && h != caller.project.id.to_string() => {
            Err(Error::ProjectMismatch(h.to_string()))
        }
        _ => Ok(()),
    }
}

/// The token of an `Authorization: Bearer …` header value.
pub fn bearer(header: &str) -> Option<&str> {
    let (scheme, token) = header.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
        .filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(anonymous: Option<&str>) -> (tempfile::TempDir, Arc<Store>, Authenticator) {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(&dir.path().join("a.db")).unwrap());
        let doors = Doors {
            anonymous_project: anonymous.map(str::to_string),
            oauth: None,
        };
        let auth = Authenticator::new(store.clone(), doors);
        (dir, store, auth)
    }

    #[test]
    fn tokens_hints_and_anonymous_access() {
        let (_d, store, auth) = setup(None);
        store.create_project("alpha", Some(access::Search::Bm25)).unwrap();
        store.create_project("beta", None).unwrap();
        let (_, token) = store.issue_token("alpha", "").unwrap();

        let c = auth.caller(Some(&token), None).unwrap();
        assert_eq!(c.project.name, "alpha");
        for hint in ["alpha", &c.project.id.to_string(), UNASSIGNED_PROJECT_ID, ""] {
            assert!(auth.caller(Some(&token), Some(hint)).is_ok(), "{hint}");
        }
        assert!(matches!(
            auth.caller(Some(&token), Some("beta")),
            Err(Error::ProjectMismatch(_))
        ));
        assert!(matches!(auth.caller(None, None), Err(Error::Unauthorized)));
        assert!(matches!(
            auth.caller(Some("mgw_1_wrong"), None),
            Err(Error::Unauthorized)
        ));
    }

    /// Callers are cached, yet a revocation or a grant made by another
    /// process sharing the store applies at the very next call.
    #[test]
    fn changes_from_another_process_apply_at_the_next_call() {
        let (dir, store, auth) = setup(None);
        store.create_project("alpha", Some(access::Search::Bm25)).unwrap();
        let (info, token) = store.issue_token("alpha", "").unwrap();
        let first = auth.caller(Some(&token), None).unwrap();
        assert!(!first.grants.allows("fs", "read"));
        assert_eq!(auth.caller(Some(&token), None).unwrap().generation, first.generation);

        let other = Store::open(&dir.path().join("a.db")).unwrap();
        other.set_permission("alpha", "fs", None, true).unwrap();
        let granted = auth.caller(Some(&token), None).unwrap();
        assert!(granted.grants.allows("fs", "read"));
        assert!(granted.generation > first.generation);

        other.revoke_token(info.id).unwrap();
        assert!(matches!(auth.caller(Some(&token), None), Err(Error::Unauthorized)));
    }

    #[test]
    fn the_anonymous_project_gets_every_undecided_server() {
        let (_d, store, auth) = setup(Some("local"));
        auth.prepare_anonymous(["a", "b"]).unwrap();
        store.set_permission("local", "b", None, false).unwrap();
        auth.prepare_anonymous(["a", "b", "c"]).unwrap();
        let c = auth.caller(None, None).unwrap();
        assert_eq!(c.token_id, None);
        assert!(c.grants.allows("a", "t") && c.grants.allows("c", "t"));
        assert!(!c.grants.allows("b", "t"), "an explicit deny survives restarts");
    }

    #[test]
    fn bearer_headers() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer  abc "), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("Bearer "), None);
    }
}
