//! Resources, prompts and completions pass through: each running server the
//! caller was granted whole is asked, and what they answer comes back under
//! names that say which server it belongs to (`mcp-gateway://SERVER/…` for
//! a URI two servers share, `server:prompt` for prompts); a completion goes
//! to the server of its prompt or resource template. A grant of some of a
//! server's tools opens those tools' Apps and nothing else of it.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::RoleServer;
use rmcp::model::{
    CacheScope, CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse, JsonObject,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams,
    ReadResourceResponse, Reference, ResourceContents, ResultType,
};
use rmcp::service::RequestContext;
use tracing::warn;

use super::errors::{
    ambiguous_prompt, auth_error, blocked_meta, downstream_error, too_long, unknown_prompt, unknown_reference,
    unknown_resource, unknown_template,
};
use super::hop::{client_has_mcp_apps, forwardable_meta};
use super::{SHARED_URI_PREFIX, Upstream};
use downstream::Downstream;
use gateway::auth::Caller;
use vocab::uris;
use vocab::wire::{MAX_COMPLETION_BYTES, MAX_TOOL_KEY_BYTES, MAX_URI_BYTES, bounded, split_key};

impl Upstream {
    pub(super) async fn resources_for(
        &self,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let caller = self.caller(ctx).await.map_err(auth_error)?;
        let listed = self
            .listed_by_each(&caller, "resources/list", |s| async move { s.list_resources().await })
            .await;
        let mut owners: HashMap<&str, usize> = HashMap::new();
        for (_, resources) in &listed {
            for r in resources {
                *owners.entry(r.uri.as_str()).or_default() += 1;
            }
        }
        let shared: std::collections::HashSet<String> = owners
            .into_iter()
            .filter(|(_, n)| *n > 1)
            .map(|(u, _)| u.to_string())
            .collect();
        let mut routes = HashMap::new();
        let mut all = Vec::new();
        // Skills' files are always in their server's namespace, as skills/list
        // shows them; Apps where tools are listed directly (Apps on the meta
        // exposure too, unless unlisted: elsewhere a host reads the URI a tool
        // result names, as its server gave it).
        let apps_namespaced = caller.project.names_tools();
        for (server, resources) in listed {
            for mut r in resources {
                // A URI in the gateway's namespace is the server's own too: read from it.
                let claimed = uris::origin(&r.uri).is_some();
                let namespaced = uris::scoped(&server, &r.uri)
                    .filter(|_| apps_namespaced || claimed || r.uri.starts_with("skill://"));
                if let Some(namespaced) = namespaced {
                    r.uri = namespaced;
                } else if shared.contains(&r.uri) {
                    r.uri = format!("{SHARED_URI_PREFIX}{server}/{}", r.uri);
                } else {
                    routes.insert(r.uri.clone(), server.clone());
                }
                all.push(r);
            }
        }
        self.routes.write().expect("routes lock").extend(routes);
        Ok(ListResourcesResult::with_all_items(all))
    }

    pub(super) async fn resource_templates_for(
        &self,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let caller = self.caller(ctx).await.map_err(auth_error)?;
        let listed = self
            .listed_by_each(&caller, "resources/templates/list", |s| async move {
                s.list_resource_templates().await
            })
            .await;
        Ok(ListResourceTemplatesResult::with_all_items(
            listed.into_iter().flat_map(|(_, templates)| templates).collect(),
        ))
    }

    pub(super) async fn read_for(
        &self,
        mut request: ReadResourceRequestParams,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let caller = self.caller(ctx).await.map_err(auth_error)?;
        let mut meta = forwardable_meta(&ctx.meta).unwrap_or_default();
        if let Some(apps) = client_has_mcp_apps(ctx) {
            meta.insert(vocab::wire::MCP_APPS_META.into(), apps.into());
        }
        let (readers, served) = self.readers_of(&caller, &request.uri).await?;
        let client_uri = std::mem::replace(&mut request.uri, served.clone());
        let mut last = unknown_resource(&client_uri);
        let mut found = None;
        for server in readers {
            let mut request = request.clone();
            request.meta = self.screened_meta(&caller, &server, &meta)?.map(Into::into);
            match server.read_resource(request).await {
                Ok(r) => {
                    found = Some((server, r));
                    break;
                }
                // Not this server's after all: the next that may have it.
                Err(downstream::Error::Protocol { .. }) => {}
                Err(e) => last = downstream_error(e),
            }
        }
        let (server, mut response) = found.ok_or(last)?;
        if let ReadResourceResponse::Complete(ref mut r) = response {
            // Contents carry the URI they answer: the one the client asked for.
            for contents in &mut r.contents {
                if let ResourceContents::TextResourceContents { uri, .. }
                | ResourceContents::BlobResourceContents { uri, .. } = contents
                    && *uri == served
                {
                    uri.clone_from(&client_uri);
                }
            }
            self.gateway
                .security()
                .screen_resource(&caller.project.name, &server.config, &mut r.contents);
            r.result_type.get_or_insert(ResultType::COMPLETE);
            // Which server answers, and with whose credential, depends on the
            // caller: a downstream's "public" does not hold for this answer.
            r.cache_scope = Some(CacheScope::Private);
        }
        Ok(response)
    }

    /// The servers a read of (or subscription to) `uri` may go to, in the
    /// order to ask them, and the URI they know it by: the one its
    /// namespace or the caller's listing names; else a server one of the
    /// caller's App tools names it for, or whose listing has it, or one of
    /// whose templates it instantiates. Never any other: a URI is the
    /// caller's, and may carry what only its own server should see.
    pub(super) async fn readers_of(
        &self,
        caller: &Caller,
        uri: &str,
    ) -> Result<(Vec<Arc<Downstream>>, String), ErrorData> {
        let (owner, served) = self.resource_owner(caller, uri)?;
        if let Some(owner) = owner {
            return Ok((vec![owner], served));
        }
        let registry = self.gateway.registry();
        let app = self
            .gateway
            .catalog()
            .view_of(caller)
            .app_server(uri)
            .and_then(|s| registry.get(s));
        if let Some(app) = app {
            return Ok((vec![app], served));
        }
        let (resources, templates) = futures::future::join(
            self.listed_by_each(caller, "resources/list", |s| async move { s.list_resources().await }),
            self.listed_by_each(caller, "resources/templates/list", |s| async move {
                s.list_resource_templates().await
            }),
        )
        .await;
        let listing: HashMap<String, bool> = resources
            .into_iter()
            .map(|(server, listed)| (server, listed.iter().any(|r| r.uri == uri)))
            .collect();
        let readers = templates
            .into_iter()
            .filter(|(server, templates)| {
                listing.get(server).copied().unwrap_or(false)
                    || templates.iter().any(|t| uris::matches_template(&t.uri_template, uri))
            })
            .filter_map(|(server, _)| registry.get(&server))
            .collect::<Vec<_>>();
        if readers.is_empty() {
            return Err(unknown_resource(uri));
        }
        Ok((readers, served))
    }

    /// The caller's `_meta` for `server`, screened for credentials as the
    /// arguments of a call to it are.
    fn screened_meta(
        &self,
        caller: &Caller,
        server: &Downstream,
        meta: &JsonObject,
    ) -> Result<Option<JsonObject>, ErrorData> {
        if meta.is_empty() {
            return Ok(None);
        }
        let mut meta = meta.clone();
        self.gateway
            .security()
            .screen_meta(&caller.project.name, &server.config, server.name(), &mut meta)
            .map_err(blocked_meta)?;
        Ok(Some(meta))
    }

    pub(super) async fn prompts_for(&self, ctx: &RequestContext<RoleServer>) -> Result<ListPromptsResult, ErrorData> {
        let caller = self.caller(ctx).await.map_err(auth_error)?;
        let listed = self
            .listed_by_each(&caller, "prompts/list", |s| async move { s.list_prompts().await })
            .await;
        let prompts = listed.into_iter().flat_map(|(server, prompts)| {
            prompts.into_iter().map(move |mut p| {
                p.name = vocab::keys::ToolKey::new(&server, &p.name).to_string();
                p
            })
        });
        Ok(ListPromptsResult::with_all_items(prompts.collect()))
    }

    pub(super) async fn prompt_for(
        &self,
        mut request: GetPromptRequestParams,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let caller = self.caller(ctx).await.map_err(auth_error)?;
        let (server, prompt) = self.prompt_owner(&caller, &request.name).await?;
        request.name = prompt;
        let meta = forwardable_meta(&ctx.meta).unwrap_or_default();
        request.meta = self.screened_meta(&caller, &server, &meta)?.map(Into::into);
        let mut response = server.get_prompt(request).await.map_err(downstream_error)?;
        // A 2025 server's answer has no result type, which a 2026-07-28 client requires.
        if let GetPromptResponse::Complete(r) = &mut response {
            r.result_type.get_or_insert(ResultType::COMPLETE);
        }
        Ok(response)
    }

    /// `completion/complete`: asked of the server of the prompt or resource
    /// template it names, as that server knows the prompt.
    pub(super) async fn complete_for(
        &self,
        mut request: CompleteRequestParams,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let caller = self.caller(ctx).await.map_err(auth_error)?;
        let typed = [
            ("argument.name", &request.argument.name),
            ("argument.value", &request.argument.value),
        ];
        let context = request.context.iter().flat_map(|c| c.arguments.iter().flatten());
        for (field, text) in typed.into_iter().chain(context.map(|(_, v)| ("context.arguments", v))) {
            bounded(field, text, MAX_COMPLETION_BYTES).map_err(too_long)?;
        }
        let server = match &mut request.r#ref {
            Reference::Prompt(prompt) => {
                let (server, name) = self.prompt_owner(&caller, &prompt.name).await?;
                prompt.name = name;
                server
            }
            Reference::Resource(template) => self.template_owner(&caller, &template.uri).await?,
            _ => {
                return Err(unknown_reference());
            }
        };
        let meta = forwardable_meta(&ctx.meta).unwrap_or_default();
        request.meta = self.screened_meta(&caller, &server, &meta)?.map(Into::into);
        let mut result = server.complete(request).await.map_err(downstream_error)?;
        result.result_type.get_or_insert(ResultType::COMPLETE);
        Ok(result)
    }

    /// The server of a prompt the caller names, and the name it knows it by:
    /// `server:prompt`, or a bare name exactly one of the caller's servers has.
    async fn prompt_owner(&self, caller: &Caller, name: &str) -> Result<(Arc<Downstream>, String), ErrorData> {
        // A prompt's name is `server:prompt`, a key like a tool's.
        bounded("name", name, MAX_TOOL_KEY_BYTES).map_err(too_long)?;
        let prefixed = split_key(name).and_then(|(server, prompt)| {
            let server = self.gateway.registry().get(server)?;
            Some((server, prompt.to_string()))
        });
        let (server, prompt) = match prefixed {
            Some(found) => found,
            // A name without its server prefix is accepted when exactly one server has it.
            None => {
                let running = self.running_for(caller);
                let listed = futures::future::join_all(running.iter().map(|s| s.list_prompts())).await;
                let mut owners = running
                    .into_iter()
                    .zip(listed)
                    .filter(|(_, prompts)| prompts.as_ref().is_ok_and(|ps| ps.iter().any(|p| p.name == name)));
                match (owners.next(), owners.next()) {
                    (Some((server, _)), None) => (server, name.to_string()),
                    (Some(_), Some(_)) => return Err(ambiguous_prompt(name)),
                    _ => return Err(unknown_prompt(name)),
                }
            }
        };
        if !caller.grants.opens_server(server.name()) {
            return Err(unknown_prompt(name));
        }
        Ok((server, prompt))
    }

    /// The first of the caller's servers that lists the resource template `uri`.
    async fn template_owner(&self, caller: &Caller, uri: &str) -> Result<Arc<Downstream>, ErrorData> {
        bounded("uri", uri, MAX_URI_BYTES).map_err(too_long)?;
        let running = self.running_for(caller);
        let listed = futures::future::join_all(running.iter().map(|s| s.list_resource_templates())).await;
        running
            .into_iter()
            .zip(listed)
            .find(|(_, templates)| {
                templates
                    .as_ref()
                    .is_ok_and(|ts| ts.iter().any(|t| t.uri_template == uri))
            })
            .map(|(server, _)| server)
            .ok_or_else(|| unknown_template(uri))
    }

    /// The server behind a resource URI as the client knows it, by its
    /// namespace (`mcp-gateway://SERVER/`, or `uris.rs` for Apps and skills)
    /// or the last listing, and the URI that server knows; no server
    /// when neither says. A resource the caller may not read (its server
    /// not granted whole, and no App of a tool it may use) is an unknown
    /// resource, not one to ask every server about; a URI longer than
    /// `MAX_URI_BYTES` is refused before anything reads it (every read,
    /// subscription and unsubscription asks here first).
    pub(super) fn resource_owner(
        &self,
        caller: &Caller,
        uri: &str,
    ) -> Result<(Option<Arc<Downstream>>, String), ErrorData> {
        bounded("uri", uri, MAX_URI_BYTES).map_err(too_long)?;
        let registry = self.gateway.registry();
        let view = self.gateway.catalog().view_of(caller);
        let named = match uri.strip_prefix(SHARED_URI_PREFIX) {
            Some(rest) => rest
                .split_once('/')
                .map(|(server, original)| (server, original.to_string())),
            None => uris::origin(uri),
        };
        let Some((server, original)) = named else {
            let owner = self.routes.read().expect("routes lock").get(uri).cloned();
            let owner = owner.and_then(|s| registry.get(&s));
            return Ok((owner.filter(|s| view.opens_resource(s.name(), uri)), uri.to_string()));
        };
        match registry
            .get(server)
            .filter(|s| view.opens_resource(s.name(), &original))
        {
            Some(owner) => Ok((Some(owner), original)),
            None => Err(unknown_resource(uri)),
        }
    }

    /// What `list` gives of each running server the caller may open, by
    /// server name; a server whose list fails (logged) adds nothing and
    /// hides nothing of the others.
    pub(super) async fn listed_by_each<T, Fut>(
        &self,
        caller: &Caller,
        what: &'static str,
        list: impl Fn(Arc<Downstream>) -> Fut,
    ) -> Vec<(String, Vec<T>)>
    where
        Fut: Future<Output = Result<Vec<T>, downstream::Error>>,
    {
        self.gateway.wait_for_starting(&caller.grants, None).await;
        let servers = self.running_for(caller);
        let listed = futures::future::join_all(servers.iter().cloned().map(list)).await;
        servers
            .iter()
            .zip(listed)
            .map(|(server, listed)| {
                let items = listed.unwrap_or_else(|e| {
                    warn!(server = %server.name(), error = %e, list = what, "a server's list failed");
                    Vec::new()
                });
                (server.name().to_string(), items)
            })
            .collect()
    }

    /// Running servers the caller was granted whole: those whose
    /// resources, templates, prompts and skills it may see.
    pub(super) fn running_for(&self, caller: &Caller) -> Vec<Arc<Downstream>> {
        let mut servers = self.gateway.registry().servers();
        servers.retain(|s| caller.grants.opens_server(s.name()) && s.state().peer.is_some());
        servers
    }
}
