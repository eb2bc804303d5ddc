//! The catalog's snapshots, built from the registry's listings: each
//! listing reviewed once (pins, scanning), then shaped by the rules and
//! overrides for every project, and for each project with overrides or
//! listings of its own (a server without a shared connection is listed per
//! project).

use std::collections::HashMap;
use std::sync::Arc;

use super::{Error, Listing, Overrides, Shaping, Snapshot};
use crate::security::Security;
use downstream::Registry;
use rmcp::model::Tool;

/// A catalog's snapshots at one moment: every project's, and one for each
/// project with overrides of its own (its own tool names, descriptions and
/// tags are searched too).
#[derive(Debug)]
pub(super) struct Snapshots {
    pub(super) base: Arc<Snapshot>,
    pub(super) projects: HashMap<String, Arc<Snapshot>>,
}

impl Snapshots {
    pub(super) fn all(&self) -> impl Iterator<Item = &Arc<Snapshot>> {
        std::iter::once(&self.base).chain(self.projects.values())
    }
}

/// The name a project's own listing of `server` is reviewed and pinned
/// under (`github@research`): its pins are its own, so one project's
/// account never reads as a change of another's. Server and project names
/// hold neither `@` nor `:`, so the name is unambiguous and a held tool's
/// key (`github@research:search`) is one `tools approve` takes.
pub fn own_listing_name(server: &str, project: &str) -> String {
    format!("{server}@{project}")
}

/// The registry's listings, reviewed once, shaped for every project, and
/// for each project with overrides or listings of its own. A server that
/// takes only projects' own credentials has no listing for every project:
/// each project's own connection lists it for that project alone.
pub(super) fn snapshots_of(registry: &Registry, shaping: &Shaping, security: &Security) -> Result<Snapshots, Error> {
    let servers = registry.servers();
    let states: Vec<_> = servers
        .iter()
        .map(|s| (s, s.state()))
        // An idle server's tools are those of its last listing; a call starts it.
        .filter(|(_, st)| st.status.tools_known())
        .collect();
    // (index into `states`, project, its tools)
    let own: Vec<(usize, String, Arc<[Tool]>)> = states
        .iter()
        .enumerate()
        .filter(|(_, (_, st))| st.status == downstream::Status::SignInRequired)
        .flat_map(|(i, (s, _))| s.own_listings().into_iter().map(move |(p, t)| (i, p, t)))
        .collect();
    let own_names: Vec<String> = own
        .iter()
        .map(|(i, project, _)| own_listing_name(states[*i].0.name(), project))
        .collect();
    let about: Vec<Option<String>> = states.iter().map(|(s, _)| s.config.about()).collect();
    let listed: Vec<(&str, &[Tool])> = states
        .iter()
        .map(|(s, st)| (s.name(), &st.tools[..]))
        .chain(own.iter().zip(&own_names).map(|((_, _, t), n)| (n.as_str(), &t[..])))
        .collect();
    let reviewed = security.review(&listed)?;
    let (shared, own_reviewed) = reviewed.split_at(states.len());
    // Each project's own reviews, by (server's index, project).
    let own_review: HashMap<(usize, &str), _> = own
        .iter()
        .zip(own_reviewed)
        .map(|((i, project, _), r)| ((*i, project.as_str()), r))
        .collect();
    // Every server's listing as `project` sees it (`None`: every project).
    let listings = |project: Option<&str>| -> Vec<Listing<'_>> {
        states
            .iter()
            .zip(&about)
            .enumerate()
            .map(|(i, ((s, _), about))| {
                let mine = project.and_then(|p| own_review.get(&(i, p)).copied());
                let r = mine.unwrap_or(&shared[i]);
                Listing {
                    server: s.name(),
                    about: about.as_deref(),
                    tools: &r.tools,
                    flagged: &r.flagged,
                    held: &r.held,
                }
            })
            .collect()
    };
    let build = |project: Option<&str>, overrides: &Overrides| {
        let weights = search::bm25::Weights::default();
        Snapshot::build_with(listings(project), &shaping.rules, overrides, weights).map(Arc::new)
    };
    let mut names = shaping.overrides.projects();
    names.extend(own.iter().map(|(_, p, _)| p.as_str()));
    names.sort_unstable();
    names.dedup();
    let mut projects = HashMap::new();
    for project in names {
        let snapshot = build(Some(project), &shaping.overrides.for_project(project))?;
        projects.insert(project.to_string(), snapshot);
    }
    Ok(Snapshots {
        base: build(None, &shaping.overrides)?,
        projects,
    })
}
