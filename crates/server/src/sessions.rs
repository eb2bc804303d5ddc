//! Who opened each streamable HTTP session, and how many sessions a caller
//! may hold. A session answers only the caller that opened it (its project,
//! and its subject for OAuth); to anyone else it reads as unknown, exactly as
//! a wrong id does. rmcp's session manager keeps the sessions themselves.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::WorkerTransport;
use rmcp::transport::common::server_side_http::{ServerSseMessage, SessionId};
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker,
};
use sha2::{Digest, Sha256};

use gateway::auth::Caller;

/// A session unused this long may be closed to make room for a new one.
pub(super) const EVICTABLE_AFTER: Duration = Duration::from_secs(60);

/// Who a session belongs to: a project, and for OAuth callers the subject.
/// Gateway tokens and anonymous access name only a project, so any of the
/// project's tokens (a rotated one too) is the same caller.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct Owner {
    project: i64,
    /// The OAuth issuer and subject.
    subject: Option<(String, String)>,
}

impl Owner {
    /// The caller as a session owner.
    pub(super) fn of(caller: &Caller) -> Self {
        let subject = match (&caller.issuer, &caller.subject) {
            (Some(issuer), Some(subject)) => Some((issuer.clone(), subject.clone())),
            _ => None,
        };
        Self {
            project: caller.project.id,
            subject,
        }
    }
}

/// Why a new session was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(super) enum Full {
    /// The caller holds its limit of sessions, none idle.
    #[error(
        "this caller already holds {0} open sessions, none idle for {secs} s ([http] max_sessions_per_caller); end unused sessions with HTTP DELETE",
        secs = EVICTABLE_AFTER.as_secs()
    )]
    Caller(usize),
    /// The gateway holds its limit of sessions, none idle.
    #[error(
        "the gateway already holds {0} open sessions, none idle for {secs} s ([http] max_sessions); try again later",
        secs = EVICTABLE_AFTER.as_secs()
    )]
    Gateway(usize),
}

#[derive(Debug)]
struct Held {
    owner: Owner,
    last_seen: Instant,
}

#[derive(Debug, Default)]
struct Book {
    held: HashMap<SessionId, Held>,
    /// Sessions admitted whose id is not known yet, by owner.
    opening: HashMap<Owner, usize>,
}

impl Book {
    fn opening_total(&self) -> usize {
        self.opening.values().sum()
    }

    fn count(&self, owner: &Owner) -> usize {
        self.held.values().filter(|h| &h.owner == owner).count() + self.opening.get(owner).copied().unwrap_or(0)
    }

    /// The least recently used session (of `owner`, or of anyone) idle long enough to close.
    fn idlest(&self, owner: Option<&Owner>, now: Instant) -> Option<SessionId> {
        self.held
            .iter()
            .filter(|(_, h)| owner.is_none_or(|o| &h.owner == o))
            .filter(|(_, h)| now.duration_since(h.last_seen) >= EVICTABLE_AFTER)
            .min_by_key(|(_, h)| h.last_seen)
            .map(|(id, _)| id.clone())
    }
}

/// rmcp's local session manager, with each session's owner beside it.
#[derive(Debug)]
pub(super) struct Sessions {
    inner: LocalSessionManager,
    book: Mutex<Book>,
    max_total: usize,
    max_per_caller: usize,
}

/// A place for one more session, held until its id is known ([`Admission::bind`]) or dropped.
#[derive(Debug)]
pub(super) struct Admission {
    sessions: Arc<Sessions>,
    owner: Option<Owner>,
}

impl Admission {
    /// The admitted session got `id`: it is `owner`'s from now on.
    pub(super) fn bind(mut self, id: SessionId) {
        let Some(owner) = self.owner.take() else { return };
        let mut book = self.sessions.book();
        release(&mut book, &owner);
        book.held.insert(
            id,
            Held {
                owner,
                last_seen: Instant::now(),
            },
        );
        drop(book);
        telemetry::sessions_open(self.sessions.book().held.len());
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        if let Some(owner) = self.owner.take() {
            release(&mut self.sessions.book(), &owner);
        }
    }
}

fn release(book: &mut Book, owner: &Owner) {
    if let Some(n) = book.opening.get_mut(owner) {
        *n -= 1;
        if *n == 0 {
            book.opening.remove(owner);
        }
    }
}

impl Sessions {
    /// At most `max_total` sessions, and `max_per_caller` for any one caller.
    pub(super) fn new(max_total: usize, max_per_caller: usize) -> Self {
        Self {
            inner: LocalSessionManager::default(),
            book: Mutex::default(),
            max_total,
            max_per_caller,
        }
    }

    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        self.book.lock().expect("sessions lock")
    }

    /// Room for one more session of `owner`: the idlest sessions over a
    /// limit are closed first; when none is idle enough, it is refused.
    pub(super) async fn admit(self: &Arc<Self>, owner: Owner) -> Result<Admission, Full> {
        loop {
            let evict = {
                let mut book = self.book();
                let now = Instant::now();
                if book.count(&owner) >= self.max_per_caller {
                    Some(
                        book.idlest(Some(&owner), now)
                            .ok_or(Full::Caller(self.max_per_caller))?,
                    )
                } else if book.held.len() + book.opening_total() >= self.max_total {
                    Some(book.idlest(None, now).ok_or(Full::Gateway(self.max_total))?)
                } else {
                    *book.opening.entry(owner.clone()).or_default() += 1;
                    None
                }
            };
            match evict {
                None => {
                    return Ok(Admission {
                        sessions: self.clone(),
                        owner: Some(owner),
                    });
                }
                Some(id) => {
                    tracing::info!(session = %tag(&id), "closed an idle session to make room");
                    telemetry::session_evicted();
                    // Closing removes it from the book (close_session below).
                    let _ = SessionManager::close_session(self.as_ref(), &id).await;
                }
            }
        }
    }

    /// Whether session `id` is `owner`'s; marks it used if so.
    pub(super) fn claim(&self, id: &str, owner: &Owner) -> bool {
        let mut book = self.book();
        match book.held.get_mut(id) {
            Some(held) if &held.owner == owner => {
                held.last_seen = Instant::now();
                true
            }
            _ => false,
        }
    }
}

/// A session id as logs may show it: a hash prefix, enough to correlate.
pub(super) fn tag(id: &str) -> String {
    let digest = Sha256::digest(id.as_bytes());
    digest[..4].iter().map(|b| format!("{b:02x}")).collect()
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.inner.create_session().await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    /// A DELETE, an idle session's end, or an eviction: the owner goes with it.
    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let open = {
            let mut book = self.book();
            book.held.remove(id);
            book.held.len()
        };
        telemetry::sessions_open(open);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }
}

#[cfg(test)]
impl Owner {
    /// An owner for a test: a project, and an OAuth subject if given.
    pub(super) fn for_test(project: i64, subject: Option<&str>) -> Self {
        Owner {
            project,
            subject: subject.map(|s| ("https://idp".to_string(), s.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(project: i64, subject: Option<&str>) -> Owner {
        Owner::for_test(project, subject)
    }

    fn hold(sessions: &Sessions, id: &str, who: &Owner, idle: Duration) {
        sessions.book().held.insert(
            id.into(),
            Held {
                owner: who.clone(),
                last_seen: Instant::now() - idle,
            },
        );
    }

    #[test]
    fn a_session_answers_only_its_owner() {
        let sessions = Sessions::new(10, 10);
        let alice = owner(1, Some("alice"));
        let bob = owner(1, Some("bob"));
        hold(&sessions, "s1", &alice, Duration::ZERO);
        assert!(sessions.claim("s1", &alice));
        assert!(!sessions.claim("s1", &bob), "same project, another subject");
        assert!(!sessions.claim("s1", &owner(2, None)), "another project");
        assert!(
            !sessions.claim("s1", &owner(1, None)),
            "a gateway token of the project is not alice"
        );
        hold(&sessions, "s3", &owner(3, None), Duration::ZERO);
        assert!(
            sessions.claim("s3", &owner(3, None)),
            "any token of a token-opened session's project"
        );
        assert!(!sessions.claim("s2", &alice), "an unknown id");
    }

    #[tokio::test]
    async fn over_a_limit_the_idlest_goes_first_and_busy_sessions_refuse() {
        let sessions = Arc::new(Sessions::new(3, 2));
        let a = owner(1, None);
        let b = owner(2, None);
        hold(&sessions, "a-old", &a, EVICTABLE_AFTER * 3);
        hold(&sessions, "a-older", &a, EVICTABLE_AFTER * 4);
        let admitted = sessions.admit(a.clone()).await.expect("an idle one makes room");
        assert!(!sessions.claim("a-older", &a), "the idlest was closed");
        assert!(sessions.claim("a-old", &a));
        admitted.bind("a-new".into());
        // a-old was just used: the caller is full and nothing is idle.
        assert_eq!(sessions.admit(a.clone()).await.unwrap_err(), Full::Caller(2));
        hold(&sessions, "b-busy", &b, Duration::ZERO);
        assert_eq!(sessions.admit(b.clone()).await.unwrap_err(), Full::Gateway(3));
        assert_eq!(sessions.book().held.len(), 3);
    }

    #[tokio::test]
    async fn an_admission_counts_until_bound_or_dropped() {
        let sessions = Arc::new(Sessions::new(10, 1));
        let a = owner(1, None);
        let first = sessions.admit(a.clone()).await.unwrap();
        assert_eq!(sessions.admit(a.clone()).await.unwrap_err(), Full::Caller(1));
        drop(first);
        let second = sessions.admit(a.clone()).await.unwrap();
        second.bind("s".into());
        assert!(sessions.claim("s", &a));
        assert_eq!(sessions.book().held.len(), 1);
    }

    #[test]
    fn tags_hide_the_id_but_correlate() {
        let id = "0b5c7c59-5a1d-4b7e-9d8a-1f0e2d3c4b5a";
        assert_eq!(tag(id), tag(id));
        assert_eq!(tag(id).len(), 8);
        assert!(!id.contains(&tag(id)));
    }
}
