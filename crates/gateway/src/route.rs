//! Routing, the call path's third step: which connection a caller's calls
//! to a server go through (the shared one, or for a stateless server its
//! least busy copy, or the project's own when it has credentials there), and
//! which credential travels with the call.

use std::sync::Arc;

use rmcp::model::JsonObject;

use super::{ExecuteError, Gateway};
use crate::auth::Caller;
use crate::vault;
use config::{Builtin, ServerConfig, Transport};

/// How long a call waits for its project's own connection to list.
const OWN_LISTING_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// What a caller of `project` is told when `server` takes only a
/// project's own credential and the project has none there.
pub(super) fn credential_required(server: &ServerConfig, project: &str) -> vault::Error {
    if !server.shared {
        // `shared = false` asks for the project's secrets.
        return vault::Error::SecretRequired {
            project: project.to_string(),
            server: server.name.clone(),
            flag: server.secret_flag(),
        };
    }
    // Else the server refused the gateway's own connection, and only a sign-in opens it.
    vault::Error::SignInRequired {
        project: project.to_string(),
        server: server.name.clone(),
        why: "the server takes only a project's own sign-in, and this project has none".into(),
    }
}

impl Gateway {
    /// The connection a caller's calls to `server` go through: the shared
    /// one, or the project's own (its credentials); the caller's credential
    /// goes into `meta` only for a server declared for its issuer.
    pub(super) async fn route(
        &self,
        caller: &Caller,
        server: &Arc<downstream::Downstream>,
        meta: &mut JsonObject,
    ) -> Result<Arc<downstream::Downstream>, ExecuteError> {
        // Invariant: a caller's token reaches only a server declared for its
        // issuer; a gateway token is never a credential, so it reaches none.
        let caller_token = caller
            .credential
            .as_ref()
            .filter(|c| server.config.caller_token_issuer() == Some(c.issuer()));
        let own = self
            .vault
            .for_server(&caller.project, &server.config, caller.generation)
            .await?;
        let target = match (&server.config.transport, own) {
            (_, None) => {
                server.drop_instance(caller.project.id);
                server.for_call()
            }
            // Index takes a bearer per call: the caller's own Index token, else the project's.
            (Transport::Builtin(Builtin::Index(_)), Some(own)) => {
                if caller_token.is_none()
                    && let Some(token) = vault::bearer(&own, &server.config.name).await?
                {
                    meta.insert(vocab::wire::CALLER_TOKEN_META.into(), token.into());
                }
                server.clone()
            }
            (Transport::Builtin(_), Some(_)) => server.clone(),
            (_, Some(own)) => {
                // A sign-in that needs the person again fails here, with the command to run.
                vault::fresh_token(&own, &server.config.name).await?;
                server.instance(own.as_ref().clone())?
            }
        };
        if let Some(credential) = caller_token {
            meta.insert(vocab::wire::CALLER_TOKEN_META.into(), credential.expose().into());
        }
        Ok(target)
    }

    /// For a server listed per project (it takes only projects' own
    /// credentials), makes sure the caller's project has its own listing:
    /// its connection is started, and waited for, if it has not listed yet.
    /// Without a credential there, the error that says how to give one.
    /// Any other server: nothing to do.
    pub(super) async fn own_listing(&self, caller: &Caller, server: &str) -> Result<(), ExecuteError> {
        let Some(server) = self.registry.get(server) else {
            return Ok(());
        };
        if server.state().status != downstream::Status::SignInRequired || !caller.grants.sees_server(server.name()) {
            return Ok(());
        }
        let own = self
            .vault
            .for_server(&caller.project, &server.config, caller.generation)
            .await?
            .ok_or_else(|| credential_required(&server.config, &caller.project.name))?;
        vault::fresh_token(&own, &server.config.name).await?;
        let instance = server.instance(own.as_ref().clone())?;
        let listed = async {
            instance.settled().await;
            // Counted while its state was written: the catalog has it once caught up.
            self.catalog.caught_up(self.registry.changed().count()).await;
        };
        let _ = tokio::time::timeout(server.config.connect_timeout + OWN_LISTING_GRACE, listed).await;
        Ok(())
    }
}
