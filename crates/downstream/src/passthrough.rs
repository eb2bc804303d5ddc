//! Everything but `tools/call` that a caller reaches through a server:
//! its tasks, resources and their subscriptions, prompts and skills, each
//! bounded by the server's timeout like a call.

use rmcp::RoleClient;
use rmcp::model::{
    CancelTaskParams, CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
    GetSkillRequestParams, GetSkillResult, GetTaskParams, GetTaskResult, InputResponses, Prompt, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, Resource, ResourceTemplate, ServerNotification, Skill,
    SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::Peer;
use tokio_util::sync::CancellationToken;

use super::{Downstream, Error};

impl Downstream {
    /// `tasks/get` of one of this server's tasks.
    pub async fn get_task(&self, task_id: &str) -> Result<GetTaskResult, Error> {
        let peer = self.ready_peer().await?;
        self.bounded(task_id, peer.get_task(GetTaskParams::new(task_id))).await
    }

    /// `tasks/update`: answers to a task's input requests.
    pub async fn update_task(&self, task_id: &str, responses: InputResponses) -> Result<(), Error> {
        let peer = self.ready_peer().await?;
        self.bounded(task_id, peer.update_task(UpdateTaskParams::new(task_id, responses)))
            .await
    }

    /// `tasks/cancel`.
    pub async fn cancel_task(&self, task_id: &str) -> Result<(), Error> {
        let peer = self.ready_peer().await?;
        self.bounded(task_id, peer.cancel_task(CancelTaskParams::new(task_id)))
            .await
    }

    /// Reads a resource from this server.
    pub async fn read_resource(&self, params: ReadResourceRequestParams) -> Result<ReadResourceResponse, Error> {
        let peer = self.ready_peer().await?;
        let uri = params.uri.clone();
        self.bounded(&uri, peer.read_resource_once(params)).await
    }

    /// Subscribes to updates of `uri`, which then arrive on
    /// [`Downstream::resource_updates`]: `resources/subscribe` before
    /// 2026-07-28, a `subscriptions/listen` stream of its own from then on.
    pub async fn subscribe(&self, uri: &str) -> Result<(), Error> {
        let peer = self.ready_peer().await?;
        if !self.stateless() {
            #[allow(deprecated)]
            let call = peer.subscribe(SubscribeRequestParams::new(uri));
            return self.bounded(uri, call).await;
        }
        let filter = SubscriptionFilter::builder().resource_subscription(uri).build();
        let mut stream = self.bounded(uri, peer.listen(filter)).await?;
        if !stream
            .acknowledged()
            .resource_subscriptions
            .as_ref()
            .is_some_and(|uris| uris.iter().any(|u| u == uri))
        {
            return Err(Error::Other {
                server: self.name().to_string(),
                message: format!("it does not offer updates of '{uri}'"),
            });
        }
        let stop = CancellationToken::new();
        let updates = self.resource_updates.clone();
        let until = stop.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    next = stream.next() => match next {
                        Ok(Some(ServerNotification::ResourceUpdatedNotification(n))) => { let _ = updates.send(n.params.uri); }
                        Ok(Some(_)) => {}
                        _ => return,
                    },
                    _ = until.cancelled() => return,
                }
            }
        });
        let mut listens = self.listens.lock().expect("listens lock");
        listens.insert(uri.to_string(), stop.drop_guard());
        Ok(())
    }

    /// Ends a subscription made with [`Downstream::subscribe`].
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), Error> {
        if self.listens.lock().expect("listens lock").remove(uri).is_some() {
            return Ok(()); // dropping the guard ended its stream
        }
        let peer = self.ready_peer().await?;
        #[allow(deprecated)]
        let call = peer.unsubscribe(UnsubscribeRequestParams::new(uri));
        self.bounded(uri, call).await
    }

    /// Whether the connection speaks 2026-07-28 or later (no `initialize`, subscriptions by stream).
    pub(super) fn stateless(&self) -> bool {
        self.state
            .borrow()
            .protocol
            .as_deref()
            .is_some_and(|p| p >= ProtocolVersion::V_2026_07_28.as_str())
    }

    /// URIs this server reports as updated, from now on.
    pub fn resource_updates(&self) -> tokio::sync::broadcast::Receiver<String> {
        self.resource_updates.subscribe()
    }

    /// Gets a prompt from this server.
    pub async fn get_prompt(&self, params: GetPromptRequestParams) -> Result<GetPromptResponse, Error> {
        let peer = self.ready_peer().await?;
        let name = params.name.clone();
        self.bounded(&name, peer.get_prompt_once(params)).await
    }

    /// `completion/complete` of one of its prompts' or templates' arguments;
    /// no suggestions from a server that does not offer completions.
    pub async fn complete(&self, params: CompleteRequestParams) -> Result<CompleteResult, Error> {
        let peer = self.ready_peer().await?;
        if peer.peer_info().is_none_or(|i| i.capabilities.completions.is_none()) {
            return Ok(CompleteResult::default());
        }
        let what = params.argument.name.clone();
        self.bounded(&what, peer.complete(params)).await
    }

    /// Lists resources, or nothing when the server has none or is down.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, Error> {
        let peer = self.ready_peer().await?;
        if !advertises(&peer, |c| c.resources.is_some()) {
            return Ok(Vec::new());
        }
        self.bounded("resources/list", peer.list_all_resources()).await
    }

    /// Lists skills (the Skills extension), or none when the server serves none.
    pub async fn list_skills(&self) -> Result<Vec<Skill>, Error> {
        let peer = self.ready_peer().await?;
        if !peer.peer_info().is_some_and(|i| i.capabilities.supports_skills()) {
            return Ok(Vec::new());
        }
        self.bounded("skills/list", peer.list_all_skills()).await
    }

    /// `skills/get`.
    pub async fn get_skill(&self, uri: &str) -> Result<GetSkillResult, Error> {
        let peer = self.ready_peer().await?;
        self.bounded(uri, peer.get_skill(GetSkillRequestParams::new(uri))).await
    }

    /// Lists resource templates.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, Error> {
        let peer = self.ready_peer().await?;
        if !advertises(&peer, |c| c.resources.is_some()) {
            return Ok(Vec::new());
        }
        self.bounded("resources/templates/list", peer.list_all_resource_templates())
            .await
    }

    /// Lists prompts.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, Error> {
        let peer = self.ready_peer().await?;
        if !advertises(&peer, |c| c.prompts.is_some()) {
            return Ok(Vec::new());
        }
        self.bounded("prompts/list", peer.list_all_prompts()).await
    }
}

fn advertises(peer: &Peer<RoleClient>, has: impl Fn(&rmcp::model::ServerCapabilities) -> bool) -> bool {
    // A server that never told us its capabilities gets the benefit of the doubt.
    peer.peer_info().is_none_or(|info| has(&info.capabilities))
}
