//! The vault: per-project credentials for downstream servers, opened on
//! each call: headers and environment variables set with `mcp-gateway
//! secret`, and OAuth sign-ins made with `mcp-gateway login`, sealed in the
//! store ([`store::secrets`]; their rows and rules are [`credentials`]).
//!
//! On each call the [`Vault`] reads the calling project's rows for the
//! server (one indexed read) and opens them only when they changed since
//! last time, so a secret set, rotated or removed by another process takes
//! effect on the next call without a restart.

pub mod sign_in;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use config::ServerConfig;
use credentials::{CredentialKind, CredentialRows, SealedCredential, bearer_header, fingerprint, row_aad};
use downstream::ProjectCredential;
use store::access::Project;
use store::secrets::{self, Key};
use store::{self, Store};

/// Why a project's credential could not be used. Never carries a value.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The key is missing, malformed or not the one that sealed the values.
    #[error("project '{project}' has credentials for '{server}' that cannot be opened: {source}")]
    Sealed {
        /// The project.
        project: String,
        /// The server.
        server: String,
        /// Why.
        source: secrets::Error,
    },
    /// The store could not be read.
    #[error(transparent)]
    Store(#[from] store::Error),
    /// The OAuth sign-in needs the person again (refresh refused, expired, never made).
    #[error(
        "project '{project}' must sign in to '{server}' again ({why}); run `mcp-gateway login {server} --project {project}`"
    )]
    SignInRequired {
        /// The project.
        project: String,
        /// The server.
        server: String,
        /// What the authorization server said, in words.
        why: String,
    },
    /// A server with `shared = false`, and the project holds none of its secrets.
    #[error(
        "server '{server}' runs only with a project's own secrets (shared = false), and project '{project}' has none; set them with `mcp-gateway secret set --project {project} --server {server} {flag} NAME=-` (the comment above its entry in gateway.toml names them)"
    )]
    SecretRequired {
        /// The project.
        project: String,
        /// The server.
        server: String,
        /// `--env` for a command server, `--header` for a url server.
        flag: &'static str,
    },
    /// The sign-in could not be used for another reason (network, metadata).
    #[error("project '{project}''s sign-in to '{server}' cannot be used now: {reason}")]
    SignIn {
        /// The project.
        project: String,
        /// The server.
        server: String,
        /// Why.
        reason: String,
    },
}

/// Opened credentials, cached per (project, server): rows are read again
/// only when the store's access generation moved, and opened again only
/// when their fingerprint changed.
#[derive(Debug)]
pub struct Vault {
    store: Arc<Store>,
    key: OnceLock<Arc<Key>>,
    checked: Mutex<HashMap<(i64, String), Checked>>,
}

/// What a project holds for a server, as read at one access generation.
#[derive(Debug)]
struct Checked {
    generation: i64,
    credential: Option<Arc<ProjectCredential>>,
}

impl Vault {
    /// A vault over `store`; the key is read when a credential first needs it.
    pub fn new(store: Arc<Store>) -> Self {
        Self {
            store,
            key: OnceLock::new(),
            checked: Mutex::default(),
        }
    }

    /// The key that opens the store's credentials.
    pub fn key(&self) -> Result<Arc<Key>, secrets::Error> {
        if let Some(key) = self.key.get() {
            return Ok(key.clone());
        }
        let key = Arc::new(Key::require(self.store.key_home())?);
        Ok(self.key.get_or_init(|| key).clone())
    }

    /// The store's key, created on first need (sealing a credential, giving a task its id).
    pub fn key_or_create(&self) -> Result<Arc<Key>, secrets::Error> {
        if let Some(key) = self.key.get() {
            return Ok(key.clone());
        }
        let key = Arc::new(Key::find_or_create(self.store.key_home())?);
        Ok(self.key.get_or_init(|| key).clone())
    }

    /// Seals and stores one header or variable for `project` at `server`,
    /// creating the key file on the first one; the id of the key used.
    pub fn set(
        &self,
        project: &Project,
        server: &str,
        kind: CredentialKind,
        name: &str,
        value: &str,
    ) -> Result<String, Error> {
        let sealed_err = |source| Error::Sealed {
            project: project.name.clone(),
            server: server.to_string(),
            source,
        };
        let key = self.key_or_create().map_err(sealed_err)?;
        let sealed = key.seal(&row_aad(project.id, server, kind, name), value.as_bytes());
        self.store
            .put_credential(project.id, server, kind, name, key.id(), &sealed, true)?;
        Ok(key.id().to_string())
    }

    /// `project`'s own credential for `server`, or `None` when it has none
    /// and shares the server's configured connection. `generation` is the
    /// store's access generation the caller was resolved at.
    pub async fn for_server(
        &self,
        project: &Project,
        server: &ServerConfig,
        generation: i64,
    ) -> Result<Option<Arc<ProjectCredential>>, Error> {
        let cache_key = (project.id, server.name.clone());
        let previous = {
            let checked = self.checked.lock().expect("vault lock");
            match checked.get(&cache_key) {
                Some(c) if c.generation == generation => return Ok(c.credential.clone()),
                Some(c) => c.credential.clone(),
                None => None,
            }
        };
        let rows = self.store.credentials(project.id, &server.name)?;
        let credential = if rows.is_empty() {
            None
        } else {
            let fingerprint = fingerprint(&rows);
            match previous {
                Some(open) if open.fingerprint == fingerprint => Some(open),
                _ => Some(Arc::new(self.open(project, server, &rows, fingerprint).await?)),
            }
        };
        self.checked.lock().expect("vault lock").insert(
            cache_key,
            Checked {
                generation,
                credential: credential.clone(),
            },
        );
        Ok(credential)
    }

    async fn open(
        &self,
        project: &Project,
        server: &ServerConfig,
        rows: &[SealedCredential],
        fingerprint: String,
    ) -> Result<ProjectCredential, Error> {
        let sealed_err = |source| Error::Sealed {
            project: project.name.clone(),
            server: server.name.clone(),
            source,
        };
        let key = self.key().map_err(sealed_err)?;
        let mut headers = BTreeMap::new();
        let mut env = BTreeMap::new();
        let mut sign_in = None;
        for row in rows {
            match row.kind {
                CredentialKind::OAuth => {
                    let client = sign_in::client(&self.store, key.clone(), project, server)
                        .await
                        .map_err(|e| sign_in::explain(e, &project.name, &server.name))?;
                    sign_in = Some(client);
                }
                kind => {
                    let aad = row_aad(project.id, &server.name, kind, &row.name);
                    let value = key.open(&row.key_id, &aad, &row.sealed).map_err(sealed_err)?;
                    let value = String::from_utf8(value).map_err(|_| sealed_err(secrets::Error::Corrupt))?;
                    let into = if kind == CredentialKind::Env {
                        &mut env
                    } else {
                        &mut headers
                    };
                    into.insert(row.name.clone(), value);
                }
            }
        }
        Ok(ProjectCredential {
            project_id: project.id,
            project: project.name.clone(),
            headers,
            env,
            sign_in,
            fingerprint,
        })
    }
}

/// How often servers waiting for projects' credentials are checked for a project not listed yet.
const LISTING_CHECK: std::time::Duration = std::time::Duration::from_secs(2);

/// Keeps servers that take only projects' own credentials listed for each
/// such project (see [`list_for_projects`]), checking every
/// [`LISTING_CHECK`] until `ct` is cancelled.
pub async fn list_through_projects(
    registry: Arc<downstream::Registry>,
    vault: Arc<Vault>,
    ct: tokio_util::sync::CancellationToken,
) {
    let mut tick = tokio::time::interval(LISTING_CHECK);
    loop {
        tokio::select! {
            _ = tick.tick() => list_for_projects(&registry, &vault).await,
            _ = ct.cancelled() => return,
        }
    }
}

/// For each server that takes only projects' own credentials (a sign-in,
/// or `shared = false`), connects every project holding one that has no
/// connection with it yet (new, or set anew), stops those of projects that
/// hold none now, and waits until each started one has listed or failed:
/// its listing is that project's alone (the catalog's per-project
/// snapshots). A connection that failed is tried again by its project's
/// next call.
pub async fn list_for_projects(registry: &downstream::Registry, vault: &Vault) {
    let mut started = Vec::new();
    for server in registry.servers() {
        if server.state().status != downstream::Status::SignInRequired {
            continue;
        }
        let projects = match vault.store.projects_with_credentials(server.name()) {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(server = %server.name(), error = %e, "cannot read which projects hold credentials");
                continue;
            }
        };
        let Ok(generation) = vault.store.access_generation() else {
            continue;
        };
        server.keep_instances_of(&projects.iter().map(|p| p.id).collect::<Vec<_>>());
        for project in &projects {
            let opened = vault.for_server(project, &server.config, generation).await;
            let fresh = |own: &Arc<ProjectCredential>| !server.has_instance_with(project.id, &own.fingerprint);
            match opened.map(|o| o.filter(fresh).map(|own| server.instance(own.as_ref().clone()))) {
                Ok(Some(Ok(instance))) => started.push(instance),
                Ok(None) => {}
                Ok(Some(Err(e))) => {
                    // Past `max_instances`: the next check, once one went idle.
                    tracing::debug!(server = %server.name(), project = %project.name, error = %e, "not listed for this project yet");
                    break;
                }
                Err(e) => {
                    tracing::debug!(server = %server.name(), project = %project.name, error = %e, "cannot list tools for this project");
                }
            }
        }
    }
    futures::future::join_all(started.iter().map(|i| i.settled())).await;
}

/// The bearer token `credential` holds for a server that takes one rather
/// than a connection (the Index built-in): the sign-in's access token,
/// refreshed when due, else an `Authorization: Bearer …` secret.
pub async fn bearer(credential: &ProjectCredential, server: &str) -> Result<Option<String>, Error> {
    if let Some(token) = fresh_token(credential, server).await? {
        return Ok(Some(token));
    }
    Ok(bearer_header(&credential.headers).map(str::to_string))
}

/// The sign-in's access token, refreshed first when it is about to expire;
/// `None` without a sign-in. A refused refresh names the command to run.
pub async fn fresh_token(credential: &ProjectCredential, server: &str) -> Result<Option<String>, Error> {
    let Some(client) = &credential.sign_in else {
        return Ok(None);
    };
    let project = &credential.project;
    client
        .get_access_token()
        .await
        .map(Some)
        .map_err(|e| sign_in::explain(e, project, server))
}
