//! Two projects over two chaos servers: the fixture of the tests of
//! projects, grants and the audit log.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::json;

use super::*;

pub(crate) type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// Two servers, no anonymous access, a rule hiding `crash` and tagging the demo's math.
pub(crate) fn config() -> String {
    format!(
        "{}{}[[rules]]\npattern = [\"crash\"]\nenabled = false\n\n[[rules]]\npattern = [\"/^(calculate|convert_.*)$/\"]\ntags = [\"math\"]\n",
        chaos_server("red", "env = { DEMO_ACCOUNT = \"red\" }"),
        chaos_server("blue", "env = { DEMO_ACCOUNT = \"blue\" }")
    )
}

/// Projects `one` (all of red) and `two` (blue, plus red:calculate only), a token each.
pub(crate) async fn two_projects() -> (Gateway, String, String) {
    two_projects_on(Engine::Sqlite).await
}

/// [`two_projects`] with the store on `engine`.
pub(crate) async fn two_projects_on(engine: Engine) -> (Gateway, String, String) {
    two_projects_at(engine, "").await
}

/// [`two_projects_on`] with `toml` before the servers (a `[store]` setting, say).
pub(crate) async fn two_projects_at(engine: Engine, toml: &str) -> (Gateway, String, String) {
    let gw = Gateway::start_on(engine, &format!("{toml}{}", config())).await;
    let (t1, t2) = grant_two_projects(&gw);
    (gw, t1, t2)
}

/// Creates projects `one` and `two` on `gw` (of [`config`]), granted as
/// [`two_projects`] grants them; their tokens.
pub(crate) fn grant_two_projects(gw: &Gateway) -> (String, String) {
    gw.cli(&["project", "create", "one"]);
    gw.cli(&["project", "create", "two"]);
    gw.cli(&["grant", "--project", "one", "--server", "red"]);
    gw.cli(&["grant", "--project", "two", "--server", "blue"]);
    gw.cli(&["grant", "--project", "two", "--server", "red", "--tool", "calculate"]);
    (gw.issue_token("one"), gw.issue_token("two"))
}

pub(crate) async fn keys(client: &Client, query: &str) -> BTreeSet<String> {
    let r = call(client, "tool_discovery", json!({"query": query, "maxResults": 50})).await;
    r.structured_content.unwrap()["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["toolKey"].as_str().unwrap().to_string())
        .collect()
}

/// Every tool of the demo mentions one of these words.
pub(crate) const EVERYTHING: &str =
    "arithmetic text tool time temperature hash base64 sleep fail echo crash garbage stats";

pub(crate) async fn wait_ready(client: &Client, key: &str) {
    eventually(Duration::from_secs(20), key, || async {
        keys(client, EVERYTHING).await.contains(key).then_some(())
    })
    .await;
}
