//! Admin tokens (they open the operator console) and the record of what
//! operators changed. An admin token belongs to no project: `/mcp` refuses
//! it, and the console refuses project tokens.

use super::sql::{Row, args};
use serde::Serialize;

use super::{Error, Store, constant_time_eq, now, sha256, use_is_stale};

/// Prefix of every admin token (`mgwa_<id>_<secret>`), distinct from project tokens.
pub const ADMIN_TOKEN_PREFIX: &str = "mgwa_";

/// An admin token's metadata (never its secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdminTokenInfo {
    /// Row id; part of the token text.
    pub id: i64,
    /// A note for people.
    pub label: String,
    /// ISO 8601.
    pub created_at: String,
    /// ISO 8601, updated at most once a minute.
    pub last_used_at: Option<String>,
    /// ISO 8601 when revoked.
    pub revoked_at: Option<String>,
}

/// One operator action, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdminAction {
    /// ISO 8601.
    pub at: String,
    /// `cli`, `admin-token:<id>` or `oauth:<issuer>#<subject>`.
    pub actor: String,
    /// What was done (`grant`, `token.issue`...).
    pub action: String,
    /// On what (`project p, server s`).
    pub target: String,
    /// More, when there is more (never a secret).
    pub detail: Option<String>,
}

fn admin_token_row(r: &Row) -> Result<AdminTokenInfo, Error> {
    Ok(AdminTokenInfo {
        id: r.get(0)?,
        label: r.get(1)?,
        created_at: r.get(2)?,
        last_used_at: r.get(3)?,
        revoked_at: r.get(4)?,
    })
}

/// Splits `mgwa_<id>_<secret>`.
fn parse_admin_token(token: &str) -> Option<(i64, &str)> {
    let (id, secret) = token.strip_prefix(ADMIN_TOKEN_PREFIX)?.split_once('_')?;
    Some((id.parse().ok()?, secret))
}

impl Store {
    /// Issues an admin token; the returned secret is shown once and stored only as a hash.
    pub fn issue_admin_token(&self, label: &str) -> Result<(AdminTokenInfo, String), Error> {
        let secret = self.new_secret()?;
        let info = self.with(|c| {
            c.one(
                "INSERT INTO admin_tokens (label, secret_hash) VALUES (?1, ?2)
                 RETURNING id, label, created_at, last_used_at, revoked_at",
                args![label, sha256(&secret).as_slice()],
                admin_token_row,
            )
        })?;
        let id = info.id;
        Ok((info, format!("{ADMIN_TOKEN_PREFIX}{id}_{secret}")))
    }

    /// Every admin token, oldest first.
    pub fn admin_tokens(&self) -> Result<Vec<AdminTokenInfo>, Error> {
        self.with(|c| {
            c.all(
                "SELECT id, label, created_at, last_used_at, revoked_at FROM admin_tokens ORDER BY id",
                &[],
                admin_token_row,
            )
        })
    }

    /// Revokes an admin token; false when there is no such live token.
    pub fn revoke_admin_token(&self, id: i64) -> Result<bool, Error> {
        let n = self.with(|c| {
            c.execute(
                "UPDATE admin_tokens SET revoked_at = ?1 WHERE id = ?2 AND revoked_at IS NULL",
                args![now(), id],
            )
        })?;
        Ok(n == 1)
    }

    /// The id of the live admin token `token`, or `None` (unknown, revoked,
    /// mistyped or a project token: indistinguishable, compared in constant time).
    pub fn authenticate_admin(&self, token: &str) -> Result<Option<i64>, Error> {
        let (id, secret) = parse_admin_token(token).unwrap_or((-1, token));
        let presented = sha256(secret);
        let stored: Option<(Vec<u8>, Option<String>)> = self.with(|c| {
            c.row(
                "SELECT secret_hash, last_used_at FROM admin_tokens WHERE id = ?1 AND revoked_at IS NULL",
                args![id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
        })?;
        let matches = constant_time_eq(&presented, stored.as_ref().map_or(&[0u8; 32][..], |(hash, _)| hash));
        let Some((_, last_used)) = stored.filter(|_| matches) else {
            return Ok(None);
        };
        if use_is_stale(last_used.as_deref()) {
            self.with(|c| {
                c.execute(
                    "UPDATE admin_tokens SET last_used_at = ?1 WHERE id = ?2",
                    args![now(), id],
                )
            })?;
        }
        Ok(Some(id))
    }

    /// Whether admin token `id` is still live (a console session re-checks it per request).
    pub fn admin_token_live(&self, id: i64) -> Result<bool, Error> {
        self.with(|c| {
            c.row(
                "SELECT 1 FROM admin_tokens WHERE id = ?1 AND revoked_at IS NULL",
                args![id],
                |_| Ok(()),
            )
        })
        .map(|row| row.is_some())
    }

    /// Records an operator's action.
    pub fn record_admin_action(
        &self,
        actor: &str,
        action: &str,
        target: &str,
        detail: Option<&str>,
    ) -> Result<(), Error> {
        self.with(|c| {
            c.execute(
                "INSERT INTO admin_actions (actor, action, target, detail) VALUES (?1, ?2, ?3, ?4)",
                args![actor, action, target, detail],
            )
        })?;
        Ok(())
    }

    /// The newest operator actions, newest first.
    pub fn admin_actions(&self, limit: usize) -> Result<Vec<AdminAction>, Error> {
        self.with(|c| {
            c.all(
                "SELECT at, actor, action, target, detail FROM admin_actions ORDER BY id DESC LIMIT ?1",
                args![limit],
                |r| {
                    Ok(AdminAction {
                        at: r.get(0)?,
                        actor: r.get(1)?,
                        action: r.get(2)?,
                        target: r.get(3)?,
                        detail: r.get(4)?,
                    })
                },
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::each_engine!(admin_tokens_open_only_while_live_and_are_not_project_tokens);
    fn admin_tokens_open_only_while_live_and_are_not_project_tokens((_dir, s): crate::TestStore) {
        let (info, secret) = s.issue_admin_token("ops").unwrap();
        assert!(secret.starts_with(ADMIN_TOKEN_PREFIX));
        assert_eq!(s.authenticate_admin(&secret).unwrap(), Some(info.id));
        assert_eq!(s.authenticate_admin(&format!("{secret}x")).unwrap(), None);
        assert_eq!(
            s.authenticate(&secret).unwrap(),
            None,
            "an admin token is no project token"
        );
        s.create_project("p", None).unwrap();
        let (_, project_token) = s.issue_token("p", "").unwrap();
        assert_eq!(s.authenticate_admin(&project_token).unwrap(), None);
        assert!(s.revoke_admin_token(info.id).unwrap());
        assert!(!s.admin_token_live(info.id).unwrap());
        assert_eq!(s.authenticate_admin(&secret).unwrap(), None);
        assert!(s.admin_tokens().unwrap()[0].revoked_at.is_some());
    }

    crate::each_engine!(actions_are_kept_newest_first);
    fn actions_are_kept_newest_first((_dir, s): crate::TestStore) {
        s.record_admin_action("cli", "grant", "project p, server a", None)
            .unwrap();
        s.record_admin_action("admin-token:1", "token.revoke", "token #3", Some("x"))
            .unwrap();
        let actions = s.admin_actions(10).unwrap();
        assert_eq!(actions.len(), 2);
        assert_eq!(actions[0].action, "token.revoke");
        assert_eq!(actions[1].actor, "cli");
    }
}
