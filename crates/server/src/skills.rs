//! The Skills extension (SEP-2640) through the gateway: a project sees the
//! skills of the servers it may see, each under its server's namespace
//! (`skill://mcp-gateway/<server>/…`, `uris.rs`), since the spec names a
//! skill by server and URI together. `skills/get`, and `resources/read` of a
//! skill's files, reach the server the URI names.

use rmcp::RoleServer;
use rmcp::model::{
    CacheScope, ErrorData, GetSkillRequestParams, GetSkillResult, ListSkillsResult, Skill, SkillResources,
};
use rmcp::service::RequestContext;
use tracing::warn;

use super::Upstream;
use super::errors::{auth_error, downstream_error, unknown_skill};
use vocab::uris;

impl Upstream {
    /// `skills/list`: every skill of the servers the caller may see.
    pub(super) async fn skills_for(&self, ctx: &RequestContext<RoleServer>) -> Result<ListSkillsResult, ErrorData> {
        let caller = self.caller(ctx).await.map_err(auth_error)?;
        let listed = self
            .listed_by_each(&caller, "skills/list", |s| async move { s.list_skills().await })
            .await;
        let mut all = Vec::new();
        for (server, skills) in listed {
            for mut skill in skills {
                namespace(&mut skill, &server);
                // One bad entry would fail the whole list (rmcp checks it on the way out).
                match skill.validate() {
                    Ok(()) => all.push(skill),
                    Err(e) => warn!(server = %server, error = %e, "a skill was left out"),
                }
            }
        }
        let mut result = ListSkillsResult::with_all_items(all);
        result.cache_scope = Some(CacheScope::Private);
        Ok(result)
    }

    /// `skills/get` of a skill the caller may see.
    pub(super) async fn skill_for(
        &self,
        request: GetSkillRequestParams,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let caller = self.caller(ctx).await.map_err(auth_error)?;
        let Ok((Some(server), original)) = self.resource_owner(&caller, &request.uri) else {
            return Err(unknown_skill(&request.uri));
        };
        let mut result = server.get_skill(&original).await.map_err(downstream_error)?;
        namespace(&mut result.skill, server.name());
        result.cache_scope = Some(CacheScope::Private);
        Ok(result)
    }
}

/// `skill`'s URI and its files' in `server`'s namespace (the bytes, and so
/// the digests, are the server's own).
fn namespace(skill: &mut Skill, server: &str) {
    let scope = |uri: &mut String| {
        if let Some(namespaced) = uris::scoped(server, uri) {
            *uri = namespaced;
        }
    };
    scope(&mut skill.uri);
    if let SkillResources::Files(files) = &mut skill.resources {
        for file in files {
            scope(&mut file.uri);
        }
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{SkillFrontmatter, SkillResource};

    use super::*;

    #[test]
    fn a_namespaced_skill_is_still_a_valid_one() {
        let body = b"---\nname: commit\ndescription: d\n---\n";
        let files = vec![
            SkillResource::from_bytes("skill://git/commit/SKILL.md", body),
            SkillResource::from_bytes("skill://git/commit/ref/style.md", b"x"),
        ];
        let mut skill = Skill::new(
            "skill://git/commit/SKILL.md",
            SkillFrontmatter::new("commit", "d"),
            SkillResources::Files(files),
        );
        namespace(&mut skill, "red");
        assert_eq!(skill.uri, "skill://mcp-gateway/red/git/commit/SKILL.md");
        let SkillResources::Files(files) = &skill.resources else {
            panic!()
        };
        assert_eq!(files[1].uri, "skill://mcp-gateway/red/git/commit/ref/style.md");
        files[0].verify(body).unwrap();
        skill.validate().unwrap();
    }
}
