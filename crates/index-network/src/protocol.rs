//! The Index Protocol API over HTTP: token exchange, `/discover/new`,
//! `/discover/filter`, `/synthesis/vibecheck` and
//! `/intents/{id}/archive`. Each call has its own
//! timeout; every failure becomes an [`Error`] whose message a person can act
//! on, and one log line with what an operator needs (endpoint, status, the
//! names of the fields sent, `Retry-After`, the start of the body).

use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use tracing::warn;

use super::IndexConfig;
use super::args::Source;

/// The scope a token needs before it may be exchanged.
pub(super) const EXCHANGE_SCOPE: &str = "privy:token:exchange";
/// Header carrying the gateway's request id to the Protocol API.
pub(super) const REQUEST_ID_HEADER: &str = "x-request-id";
/// How the token exchange is named in messages.
const EXCHANGE: &str = "Token exchange";
/// Longest backend body quoted in an error or a log line, in characters.
const SNIPPET: usize = 500;
/// Bytes of a body read for its snippet (redaction needs whole words).
const SNIPPET_WINDOW: usize = 4096;

/// Why a Protocol API call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(super) enum Error {
    /// The upstream request carried no bearer token.
    #[error(
        "not signed in to Index Network: connect to this gateway with an access token from Index Network's authorization server (OAuth sign-in; the gateway's [index] oauth_issuer); a gateway token is never sent to Index"
    )]
    MissingAuth,
    /// The exchanged token may not be used for the Protocol API.
    #[error("the token lacks the '{EXCHANGE_SCOPE}' scope; sign in again and grant Index Network access")]
    Scope,
    /// The call did not finish within its timeout.
    #[error("{what} request timed out after {} ms", after.as_millis())]
    Timeout {
        /// Which call.
        what: &'static str,
        /// Its timeout.
        after: Duration,
    },
    /// The call never got an HTTP answer.
    #[error("{what} request failed: {message}")]
    Network {
        /// Which call.
        what: &'static str,
        /// The transport error.
        message: String,
    },
    /// A non-2xx answer; `message` is the backend's `error` (or validation
    /// messages), else the status text.
    #[error("{what} failed ({status}): {message}")]
    Status {
        /// Which call.
        what: &'static str,
        /// HTTP status.
        status: u16,
        /// What the backend said.
        message: String,
        /// `Retry-After`, when sent.
        retry_after: Option<Duration>,
    },
    /// A 2xx answer without the expected JSON.
    #[error("{what} answered without valid JSON: {message}")]
    BadJson {
        /// Which call.
        what: &'static str,
        /// The parse error.
        message: String,
    },
}

impl Error {
    /// Worth retrying: network trouble, timeouts, 5xx and 429.
    pub(super) fn is_transient(&self) -> bool {
        match self {
            Error::Timeout { .. } | Error::Network { .. } => true,
            Error::Status { status, .. } => *status >= 500 || *status == 429,
            _ => false,
        }
    }

    /// The wait the backend asked for, if any.
    pub(super) fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Whether the caller must authenticate (again).
    pub(super) fn needs_auth(&self) -> bool {
        match self {
            Error::MissingAuth | Error::Scope => true,
            Error::Status { status, what, .. } => *status == 401 || (*what == EXCHANGE && (400..500).contains(status)),
            _ => false,
        }
    }
}

/// What the token exchange gives back.
#[derive(Debug, Clone)]
pub(super) struct Session {
    /// Bearer for the Protocol API.
    pub access_token: String,
    /// The Index user behind it (their own matches get no VibeCheck).
    pub user_id: Option<String>,
    /// The gateway's request id, sent along for correlation.
    pub request_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Exchanged {
    privy_access_token: String,
    user_id: Option<String>,
    #[serde(default)]
    scope: Option<Scopes>,
}

/// `scope` arrives as `"a b"` or `["a", "b"]`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Scopes {
    Words(String),
    List(Vec<String>),
}

impl Scopes {
    fn contains(&self, scope: &str) -> bool {
        match self {
            Scopes::Words(s) => s.split_whitespace().any(|w| w == scope),
            Scopes::List(l) => l.iter().any(|w| w == scope),
        }
    }
}

/// One intent, as `/discover/new` and `/discover/filter` return it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Intent {
    /// Its UUID.
    pub id: String,
    /// The intent text.
    pub payload: String,
    /// A short summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// When it was created, as an ISO 8601 string.
    #[serde(deserialize_with = "iso_date")]
    pub created_at: String,
    /// Fields this version of the API added; kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `/discover/new`'s answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Extracted {
    /// The intents created (may be empty).
    pub intents: Vec<Intent>,
    /// Files read.
    #[serde(default)]
    pub files_processed: u64,
    /// Links read.
    #[serde(default)]
    pub links_processed: u64,
    /// How many intents the backend generated.
    #[serde(default)]
    pub intents_generated: u64,
}

/// A matched person.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct User {
    /// Their UUID.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Never passed on (see [`super::cards`]); kept in the type to validate the shape.
    pub email: Option<String>,
    /// Avatar URL.
    pub avatar: Option<String>,
    /// Self-introduction.
    pub intro: Option<String>,
}

/// One of the caller's intents that connects to a match.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct MatchedIntent {
    /// The intent.
    pub intent: Intent,
    /// Stake behind this connection.
    #[serde(deserialize_with = "number")]
    pub total_stake: f64,
    /// Why the agents think it matches.
    #[serde(default)]
    pub reasonings: Vec<String>,
}

/// One discovery result.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Match {
    /// Who.
    pub user: User,
    /// Total stake over all connecting intents.
    #[serde(deserialize_with = "number")]
    pub total_stake: f64,
    /// The caller's intents that connect.
    #[serde(default)]
    pub intents: Vec<MatchedIntent>,
    /// Fields this version of the API added; kept as sent.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Page position.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Pagination {
    /// 1-based page.
    pub page: u64,
    /// Page size.
    pub limit: u64,
    /// A later page exists.
    pub has_next: bool,
    /// An earlier page exists.
    pub has_prev: bool,
}

/// `/discover/filter`'s answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Filtered {
    /// Matches, best first.
    pub results: Vec<Match>,
    /// Where this page is.
    pub pagination: Pagination,
    /// The filters the backend applied, as it echoed them.
    #[serde(default)]
    pub filters: Value,
}

/// The `/discover/filter` request body; absent fields are left out.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct FilterRequest<'a> {
    /// Intents to match from.
    pub intent_ids: &'a [String],
    /// Only these users.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_ids: Option<&'a [String]>,
    /// Only these indexes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_ids: Option<&'a [String]>,
    /// Only these sources.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sources: Option<&'a [Source]>,
    /// Leave out users already connected.
    pub exclude_discovered: bool,
    /// 1-based page.
    pub page: u64,
    /// Page size.
    pub limit: u64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct VibeCheckRequest<'a> {
    target_user_id: &'a str,
    intent_ids: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    index_ids: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    options: Option<VibeCheckOptions>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct VibeCheckOptions {
    character_limit: u64,
}

#[derive(Debug, Deserialize)]
struct VibeCheckResponse {
    synthesis: String,
}

/// A client of one Protocol API deployment.
#[derive(Debug, Clone)]
pub(super) struct Protocol {
    http: reqwest::Client,
    config: std::sync::Arc<IndexConfig>,
}

impl Protocol {
    /// A client for `config` (which must have its URLs).
    pub(super) fn new(config: std::sync::Arc<IndexConfig>) -> Self {
        let http = reqwest::Client::builder()
            .user_agent(concat!("mcp-gateway/", env!("CARGO_PKG_VERSION")))
            .build()
            .expect("the HTTP client builds with default TLS settings");
        Self { http, config }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.config.protocol_api_url.trim_end_matches('/'))
    }

    /// Exchanges the caller's bearer token for a Protocol API token.
    pub(super) async fn exchange(&self, bearer: Option<&str>, request_id: &str) -> Result<Session, Error> {
        let bearer = bearer.ok_or(Error::MissingAuth)?;
        let request = self
            .http
            .post(&self.config.token_exchange_url)
            .bearer_auth(bearer)
            .header(http::header::ACCEPT, "application/json")
            .header(REQUEST_ID_HEADER, request_id);
        // Its answer carries a token: never quoted, not even when malformed.
        let call = Call {
            what: EXCHANGE,
            endpoint: "exchange",
            request_id,
            filter_keys: None,
            quote_body: false,
        };
        let answer: Result<Exchanged, Error> = send(&call, request, self.config.token_exchange_timeout).await;
        let exchanged = match answer {
            Err(Error::Status { status: 403, .. }) => return Err(Error::Scope),
            other => other?,
        };
        if exchanged.scope.as_ref().is_some_and(|s| !s.contains(EXCHANGE_SCOPE)) {
            return Err(Error::Scope);
        }
        Ok(Session {
            access_token: exchanged.privy_access_token,
            user_id: exchanged.user_id,
            request_id: request_id.to_string(),
        })
    }

    /// `POST /discover/new` (multipart, field `payload`), retried on a
    /// transient failure ([`DISCOVER_RETRY_DELAYS`]).
    pub(super) async fn discover_new(&self, session: &Session, payload: String) -> Result<Extracted, Error> {
        let call = Call {
            what: "Discover new",
            endpoint: "discover_new",
            request_id: &session.request_id,
            filter_keys: None,
            quote_body: true,
        };
        let attempt = || {
            let form = reqwest::multipart::Form::new().text("payload", payload.clone());
            let request = self
                .authorized(reqwest::Method::POST, session, &self.url("/discover/new"))
                .multipart(form);
            send(&call, request, self.config.protocol_api_timeout)
        };
        retrying(&DISCOVER_RETRY_DELAYS, attempt).await.0
    }

    /// `POST /discover/filter` (at `[index] discover_filter_url`), retried
    /// on a transient failure ([`DISCOVER_RETRY_DELAYS`]), timed (retries
    /// and all) for `mcp_gateway_index_filter_seconds`.
    pub(super) async fn discover_filter(&self, session: &Session, body: &FilterRequest<'_>) -> Result<Filtered, Error> {
        let call = Call {
            what: "Discover filter",
            endpoint: "discover_filter",
            request_id: &session.request_id,
            filter_keys: Some(field_names(body)),
            quote_body: true,
        };
        let attempt = || {
            let request = self
                .authorized(reqwest::Method::POST, session, &self.config.discover_filter_url)
                .json(body);
            send(&call, request, self.config.discover_filter_timeout)
        };
        let started = Instant::now();
        let (answer, _) = retrying(&DISCOVER_RETRY_DELAYS, attempt).await;
        let outcome = if answer.is_ok() { "ok" } else { "error" };
        crate::telemetry::index_filter(outcome, started.elapsed());
        answer
    }

    /// `POST /synthesis/vibecheck`, once. `""` is a valid answer (nothing to say).
    pub(super) async fn vibecheck(
        &self,
        session: &Session,
        target_user_id: &str,
        intent_ids: &[String],
        index_ids: Option<&[String]>,
        character_limit: Option<u64>,
    ) -> Result<String, Error> {
        let body = VibeCheckRequest {
            target_user_id,
            intent_ids,
            index_ids,
            options: character_limit.map(|character_limit| VibeCheckOptions { character_limit }),
        };
        let request = self
            .authorized(reqwest::Method::POST, session, &self.config.vibecheck_url)
            .json(&body);
        let call = Call {
            what: "VibeCheck",
            endpoint: "vibecheck",
            request_id: &session.request_id,
            filter_keys: Some(field_names(&body)),
            quote_body: true,
        };
        let answer: VibeCheckResponse = send(&call, request, self.config.vibecheck_timeout).await?;
        Ok(answer.synthesis)
    }

    /// `PATCH /intents/{id}/archive`: the caller's intent is archived (the
    /// Protocol API's removal, which the Index website can undo), once:
    /// a retry after a lost answer would find it archived already (404).
    pub(super) async fn archive_intent(&self, session: &Session, intent_id: &str) -> Result<(), Error> {
        let url = self.url(&format!("/intents/{intent_id}/archive"));
        let request = self.authorized(reqwest::Method::PATCH, session, &url);
        let call = Call {
            what: "Archive intent",
            endpoint: "archive_intent",
            request_id: &session.request_id,
            filter_keys: None,
            quote_body: true,
        };
        let _: serde::de::IgnoredAny = send(&call, request, self.config.protocol_api_timeout).await?;
        Ok(())
    }

    fn authorized(&self, method: reqwest::Method, session: &Session, url: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, url)
            .bearer_auth(&session.access_token)
            .header(http::header::ACCEPT, "application/json")
            .header(REQUEST_ID_HEADER, &session.request_id)
    }
}

/// One call to the Protocol API, as its errors, its log line and its metrics name it.
struct Call<'a> {
    /// How messages name it (`"Discover filter"`).
    what: &'static str,
    /// Its `endpoint` label in logs and metrics (`"discover_filter"`).
    endpoint: &'static str,
    /// The gateway's request id.
    request_id: &'a str,
    /// The names of the fields sent (never their values), for the failure log.
    filter_keys: Option<String>,
    /// Whether a failure may quote the body; never for the token exchange,
    /// whose answer is a token.
    quote_body: bool,
}

/// Delays before the retries of `/discover/new` and `/discover/filter` after
/// a transient failure: two retries, the second wait twice the first
/// (VibeCheck's are `[index] vibecheck_retry_delays_ms`).
const DISCOVER_RETRY_DELAYS: [Duration; 2] = [Duration::from_millis(250), Duration::from_millis(500)];

/// Longest `Retry-After` honoured before a retry; a longer ask waits this long.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(10);

/// Runs `attempt`, and again after each of `delays` while it fails
/// transiently ([`Error::is_transient`]); a longer `Retry-After` is waited
/// instead of the delay, up to [`MAX_RETRY_AFTER`]. The last answer, and
/// how many retries it took.
pub(super) async fn retrying<T, F: Future<Output = Result<T, Error>>>(
    delays: &[Duration],
    mut attempt: impl FnMut() -> F,
) -> (Result<T, Error>, usize) {
    let mut retries = 0;
    loop {
        let error = match attempt().await {
            Ok(answer) => return (Ok(answer), retries),
            Err(e) => e,
        };
        let Some(delay) = delays.get(retries).filter(|_| error.is_transient()) else {
            return (Err(error), retries);
        };
        let wait = match error.retry_after() {
            Some(asked) => asked.min(MAX_RETRY_AFTER).max(*delay),
            None => *delay,
        };
        tokio::time::sleep(wait).await;
        retries += 1;
    }
}

/// Sends, bounded by `timeout`, and reads a JSON answer. A `Retry-After` is
/// counted by endpoint; a failure is logged once, with the status, the
/// field names sent, the wait asked for and a redacted body snippet.
async fn send<T: DeserializeOwned>(
    call: &Call<'_>,
    request: reqwest::RequestBuilder,
    timeout: Duration,
) -> Result<T, Error> {
    let what = call.what;
    let exchange = async {
        let response = request.send().await.map_err(|e| Error::Network {
            what,
            message: vocab::text::with_sources(&e),
        })?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(http::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, chrono::Utc::now()));
        if let Some(wait) = retry_after {
            crate::telemetry::index_retry_after(call.endpoint, wait);
        }
        let body = response.bytes().await.map_err(|e| Error::Network {
            what,
            message: vocab::text::with_sources(&e),
        })?;
        if !status.is_success() {
            let quoted = call.quote_body.then(|| snippet(&body));
            warn!(
                endpoint = call.endpoint,
                request_id = call.request_id,
                status = status.as_u16(),
                filter_keys = call.filter_keys.as_deref(),
                retry_after_s = retry_after.map(|d| d.as_secs()),
                body = quoted.as_deref(),
                "index call failed"
            );
            return Err(Error::Status {
                what,
                status: status.as_u16(),
                message: backend_message(&body)
                    .unwrap_or_else(|| status.canonical_reason().unwrap_or("unexpected status").to_string()),
                retry_after,
            });
        }
        serde_json::from_slice(&body).map_err(|e| Error::BadJson {
            what,
            message: if call.quote_body {
                format!("{e} (body starts: {})", snippet(&body))
            } else {
                e.to_string()
            },
        })
    };
    let answer = tokio::time::timeout(timeout, exchange)
        .await
        .unwrap_or(Err(Error::Timeout { what, after: timeout }));
    if let Err(e) = &answer
        && !matches!(e, Error::Status { .. })
    {
        warn!(
            endpoint = call.endpoint,
            request_id = call.request_id,
            filter_keys = call.filter_keys.as_deref(),
            error = %e,
            "index call failed"
        );
    }
    answer
}

/// `Retry-After` (RFC 9110, section 10.2.3): delay-seconds, or an HTTP-date
/// (IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`) as the wait from `now`;
/// a date already past asks for no wait. None when it is neither.
fn parse_retry_after(value: &str, now: chrono::DateTime<chrono::Utc>) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return value.parse().ok().map(Duration::from_secs);
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    Some(
        (at.with_timezone(&chrono::Utc) - now)
            .to_std()
            .unwrap_or(Duration::ZERO),
    )
}

/// The names of the top-level fields `body` serialises to, comma-separated:
/// which filters a request used, never their values.
fn field_names(body: &impl Serialize) -> String {
    match serde_json::to_value(body) {
        Ok(Value::Object(fields)) => fields.keys().map(String::as_str).collect::<Vec<_>>().join(","),
        _ => String::new(),
    }
}

/// The backend's own words: `{ error }`, else express-validator's `{ errors: [{ path, msg }] }`.
fn backend_message(body: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(body).ok()?;
    if let Some(e) = value.get("error").and_then(Value::as_str) {
        let detail = value
            .get("error_description")
            .or_else(|| value.get("message"))
            .and_then(Value::as_str);
        return Some(match detail {
            Some(d) => format!("{e} ({d})"),
            None => e.to_string(),
        });
    }
    let errors = value.get("errors")?.as_array()?;
    let messages: Vec<String> = errors
        .iter()
        .map(|e| {
            let msg = e.get("msg").and_then(Value::as_str).unwrap_or("Invalid value");
            match e.get("path").and_then(Value::as_str) {
                Some(path) => format!("{path}: {msg}"),
                None => msg.to_string(),
            }
        })
        .collect();
    (!messages.is_empty()).then(|| messages.join("; "))
}

/// The start of a backend body as an error or a log line may quote it: at
/// most [`SNIPPET`] characters on one line, credentials redacted (a
/// credential cut by the window is dropped whole) and e-mail addresses hidden.
fn snippet(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let head = leaks::redacted_head(text.trim(), SNIPPET_WINDOW);
    vocab::text::truncate(&vocab::text::one_line(&vocab::mask::hide_emails(&head)), SNIPPET)
}

/// Dates arrive as ISO strings (JSON of a JS `Date`) or epoch milliseconds; both become ISO 8601.
fn iso_date<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    use serde::de::Error as _;
    match Value::deserialize(d)? {
        Value::String(s) => match chrono::DateTime::parse_from_rfc3339(&s) {
            Ok(t) => Ok(t
                .with_timezone(&chrono::Utc)
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
            Err(e) => Err(D::Error::custom(format!("date '{s}' is not ISO 8601: {e}"))),
        },
        Value::Number(n) => n
            .as_i64()
            .and_then(chrono::DateTime::from_timestamp_millis)
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
            .ok_or_else(|| D::Error::custom(format!("date {n} is not epoch milliseconds"))),
        other => Err(D::Error::custom(format!("expected a date, got {other}"))),
    }
}

/// Stakes are numbers, or numeric strings in some versions of the API.
fn number<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    use serde::de::Error as _;
    match Value::deserialize(d)? {
        Value::Number(n) => n.as_f64().ok_or_else(|| D::Error::custom("stake out of range")),
        Value::String(s) => s
            .trim()
            .parse()
            .map_err(|_| D::Error::custom(format!("stake '{s}' is not a number"))),
        other => Err(D::Error::custom(format!("expected a number, got {other}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn backend_errors_are_quoted() {
        assert_eq!(
            backend_message(br#"{"error":"Access token required"}"#).as_deref(),
            Some("Access token required")
        );
        let validation = json!({ "errors": [
            { "type": "field", "value": "x", "msg": "Invalid value", "path": "intentIds[0]", "location": "body" },
            { "type": "field", "value": 0, "msg": "Invalid value", "path": "page", "location": "body" }
        ]});
        assert_eq!(
            backend_message(validation.to_string().as_bytes()).as_deref(),
            Some("intentIds[0]: Invalid value; page: Invalid value")
        );
        assert_eq!(
            backend_message(br#"{"error":"invalid_token","error_description":"Session expired"}"#).as_deref(),
            Some("invalid_token (Session expired)")
        );
        assert_eq!(backend_message(b"<html>oops</html>"), None);
    }

    #[test]
    fn results_are_validated_and_dates_normalised() {
        let body = json!({
            "results": [{
                "user": { "id": "u", "name": "Ada", "email": null, "avatar": null, "intro": null },
                "totalStake": "12.5",
                "bucket": "week",
                "intents": [{
                    "intent": { "id": "i", "payload": "p", "summary": null, "createdAt": "2025-12-02T10:00:00+01:00" },
                    "totalStake": 3,
                    "reasonings": ["r"]
                }]
            }],
            "pagination": { "page": 1, "limit": 50, "hasNext": false, "hasPrev": false },
            "filters": { "intentIds": ["i"] }
        });
        let f: Filtered = serde_json::from_value(body).unwrap();
        assert_eq!(f.results[0].total_stake, 12.5);
        assert_eq!(f.results[0].intents[0].intent.created_at, "2025-12-02T09:00:00.000Z");
        assert_eq!(f.results[0].extra["bucket"], "week");
        let epoch: Intent =
            serde_json::from_value(json!({ "id": "i", "payload": "p", "createdAt": 1764669600000i64 })).unwrap();
        assert_eq!(epoch.created_at, "2025-12-02T10:00:00.000Z");
        assert!(serde_json::from_value::<Filtered>(json!({ "results": [{}] })).is_err());
    }

    #[test]
    fn scopes_in_either_shape() {
        let words: Scopes = serde_json::from_value(json!("openid privy:token:exchange")).unwrap();
        let list: Scopes = serde_json::from_value(json!(["openid"])).unwrap();
        assert!(words.contains(EXCHANGE_SCOPE));
        assert!(!list.contains(EXCHANGE_SCOPE));
    }

    fn at(iso: &str) -> chrono::DateTime<chrono::Utc> {
        chrono::DateTime::parse_from_rfc3339(iso)
            .unwrap()
            .with_timezone(&chrono::Utc)
    }

    #[test]
    fn retry_after_in_seconds_or_as_an_http_date() {
        let now = at("1994-11-06T08:49:00Z");
        assert_eq!(parse_retry_after("120", now), Some(Duration::from_secs(120)));
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(Duration::from_secs(37))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:48:00 GMT", now),
            Some(Duration::ZERO),
            "a date in the past asks for no wait"
        );
        for garbage in ["", "soon", "-5", "1.5", "99999999999999999999999", "06 Nov 1994"] {
            assert_eq!(parse_retry_after(garbage, now), None, "{garbage:?}");
        }
    }

    #[test]
    fn snippets_are_short_one_line_and_redacted() {
        let body = format!(
            "{{\"error\": \"bad\",\n \"token\": \"ghp_{}\", \"who\": \"ada@example.com\"}} {}",
            "a1B2".repeat(9),
            "x".repeat(2000)
        );
        let s = snippet(body.as_bytes());
        assert!(s.chars().count() <= SNIPPET, "{}", s.chars().count());
        assert!(!s.contains('\n'));
        assert!(!s.contains("a1B2a1B2"), "{s}");
        assert!(!s.contains("ada@example.com"), "{s}");
        assert!(s.starts_with("{\"error\": \"bad\", \"token\":"), "{s}");
    }

    #[test]
    fn field_names_never_values() {
        let ids = ["10000000-0000-4000-8000-00000000000a".to_string()];
        let body = FilterRequest {
            intent_ids: &ids[..],
            user_ids: None,
            index_ids: Some(&ids[..]),
            sources: None,
            exclude_discovered: true,
            page: 1,
            limit: 50,
        };
        let keys = field_names(&body);
        let mut names: Vec<&str> = keys.split(',').collect();
        names.sort_unstable();
        assert_eq!(names, ["excludeDiscovered", "indexIds", "intentIds", "limit", "page"]);
        assert!(!keys.contains("1000"));
    }

    #[test]
    fn transient_errors() {
        let status = |status| Error::Status {
            what: "x",
            status,
            message: String::new(),
            retry_after: None,
        };
        assert!(status(503).is_transient());
        assert!(status(429).is_transient());
        assert!(!status(400).is_transient());
        assert!(
            Error::Timeout {
                what: "x",
                after: Duration::from_secs(1)
            }
            .is_transient()
        );
        assert!(status(401).needs_auth());
    }
}
