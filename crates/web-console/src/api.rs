//! The console's JSON API (camelCase), behind [`super::guard`]: what the
//! page shows, and the operator's actions. Actions call [`gateway::operator`],
//! as the command line does, so they are recorded in the admin log.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Extension, Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use super::Console;
use super::charts;
use super::guard::Admin;
use config::Transport;
use downstream::{Downstream, Status};
use gateway::DiscoverArgs;
use gateway::catalog::{Entry, View};
use gateway::operator::{Operator, ProjectLine, ProjectView};
use leaks::quote;
use store::access::{Grants, Search};
use store::{self, UsageRange};
use vocab::keys::ToolKey;
use vocab::wire::{MAX_REQUEST_ID_BYTES, bounded};

/// Most operator actions shown on the overview.
const RECENT_ACTIONS: usize = 20;
/// Tools per usage chart.
const TOP_TOOLS: usize = 10;

type Answer = Result<Response, ApiError>;

/// `{"error": {"code", "message"}}` with `status`.
pub(super) fn error(status: StatusCode, code: &str, message: &str) -> Response {
    (status, Json(json!({ "error": { "code": code, "message": message } }))).into_response()
}

/// A request the API refused or could not answer.
#[derive(Debug)]
pub(super) struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        error(self.status, self.code, &self.message)
    }
}

fn bad_request(message: &str) -> ApiError {
    ApiError {
        status: StatusCode::BAD_REQUEST,
        code: "INVALID_REQUEST",
        message: message.to_string(),
    }
}

fn not_found(message: String) -> ApiError {
    ApiError {
        status: StatusCode::NOT_FOUND,
        code: "NOT_FOUND",
        message,
    }
}

fn store_error(e: store::Error) -> ApiError {
    match e {
        store::Error::NoProject(_) | store::Error::NoToken(_) => not_found(e.to_string()),
        e => {
            tracing::error!(error = %e, "console: store request failed");
            ApiError {
                status: StatusCode::SERVICE_UNAVAILABLE,
                code: "STORE_UNAVAILABLE",
                message: e.to_string(),
            }
        }
    }
}

fn ok(value: Value) -> Answer {
    Ok(Json(value).into_response())
}

fn transport_kind(server: &Downstream) -> &'static str {
    match &server.config.transport {
        Transport::Stdio { .. } => "stdio",
        Transport::Http { .. } => "http",
        Transport::Builtin(_) => "built-in",
    }
}

/// Grants to every configured server: what an operator sees.
fn every_server(gateway: &gateway::Gateway) -> Arc<Grants> {
    let servers = gateway.registry().servers();
    Arc::new(Grants::all_of(servers.iter().map(|s| s.name())))
}

/// One server's row: status and why, protocol, tools, restarts, the last
/// error with its time, lazy/idle, and its stderr's tail.
fn server_row(console: &Console, server: &Downstream) -> Value {
    let state = server.state();
    let held = console.gateway.catalog().snapshot().held_by(server.name()).len();
    json!({
        "name": server.name(),
        "transport": transport_kind(server),
        "status": state.status.word(),
        "detail": state.status.to_string(),
        "protocol": state.protocol,
        "tools": state.tools.len(),
        "held": held,
        "restarts": state.restarts,
        "lastError": state.last_error.map(|(message, at)| json!({ "message": message, "at": at })),
        "lazy": server.config.lazy,
        "idle": state.status == Status::Idle,
        "idleTimeoutMs": server.config.idle_timeout.map(|d| d.as_millis() as u64),
        "enabled": server.config.enabled,
        "stderr": server.stderr_tail(),
    })
}

/// `GET /console/api/session`: who is signed in, and the CSRF token for changes.
pub(super) async fn session(Extension(admin): Extension<Admin>, Extension(csrf): Extension<Option<String>>) -> Answer {
    ok(json!({ "actor": admin.actor.to_string(), "csrf": csrf }))
}

/// `GET /console/api/overview`: servers, projects, search, recent actions.
pub(super) async fn overview(State(console): State<Console>) -> Answer {
    let operator = console.operator();
    let servers: Vec<Value> = console
        .gateway
        .registry()
        .servers()
        .iter()
        .map(|s| server_row(&console, s))
        .collect();
    let projects: Vec<Value> = operator
        .projects()
        .map_err(store_error)?
        .into_iter()
        .map(|ProjectLine { project: p, live_tokens }| {
            json!({
                "id": p.id, "name": p.name, "search": p.search.map_or("off", Search::as_str),
                "exposure": p.exposure.as_str(), "apps": p.apps.as_str(), "liveTokens": live_tokens, "createdAt": p.created_at,
            })
        })
        .collect();
    ok(json!({
        "servers": servers,
        "projects": projects,
        "search": console.gateway.catalog().search_status(),
        "actions": operator.recent_actions(RECENT_ACTIONS).map_err(store_error)?,
        "audit": console.gateway.audit_mode().as_str(),
        "startedCalls": operator.started_calls(RECENT_ACTIONS).map_err(store_error)?,
    }))
}

/// `GET /console/api/requests/{id}`: one request's audit rows; for a
/// script, its own row and then its inner calls (`ID.1`, `ID.2`…).
pub(super) async fn request(State(console): State<Console>, Path(id): Path<String>) -> Answer {
    bounded("request id", &id, MAX_REQUEST_ID_BYTES).map_err(|e| bad_request(&e.to_string()))?;
    let rows = console.operator().request(&id).map_err(store_error)?;
    if rows.is_empty() {
        return Err(not_found(format!("no audit row for request '{}'", quote(&id))));
    }
    ok(json!({ "requestId": id, "rows": rows }))
}

/// `GET /console/api/servers/{name}`: the server and its tools, each with
/// its tags, what the rules and the security review decided, and the
/// projects that may see it, as the policy answers each project's callers:
/// under `seenAs`, the name and description a project sees where its
/// overrides change them.
pub(super) async fn server(State(console): State<Console>, Path(name): Path<String>) -> Answer {
    let gateway = &console.gateway;
    let server = gateway
        .registry()
        .get(&name)
        .ok_or_else(|| not_found(format!("no server '{}'", quote(&name))))?;
    let projects = console.operator().grants_by_project().map_err(store_error)?;
    let views: Vec<(String, View)> = projects
        .into_iter()
        .map(|(project, _)| Ok((project.clone(), gateway.view_for_project(&project)?)))
        .collect::<Result<_, store::Error>>()
        .map_err(store_error)?;
    let everything = gateway.catalog().operator_view(every_server(gateway));
    let shaping = gateway.catalog().shaping();
    let tools: Vec<Value> = server
        .state()
        .tools
        .iter()
        .map(|tool| {
            let key = ToolKey::new(&name, &tool.name);
            let listed = everything.by_real_key(&key);
            let (state, why, tags) = match (listed, everything.held(&key)) {
                (Some(entry), _) => ("listed", None, entry.tags.clone()),
                (None, Some(held)) => ("held", Some(held.why.clone()), Vec::new()),
                (None, None) => (
                    "disabled",
                    Some(match shaping.overrides.global(&name, &tool.name) {
                        Some(o) if o.hidden => "an override hides it".to_string(),
                        _ => "a tool rule disables it".to_string(),
                    }),
                    shaping.rules.verdict(&name, &tool.name, &[]).tags,
                ),
            };
            let seen: Vec<(&str, &Entry)> = views
                .iter()
                .filter_map(|(project, view)| Some((project.as_str(), view.by_real_key(&key)?)))
                .collect();
            let seen_as: serde_json::Map<String, Value> = seen
                .iter()
                .filter(|(_, e)| e.key != key || e.tool.description != tool.description)
                .map(|(p, e)| {
                    (
                        p.to_string(),
                        json!({ "key": e.key, "description": e.tool.description }),
                    )
                })
                .collect();
            json!({
                "key": key, "shownAs": listed.filter(|e| e.key != key).map(|e| &e.key),
                "name": tool.name, "title": tool.title, "description": tool.description,
                "inputSchema": tool.input_schema, "state": state, "why": why, "tags": tags,
                "projects": seen.iter().map(|(p, _)| p).collect::<Vec<_>>(), "seenAs": seen_as,
            })
        })
        .collect();
    ok(json!({ "server": server_row(&console, &server), "tools": tools }))
}

/// `POST /console/api/servers/{name}/{restart|relist}`.
pub(super) async fn server_action(
    State(console): State<Console>,
    Extension(admin): Extension<Admin>,
    Path((name, action)): Path<(String, String)>,
) -> Answer {
    let server = console
        .gateway
        .registry()
        .get(&name)
        .ok_or_else(|| not_found(format!("no server '{}'", quote(&name))))?;
    match action.as_str() {
        "restart" => server.restart(),
        "relist" => server.list_tools_again(),
        _ => return Err(bad_request("the actions are restart and relist")),
    }
    console
        .operator()
        .record(
            &admin.actor,
            &format!("server.{action}"),
            &format!("server {name}"),
            None,
        )
        .map_err(store_error)?;
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({ "server": name, "requested": action })),
    )
        .into_response())
}

/// `GET /console/api/projects/{name}`: search, grants, tokens, credential
/// names (never values), and the servers a grant may name.
pub(super) async fn project(State(console): State<Console>, Path(name): Path<String>) -> Answer {
    let ProjectView {
        project: p,
        grants,
        tokens,
        credentials,
        learned_associations,
        remembered_meanings,
    } = console.operator().project(&name).map_err(store_error)?;
    let servers: Vec<Value> = console
        .gateway
        .registry()
        .servers()
        .iter()
        .map(|s| json!({ "name": s.name(), "tools": s.state().tools.iter().map(|t| t.name.to_string()).collect::<Vec<_>>() }))
        .collect();
    ok(json!({
        "project": {
            "id": p.id, "name": p.name, "search": p.search.map_or("off", Search::as_str),
            "exposure": p.exposure.as_str(), "apps": p.apps.as_str(), "createdAt": p.created_at,
        },
        "grants": grants,
        "tokens": tokens,
        "credentials": credentials,
        "learnedAssociations": learned_associations,
        "rememberedMeanings": remembered_meanings,
        "servers": servers,
    }))
}

/// A grant or revocation, as the page sends it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct GrantBody {
    server: String,
    #[serde(default)]
    tool: Option<String>,
    allow: bool,
}

/// `POST /console/api/projects/{name}/grants`.
pub(super) async fn grant(
    State(console): State<Console>,
    Extension(admin): Extension<Admin>,
    Path(name): Path<String>,
    Json(body): Json<GrantBody>,
) -> Answer {
    let tool = body.tool.as_deref().filter(|t| !t.is_empty());
    console
        .operator()
        .grant(&admin.actor, &name, &body.server, tool, body.allow)
        .map_err(store_error)?;
    ok(json!({ "project": name, "server": body.server, "tool": tool, "enabled": body.allow }))
}

/// A token to issue.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct TokenBody {
    #[serde(default)]
    label: String,
}

/// `POST /console/api/projects/{name}/tokens`: the secret, shown this once.
pub(super) async fn issue_token(
    State(console): State<Console>,
    Extension(admin): Extension<Admin>,
    Path(name): Path<String>,
    Json(body): Json<TokenBody>,
) -> Answer {
    let (info, secret) = console
        .operator()
        .issue_token(&admin.actor, &name, body.label.trim())
        .map_err(store_error)?;
    ok(json!({ "token": secret, "id": info.id, "projectId": info.project_id }))
}

/// `POST /console/api/tokens/{id}/revoke`.
pub(super) async fn revoke_token(
    State(console): State<Console>,
    Extension(admin): Extension<Admin>,
    Path(id): Path<i64>,
) -> Answer {
    console.operator().revoke_token(&admin.actor, id).map_err(store_error)?;
    ok(json!({ "revoked": id }))
}

/// A search strategy to set.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct SearchBody {
    search: String,
}

/// `POST /console/api/projects/{name}/search`.
pub(super) async fn set_search(
    State(console): State<Console>,
    Extension(admin): Extension<Admin>,
    Path(name): Path<String>,
    Json(body): Json<SearchBody>,
) -> Answer {
    let search = match body.search.as_str() {
        "off" => None,
        word => Some(Search::from_word(word).ok_or_else(|| bad_request("search is one of bm25, hybrid, cloud, off"))?),
    };
    let p = console
        .operator()
        .set_search(&admin.actor, &name, search)
        .map_err(store_error)?;
    ok(json!({ "project": p.name, "search": body.search }))
}

/// `?range=hour|day|week&project=NAME&tool=KEY`.
#[derive(Debug, Deserialize)]
pub(super) struct UsageQuery {
    range: Option<String>,
    project: Option<String>,
    tool: Option<String>,
}

/// `GET /console/api/usage`: calls over time, per tool and per project (of
/// one project or tool, when given), with the charts drawn.
pub(super) async fn usage(State(console): State<Console>, Query(q): Query<UsageQuery>) -> Answer {
    let range = match q.range.as_deref() {
        None => UsageRange::Day,
        Some(word) => UsageRange::parse(word).ok_or_else(|| bad_request("range is one of hour, day, week"))?,
    };
    let project = q.project.filter(|p| !p.is_empty());
    let tool = q.tool.filter(|t| !t.is_empty());
    let store = console.gateway.store().clone();
    let usage =
        tokio::task::spawn_blocking(move || Operator::new(&store).usage(range, project.as_deref(), tool.as_deref()))
            .await
            .map_err(|e| ApiError {
                status: StatusCode::INTERNAL_SERVER_ERROR,
                code: "INTERNAL",
                message: e.to_string(),
            })?
            .map_err(store_error)?;
    let word = serde_json::to_value(range).unwrap_or_default();
    let span = word.as_str().unwrap_or("range");
    let charts = json!({
        "calls": charts::calls_over_time(&usage.series, &format!("calls over the last {span}")),
        "saved": charts::saved_over_time(&usage.series, &format!("tokens saved over the last {span}")),
        "tools": charts::top_bars(&usage.tools, |r| r.calls, TOP_TOOLS, &format!("top tools, last {span}")),
        "failing": charts::top_bars(&usage.tools, |r| r.errors, TOP_TOOLS, &format!("top failing tools, last {span}")),
    });
    let mut body = serde_json::to_value(&usage).unwrap_or_default();
    body["charts"] = charts;
    ok(body)
}

/// A playground search: a project, and `tool_discovery`'s own arguments.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct SearchPlay {
    project: String,
    arguments: serde_json::Map<String, Value>,
}

/// `POST /console/api/search`: what `tool_discovery` answers the project
/// (the same function, so the same answer), and the tools that would match
/// but the project cannot see, each with why (`hidden`).
pub(super) async fn search(State(console): State<Console>, Json(body): Json<SearchPlay>) -> Answer {
    let gateway = &console.gateway;
    let caller = gateway.caller_for_project(&body.project).map_err(store_error)?;
    let args = DiscoverArgs::parse(Some(body.arguments)).map_err(|e| bad_request(&e))?;
    let answer = gateway.discover(&caller, &args).await.map_err(|e| bad_request(&e))?;
    let hidden = gateway.hidden(&caller, &args).await.map_err(|e| bad_request(&e))?;
    ok(json!({ "project": caller.project.name, "answer": answer, "hidden": hidden }))
}
