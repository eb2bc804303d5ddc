//! Which connection a caller's calls to a server go through: the shared
//! one (or, for a stateless server, its least busy copy), or the project's
//! own when it has credentials there, and which credential travels with
//! the call.

use std::sync::Arc;

use rmcp::model::JsonObject;

use super::{ExecuteError, Gateway};
use crate::auth::Caller;
use crate::config::{Builtin, Transport};
use crate::downstream;
use crate::vault;

impl Gateway {
    /// The connection a caller's calls to `server` go through: the shared
    /// one, or the project's own (its credentials); the caller's credential
    /// goes into `meta` only for a server declared for its issuer.
    pub(super) async fn target(
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
                    meta.insert(crate::wire::CALLER_TOKEN_META.into(), token.into());
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
            meta.insert(crate::wire::CALLER_TOKEN_META.into(), credential.expose().into());
        }
        Ok(target)
    }
}
