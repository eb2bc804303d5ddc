//! A fake Index Network on loopback: the token exchange and the Protocol
//! API's four routes (`/intents/{id}/archive` beside the three
//! discovery ones), following the public sources summarised in
//! `../shared/notes/index-protocol.md`: express-validator errors as
//! `400 { errors: [...] }`, `401 { error }` without a valid bearer, the
//! December 2025 `discoverUsers` semantics (users sorted by total stake, then
//! sliced), VibeCheck's `""` synthesis with status 200, and matches of fresh
//! intents that appear only after a while. Every route can be made slow,
//! fail with a status (with `Retry-After` in seconds or as an HTTP date), or
//! answer malformed JSON; `/alt/discover/filter` and `/alt/synthesis/vibecheck`
//! serve the same as the usual paths (for `[index] discover_filter_url` and
//! `vibecheck_url`). The fake records what it saw and the peak number of
//! VibeChecks in flight.
#![allow(dead_code)] // each test binary uses a different part of this module

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Json;
use axum::Router;
use axum::extract::{Multipart, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{patch, post};
use serde_json::{Value, json};

/// The caller's Index user.
pub(crate) const ME: &str = "00000000-0000-4000-8000-000000000001";
/// The caller's two existing intents.
pub(crate) const INTENT_A: &str = "10000000-0000-4000-8000-00000000000a";
pub(crate) const INTENT_B: &str = "10000000-0000-4000-8000-00000000000b";

/// The id of the `n`-th other user (0-based).
pub(crate) fn user_id(n: usize) -> String {
    format!("00000000-0000-4000-8000-{:012}", n + 2)
}

/// What one route does wrong.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fault {
    /// Wait before answering.
    pub delay: Duration,
    /// Answer this status instead (with `{ error }`).
    pub status: Option<u16>,
    /// The backend's `error` text for `status`.
    pub error: Option<String>,
    /// Send `Retry-After: <seconds>`.
    pub retry_after: Option<u64>,
    /// Send `Retry-After` as an HTTP date (IMF-fixdate) this far ahead.
    pub retry_after_date: Option<Duration>,
    /// Answer 200 with a body that is not JSON.
    pub malformed: bool,
    /// How many requests the fault hits (`None`: all).
    pub times: Option<usize>,
}

#[derive(Debug, Clone)]
struct User {
    id: String,
    name: String,
    email: String,
    avatar: Option<String>,
    intro: Option<String>,
}

#[derive(Debug, Clone)]
struct Intent {
    id: String,
    user: String,
    payload: String,
    created_at: String,
    /// Archived (removed): neither matched from nor archived again.
    archived: bool,
}

#[derive(Debug, Clone)]
struct Stake {
    intents: Vec<String>,
    stake: f64,
    reasoning: Option<String>,
    visible_from: Instant,
}

/// A VibeCheck failure for one target: `remaining` answers of `status`.
#[derive(Debug, Clone)]
pub(crate) struct VibeFailure {
    pub remaining: usize,
    pub status: u16,
    pub retry_after: Option<u64>,
    pub retry_after_date: Option<Duration>,
}

#[derive(Default)]
struct Data {
    /// Index's authorization server; the exchange accepts only its tokens.
    issuer: Option<String>,
    /// Every bearer the exchange was shown.
    bearers: Vec<String>,
    privy: HashSet<String>,
    users: Vec<User>,
    intents: Vec<Intent>,
    stakes: Vec<Stake>,
    connected: HashSet<String>,
    faults: HashMap<&'static str, Fault>,
    vibe_failures: HashMap<String, VibeFailure>,
    empty_synthesis: HashSet<String>,
    include_self: bool,
    no_intents: bool,
    fresh_delay: Duration,
    fresh_matches: usize,
    // What was seen.
    calls: HashMap<&'static str, usize>,
    vibe_calls: HashMap<String, Vec<Instant>>,
    request_ids: HashSet<String>,
    payloads: Vec<String>,
    filter_bodies: Vec<Value>,
    vibe_bodies: Vec<Value>,
}

/// The fake service. Cloning shares it.
#[derive(Clone)]
pub(crate) struct FakeIndex {
    data: Arc<Mutex<Data>>,
    in_flight: Arc<AtomicUsize>,
    peak: Arc<AtomicUsize>,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
}

impl FakeIndex {
    /// Starts on 127.0.0.1:0 with `others` users who each share a stake with
    /// one of the caller's intents; user `n` has stake `1000 - n`.
    pub(crate) async fn start(others: usize) -> FakeIndex {
        let mut data = Data {
            fresh_matches: 3,
            ..Data::default()
        };
        let now = Instant::now();
        for (id, payload) in [
            (
                INTENT_A,
                "Looking for a hardware engineer to co-found a robotics startup",
            ),
            (INTENT_B, "Offering mentorship in distributed systems"),
        ] {
            data.intents.push(Intent {
                id: id.into(),
                user: ME.into(),
                payload: payload.into(),
                created_at: "2025-12-01T09:30:00.000Z".into(),
                archived: false,
            });
        }
        data.users.push(User {
            id: ME.into(),
            name: "Me Myself".into(),
            email: "me@example.com".into(),
            avatar: None,
            intro: None,
        });
        for n in 0..others {
            let id = user_id(n);
            data.users.push(User {
                id: id.clone(),
                name: format!("Person {n}"),
                email: format!("person{n}@example.com"),
                avatar: (n % 2 == 0).then(|| format!("https://cdn.example.com/avatars/{n}.png")),
                intro: Some(format!("Builder number {n}; reach me at person{n}@example.com")),
            });
            let theirs = format!("20000000-0000-4000-8000-{n:012}");
            data.intents.push(Intent {
                id: theirs.clone(),
                user: id,
                payload: format!("Building robots, project {n}"),
                created_at: "2025-11-20T12:00:00.000Z".into(),
                archived: false,
            });
            data.stakes.push(Stake {
                intents: vec![if n % 2 == 0 { INTENT_A } else { INTENT_B }.into(), theirs],
                stake: 1000.0 - n as f64,
                reasoning: Some(format!("Both care about robotics ({n})")),
                visible_from: now,
            });
        }
        let fake = FakeIndex {
            data: Arc::new(Mutex::new(data)),
            in_flight: Arc::new(AtomicUsize::new(0)),
            peak: Arc::new(AtomicUsize::new(0)),
            base: String::new(),
        };
        let app = Router::new()
            .route("/token/privy/access-token", post(exchange))
            .route("/api/discover/new", post(discover_new))
            .route("/api/discover/filter", post(discover_filter))
            .route("/api/synthesis/vibecheck", post(vibecheck))
            .route("/api/intents/{id}/archive", patch(archive_intent))
            .route("/alt/discover/filter", post(alt_discover_filter))
            .route("/alt/synthesis/vibecheck", post(alt_vibecheck))
            .with_state(fake.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        FakeIndex { base, ..fake }
    }

    /// The `[index]` section pointing at this fake, plus `extra` lines.
    pub(crate) fn config(&self, extra: &str) -> String {
        format!(
            "[index]\nprotocol_api_url = \"{0}/api\"\ntoken_exchange_url = \"{0}/token/privy/access-token\"\n{extra}\n",
            self.base
        )
    }

    /// A gateway config for callers signed in with Index's authorization
    /// server `issuer` (a real OAuth server): `[auth.oauth]` for the gateway
    /// at `gateway_url` trusting it and `others`, `subject` mapped to project
    /// `p`, and `[index]` pointing at this fake with `oauth_issuer = issuer`
    /// plus `index_extra`. The fake trusts the same issuer.
    pub(crate) fn signed_in_config(
        &self,
        gateway_url: &str,
        issuer: &str,
        others: &[&str],
        subject: &str,
        index_extra: &str,
    ) -> String {
        self.trust(issuer);
        let issuers: String = std::iter::once(issuer)
            .chain(others.iter().copied())
            .map(|i| format!("[[auth.oauth.issuers]]\nissuer = \"{i}\"\n"))
            .collect();
        format!(
            "[auth.oauth]\naudience = \"{gateway_url}\"\n{issuers}\
             [[auth.oauth.projects]]\nproject = \"p\"\nsubjects = [\"{subject}\"]\n{}",
            self.config(&format!("oauth_issuer = \"{issuer}\"\n{index_extra}"))
        )
    }

    /// Index's own authorization server: as the real exchange does
    /// (`validateToken(['privy:token:exchange'])`), only access tokens it
    /// signed, unexpired, with that scope and a `jti`, are exchanged.
    pub(crate) fn trust(&self, issuer: &str) {
        self.data.lock().unwrap().issuer = Some(issuer.into());
    }

    /// Every bearer token the exchange was shown, in order.
    pub(crate) fn bearers(&self) -> Vec<String> {
        self.data.lock().unwrap().bearers.clone()
    }

    /// Makes `route` (`exchange`, `new`, `filter`, `vibecheck`) misbehave.
    pub(crate) fn fault(&self, route: &'static str, fault: Fault) {
        self.data.lock().unwrap().faults.insert(route, fault);
    }

    /// VibeCheck for `user` fails `times` times with `status`.
    pub(crate) fn fail_vibecheck(&self, user: &str, times: usize, status: u16, retry_after: Option<u64>) {
        self.data.lock().unwrap().vibe_failures.insert(
            user.into(),
            VibeFailure {
                remaining: times,
                status,
                retry_after,
                retry_after_date: None,
            },
        );
    }

    /// VibeCheck for `user` fails `times` times with `status` and a
    /// `Retry-After` HTTP date `ahead` of the moment it answers.
    pub(crate) fn fail_vibecheck_until(&self, user: &str, times: usize, status: u16, ahead: Duration) {
        self.data.lock().unwrap().vibe_failures.insert(
            user.into(),
            VibeFailure {
                remaining: times,
                status,
                retry_after: None,
                retry_after_date: Some(ahead),
            },
        );
    }

    /// VibeCheck for `user` answers `""` with status 200.
    pub(crate) fn empty_synthesis(&self, user: &str) {
        self.data.lock().unwrap().empty_synthesis.insert(user.into());
    }

    /// `user` is already connected to the caller (hidden by `excludeDiscovered`).
    pub(crate) fn connect(&self, user: &str) {
        self.data.lock().unwrap().connected.insert(user.into());
    }

    /// Puts the caller among the results (as a misbehaving backend might).
    pub(crate) fn include_self(&self) {
        self.data.lock().unwrap().include_self = true;
    }

    /// `/discover/new` derives no intents.
    pub(crate) fn no_intents(&self) {
        self.data.lock().unwrap().no_intents = true;
    }

    /// Matches of intents made by `/discover/new` appear after `delay`, with `users` people.
    pub(crate) fn fresh_matches(&self, delay: Duration, users: usize) {
        let mut d = self.data.lock().unwrap();
        d.fresh_delay = delay;
        d.fresh_matches = users;
    }

    /// Requests received by `route`.
    pub(crate) fn calls(&self, route: &str) -> usize {
        self.data.lock().unwrap().calls.get(route).copied().unwrap_or(0)
    }

    /// When VibeCheck was called for `user`.
    pub(crate) fn vibe_calls(&self, user: &str) -> Vec<Instant> {
        self.data
            .lock()
            .unwrap()
            .vibe_calls
            .get(user)
            .cloned()
            .unwrap_or_default()
    }

    /// Every VibeCheck target seen.
    pub(crate) fn vibe_targets(&self) -> HashSet<String> {
        self.data.lock().unwrap().vibe_calls.keys().cloned().collect()
    }

    /// Most VibeChecks in flight at once.
    pub(crate) fn peak_vibechecks(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }

    /// `X-Request-Id` values seen.
    pub(crate) fn request_ids(&self) -> HashSet<String> {
        self.data.lock().unwrap().request_ids.clone()
    }

    /// The caller's intents archived so far.
    pub(crate) fn archived(&self) -> Vec<String> {
        let d = self.data.lock().unwrap();
        d.intents.iter().filter(|i| i.archived).map(|i| i.id.clone()).collect()
    }

    /// `/discover/new` payloads seen.
    pub(crate) fn payloads(&self) -> Vec<String> {
        self.data.lock().unwrap().payloads.clone()
    }

    /// `/discover/filter` bodies seen.
    pub(crate) fn filter_bodies(&self) -> Vec<Value> {
        self.data.lock().unwrap().filter_bodies.clone()
    }

    /// `/synthesis/vibecheck` bodies seen.
    pub(crate) fn vibe_bodies(&self) -> Vec<Value> {
        self.data.lock().unwrap().vibe_bodies.clone()
    }

    /// Counts the call, records its request id, and applies the route's fault.
    async fn enter(&self, route: &'static str, headers: &HeaderMap) -> Option<Response> {
        let fault = {
            let mut d = self.data.lock().unwrap();
            *d.calls.entry(route).or_default() += 1;
            if let Some(id) = headers.get("x-request-id").and_then(|v| v.to_str().ok()) {
                d.request_ids.insert(id.to_string());
            }
            let fault = d.faults.get_mut(route)?;
            match &mut fault.times {
                Some(0) => return None,
                Some(n) => *n -= 1,
                None => {}
            }
            fault.clone()
        };
        tokio::time::sleep(fault.delay).await;
        if let Some(status) = fault.status {
            let error = fault.error.unwrap_or_else(|| "Something went wrong!".into());
            let mut response = error_response(status, json!({ "error": error }), fault.retry_after);
            if let Some(ahead) = fault.retry_after_date {
                retry_at(&mut response, ahead);
            }
            return Some(response);
        }
        fault.malformed.then(|| {
            (
                StatusCode::OK,
                [("content-type", "application/json")],
                "{\"results\": [",
            )
                .into_response()
        })
    }

    /// The refusal, unless the bearer is a Privy token this fake issued.
    fn refuse(&self, headers: &HeaderMap) -> Option<Response> {
        let Some(token) = bearer(headers) else {
            return Some(error_response(401, json!({ "error": "Access token required" }), None));
        };
        (!self.data.lock().unwrap().privy.contains(&token))
            .then(|| error_response(401, json!({ "error": "Invalid access token" }), None))
    }
}

fn bearer(headers: &HeaderMap) -> Option<String> {
    let value = headers.get("authorization")?.to_str().ok()?;
    let token = value.strip_prefix("Bearer ")?.trim();
    (!token.is_empty()).then(|| token.to_string())
}

fn error_response(status: u16, body: Value, retry_after: Option<u64>) -> Response {
    let mut response = (StatusCode::from_u16(status).unwrap(), Json(body)).into_response();
    if let Some(s) = retry_after {
        response
            .headers_mut()
            .insert("retry-after", s.to_string().parse().unwrap());
    }
    response
}

/// `Retry-After` as an HTTP date (IMF-fixdate, RFC 9110) `ahead` from now.
fn retry_at(response: &mut Response, ahead: Duration) {
    let at = chrono::Utc::now() + chrono::TimeDelta::from_std(ahead).unwrap();
    let date = at.format("%a, %d %b %Y %H:%M:%S GMT").to_string();
    response.headers_mut().insert("retry-after", date.parse().unwrap());
}

fn is_uuid(v: &Value) -> bool {
    let Some(s) = v.as_str() else { return false };
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.chars().all(|c| c.is_ascii_hexdigit()))
}

/// express-validator's shape.
fn field_error(path: &str, value: &Value, msg: &str) -> Value {
    json!({ "type": "field", "value": value, "msg": msg, "path": path, "location": "body" })
}

async fn exchange(State(fake): State<FakeIndex>, headers: HeaderMap) -> Response {
    if let Some(r) = fake.enter("exchange", &headers).await {
        return r;
    }
    let Some(token) = bearer(&headers) else {
        return error_response(401, json!({ "error": "Missing bearer token." }), None);
    };
    let issuer = {
        let mut d = fake.data.lock().unwrap();
        d.bearers.push(token.clone());
        d.issuer.clone()
    };
    let claims = match verify_index_token(issuer.as_deref(), &token).await {
        Some(c) => c,
        None => return error_response(401, json!({ "error": "Unauthorized" }), None),
    };
    let scope = claims["scope"].as_str().unwrap_or_default().to_string();
    if !scope.split_whitespace().any(|s| s == "privy:token:exchange") {
        return error_response(403, json!({ "error": "insufficient_scope" }), None);
    }
    if claims.get("jti").is_none() {
        let body = json!({ "error": "invalid_token", "error_description": "Token missing jti claim" });
        return error_response(400, body, None);
    }
    let mut d = fake.data.lock().unwrap();
    let privy = format!("privy-{}", d.privy.len() + 1);
    d.privy.insert(privy.clone());
    Json(json!({
        "privyAccessToken": privy, "expiresAt": 1_900_000_000_000u64, "issuedAt": 1_800_000_000_000u64,
        "userId": ME, "scope": scope,
    }))
    .into_response()
}

/// The claims of `token` if Index's authorization server signed it (its
/// current JWKS) and it has not expired.
async fn verify_index_token(issuer: Option<&str>, token: &str) -> Option<Value> {
    let issuer = issuer?;
    let header = jsonwebtoken::decode_header(token).ok()?;
    let config: Value = reqwest::get(format!("{issuer}/.well-known/openid-configuration"))
        .await
        .ok()?
        .json()
        .await
        .ok()?;
    let keys: jsonwebtoken::jwk::JwkSet = reqwest::get(config["jwks_uri"].as_str()?)
        .await
        .ok()?
        .json()
        .await
        .ok()?;
    let key = keys.find(header.kid.as_deref()?)?;
    let mut validation = jsonwebtoken::Validation::new(header.alg);
    validation.set_issuer(&[issuer]);
    validation.validate_aud = false;
    let key = jsonwebtoken::DecodingKey::from_jwk(key).ok()?;
    jsonwebtoken::decode::<Value>(token, &key, &validation)
        .ok()
        .map(|d| d.claims)
}

async fn discover_new(State(fake): State<FakeIndex>, headers: HeaderMap, mut form: Multipart) -> Response {
    if let Some(r) = fake.enter("new", &headers).await {
        return r;
    }
    if let Some(r) = fake.refuse(&headers) {
        return r;
    }
    let mut payload = None;
    while let Ok(Some(field)) = form.next_field().await {
        if field.name() == Some("payload") {
            payload = field.text().await.ok();
        }
    }
    let Some(payload) = payload.filter(|p| !p.trim().is_empty()) else {
        return error_response(
            400,
            json!({ "error": "Must provide either files or payload text" }),
            None,
        );
    };
    let mut d = fake.data.lock().unwrap();
    d.payloads.push(payload.clone());
    if d.no_intents {
        return Json(
            json!({ "success": true, "intents": [], "filesProcessed": 0, "linksProcessed": 0, "intentsGenerated": 0 }),
        )
        .into_response();
    }
    // Under 100 characters: one intent as written; longer: one per section body.
    let texts: Vec<String> = if payload.chars().count() < 100 {
        vec![payload.trim().to_string()]
    } else {
        payload
            .split("\n\n")
            .filter(|p| p.starts_with("=== "))
            .filter_map(|p| p.split_once('\n').map(|(_, body)| body.chars().take(120).collect()))
            .collect()
    };
    let visible_from = Instant::now() + d.fresh_delay;
    let mut created = Vec::new();
    for text in texts {
        let id = format!("30000000-0000-4000-8000-{:012}", d.intents.len());
        d.intents.push(Intent {
            id: id.clone(),
            user: ME.into(),
            payload: text.clone(),
            created_at: "2025-12-02T10:00:00.000Z".into(),
            archived: false,
        });
        for n in 0..d.fresh_matches {
            let theirs = format!("20000000-0000-4000-8000-{n:012}");
            d.stakes.push(Stake {
                intents: vec![id.clone(), theirs],
                stake: 5000.0 - n as f64,
                reasoning: Some("Fresh match".into()),
                visible_from,
            });
        }
        created.push(json!({
            "id": id, "payload": text, "summary": null, "isIncognito": false,
            "createdAt": "2025-12-02T10:00:00.000Z", "updatedAt": "2025-12-02T10:00:00.000Z", "userId": ME,
        }));
    }
    let n = created.len();
    Json(
        json!({ "success": true, "intents": created, "filesProcessed": 0, "linksProcessed": 0, "intentsGenerated": n }),
    )
    .into_response()
}

/// `PATCH /intents/:id/archive`, as `protocol/src/routes/intents.ts` answers
/// it: 400 for an ID that is not a UUID, 404 for an intent that is not
/// there or already archived, 403 for someone else's.
async fn archive_intent(State(fake): State<FakeIndex>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    if let Some(r) = fake.enter("archive", &headers).await {
        return r;
    }
    if let Some(r) = fake.refuse(&headers) {
        return r;
    }
    let id_value = Value::String(id.clone());
    if !is_uuid(&id_value) {
        let error = json!({ "type": "field", "value": id, "msg": "Invalid value", "path": "id", "location": "params" });
        return error_response(400, json!({ "errors": [error] }), None);
    }
    let mut d = fake.data.lock().unwrap();
    let Some(intent) = d.intents.iter_mut().find(|i| i.id == id && !i.archived) else {
        return error_response(404, json!({ "error": "Intent not found" }), None);
    };
    if intent.user != ME {
        return error_response(403, json!({ "error": "Access denied" }), None);
    }
    intent.archived = true;
    Json(json!({ "message": "Intent archived successfully" })).into_response()
}

async fn discover_filter(State(fake): State<FakeIndex>, headers: HeaderMap, Json(body): Json<Value>) -> Response {
    if let Some(r) = fake.enter("filter", &headers).await {
        return r;
    }
    if let Some(r) = fake.refuse(&headers) {
        return r;
    }
    let mut errors = Vec::new();
    for key in ["intentIds", "userIds", "indexIds"] {
        match body.get(key) {
            None => {}
            Some(Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    if !is_uuid(item) {
                        errors.push(field_error(&format!("{key}[{i}]"), item, "Invalid value"));
                    }
                }
            }
            Some(other) => errors.push(field_error(key, other, "Invalid value")),
        }
    }
    if let Some(sources) = body.get("sources") {
        for (i, s) in sources.as_array().into_iter().flatten().enumerate() {
            let kind = s.get("type").cloned().unwrap_or(Value::Null);
            if !matches!(kind.as_str(), Some("file" | "integration" | "link")) {
                errors.push(field_error(&format!("sources[{i}].type"), &kind, "Invalid value"));
            }
            let id = s.get("id").cloned().unwrap_or(Value::Null);
            if !is_uuid(&id) {
                errors.push(field_error(&format!("sources[{i}].id"), &id, "Invalid value"));
            }
        }
    }
    if let Some(v) = body.get("excludeDiscovered").filter(|v| !v.is_boolean()) {
        errors.push(field_error("excludeDiscovered", v, "Invalid value"));
    }
    let page = body.get("page").map_or(Some(1), |v| v.as_u64().filter(|p| *p >= 1));
    let limit = body
        .get("limit")
        .map_or(Some(50), |v| v.as_u64().filter(|l| (1..=100).contains(l)));
    if page.is_none() {
        errors.push(field_error("page", &body["page"], "Invalid value"));
    }
    if limit.is_none() {
        errors.push(field_error("limit", &body["limit"], "Invalid value"));
    }
    if !errors.is_empty() {
        return error_response(400, json!({ "errors": errors }), None);
    }
    let (page, limit) = (page.unwrap(), limit.unwrap());
    let exclude = body.get("excludeDiscovered").and_then(Value::as_bool).unwrap_or(true);
    let strings = |key: &str| -> Option<HashSet<String>> {
        body.get(key)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_lowercase)).collect())
    };
    let (wanted_intents, wanted_users) = (strings("intentIds"), strings("userIds"));

    let mut d = fake.data.lock().unwrap();
    d.filter_bodies.push(body.clone());
    let mine: HashSet<String> = d
        .intents
        .iter()
        .filter(|i| i.user == ME && !i.archived && wanted_intents.as_ref().is_none_or(|w| w.contains(&i.id)))
        .map(|i| i.id.clone())
        .collect();
    let now = Instant::now();
    // user → (total stake, [(caller's intent id, its stake, reasonings)])
    type Shared = (String, f64, Vec<String>);
    let mut by_user: HashMap<String, (f64, Vec<Shared>)> = HashMap::new();
    for stake in d.stakes.iter().filter(|s| s.visible_from <= now && s.intents.len() > 1) {
        let owner = |id: &str| d.intents.iter().find(|i| i.id == id).map(|i| i.user.clone());
        let ours: Vec<&String> = stake.intents.iter().filter(|i| mine.contains(*i)).collect();
        if ours.is_empty() {
            continue;
        }
        for other in stake.intents.iter().filter_map(|i| owner(i)).filter(|u| u != ME) {
            if wanted_users.as_ref().is_some_and(|w| !w.contains(&other)) || (exclude && d.connected.contains(&other)) {
                continue;
            }
            let entry = by_user.entry(other).or_default();
            entry.0 += stake.stake;
            for id in &ours {
                match entry.1.iter_mut().find(|(i, ..)| i == *id) {
                    Some(e) => {
                        e.1 += stake.stake;
                        if let Some(r) = &stake.reasoning
                            && !e.2.contains(r)
                        {
                            e.2.push(r.clone());
                        }
                    }
                    None => entry
                        .1
                        .push(((*id).clone(), stake.stake, stake.reasoning.iter().cloned().collect())),
                }
            }
        }
    }
    if d.include_self && !mine.is_empty() {
        by_user.insert(
            ME.into(),
            (1e9, vec![(mine.iter().next().unwrap().clone(), 1.0, vec![])]),
        );
    }
    let mut ranked: Vec<_> = by_user.into_iter().collect();
    ranked.sort_by(|a, b| b.1.0.total_cmp(&a.1.0).then(a.0.cmp(&b.0)));
    let total = ranked.len() as u64;
    let start = ((page - 1) * limit).min(total) as usize;
    let end = (page * limit).min(total) as usize;
    let results: Vec<Value> = ranked[start..end]
        .iter()
        .map(|(uid, (total, intents))| {
            let user = d.users.iter().find(|u| &u.id == uid).unwrap();
            json!({
                "user": { "id": user.id, "name": user.name, "email": user.email, "avatar": user.avatar, "intro": user.intro },
                "totalStake": total,
                "intents": intents.iter().map(|(id, stake, reasonings)| {
                    let intent = d.intents.iter().find(|i| &i.id == id).unwrap();
                    json!({ "intent": { "id": intent.id, "payload": intent.payload, "summary": null, "createdAt": intent.created_at },
                            "totalStake": stake, "reasonings": reasonings })
                }).collect::<Vec<_>>(),
            })
        })
        .collect();
    Json(json!({
        "results": results,
        "pagination": { "page": page, "limit": limit, "hasNext": (end as u64) < total, "hasPrev": page > 1 },
        "filters": {
            "intentIds": body.get("intentIds"), "userIds": body.get("userIds"), "indexIds": body.get("indexIds"),
            "sources": body.get("sources"), "excludeDiscovered": exclude,
        },
    }))
    .into_response()
}

/// `/alt/discover/filter`: counted as `alt_filter`, then served as `/api/discover/filter`.
async fn alt_discover_filter(State(fake): State<FakeIndex>, headers: HeaderMap, body: Json<Value>) -> Response {
    *fake.data.lock().unwrap().calls.entry("alt_filter").or_default() += 1;
    discover_filter(State(fake), headers, body).await
}

/// `/alt/synthesis/vibecheck`: counted as `alt_vibecheck`, then served as `/api/synthesis/vibecheck`.
async fn alt_vibecheck(State(fake): State<FakeIndex>, headers: HeaderMap, body: Json<Value>) -> Response {
    *fake.data.lock().unwrap().calls.entry("alt_vibecheck").or_default() += 1;
    vibecheck(State(fake), headers, body).await
}

async fn vibecheck(State(fake): State<FakeIndex>, headers: HeaderMap, Json(body): Json<Value>) -> Response {
    let now = fake.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    fake.peak.fetch_max(now, Ordering::SeqCst);
    let response = vibecheck_inner(&fake, &headers, body).await;
    fake.in_flight.fetch_sub(1, Ordering::SeqCst);
    response
}

async fn vibecheck_inner(fake: &FakeIndex, headers: &HeaderMap, body: Value) -> Response {
    let target = body.get("targetUserId").cloned().unwrap_or(Value::Null);
    if let Some(t) = target.as_str() {
        let mut d = fake.data.lock().unwrap();
        d.vibe_calls.entry(t.to_string()).or_default().push(Instant::now());
        d.vibe_bodies.push(body.clone());
    }
    if let Some(r) = fake.enter("vibecheck", headers).await {
        return r;
    }
    if let Some(r) = fake.refuse(headers) {
        return r;
    }
    if !is_uuid(&target) {
        return error_response(
            400,
            json!({ "errors": [field_error("targetUserId", &target, "Target user ID must be a valid UUID")] }),
            None,
        );
    }
    let target = target.as_str().unwrap().to_string();
    if target == ME {
        return error_response(400, json!({ "error": "Cannot generate synthesis for yourself" }), None);
    }
    let failure = {
        let mut d = fake.data.lock().unwrap();
        match d.vibe_failures.get_mut(&target) {
            Some(f) if f.remaining > 0 => {
                f.remaining -= 1;
                Some(f.clone())
            }
            _ => None,
        }
    };
    if let Some(f) = failure {
        let mut response = error_response(
            f.status,
            json!({ "error": "Failed to generate synthesis" }),
            f.retry_after,
        );
        if let Some(ahead) = f.retry_after_date {
            retry_at(&mut response, ahead);
        }
        return response;
    }
    // The LLM takes a while.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let d = fake.data.lock().unwrap();
    let Some(user) = d.users.iter().find(|u| u.id == target) else {
        return error_response(404, json!({ "error": "User not found" }), None);
    };
    if d.empty_synthesis.contains(&target) {
        return Json(json!({ "synthesis": "", "targetUserId": target, "contextUserId": ME })).into_response();
    }
    let intent = body
        .get("intentIds")
        .and_then(|v| v.get(0))
        .and_then(Value::as_str)
        .unwrap_or(INTENT_A);
    let mut synthesis = format!(
        "You and {} could [build robots together](https://index.network/intents/{intent}); they mentioned {} too.",
        user.name, user.email
    );
    if let Some(limit) = body.pointer("/options/characterLimit").and_then(Value::as_u64) {
        synthesis = synthesis.chars().take(limit as usize).collect();
    }
    Json(json!({ "synthesis": synthesis, "targetUserId": target, "contextUserId": ME })).into_response()
}
