//! VibeCheck for every match: a pool of `concurrency` workers, a short pause
//! after each call, retries with backoff on transient failures (honouring
//! `Retry-After`), and a final failure that empties one card's synthesis
//! instead of failing the tool. Each batch's latency is a metric
//! (`mcp_gateway_index_vibecheck_batch_seconds`).

use std::time::{Duration, Instant};

use futures::StreamExt;
use serde::Serialize;
use tracing::{debug, info, warn};

use super::protocol::{Match, Protocol, Session, retrying};

/// How one VibeCheck went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Status {
    /// A synthesis came back.
    Ok,
    /// The backend had nothing to say (an empty synthesis with status 200).
    Empty,
    /// Every attempt failed.
    Failed,
    /// The match is the caller; no synthesis about yourself.
    Skipped,
}

/// One entry of `vibechecks`, aligned with `results`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct VibeCheck {
    /// The match.
    pub target_user_id: String,
    /// The text, `""` unless [`Status::Ok`].
    pub synthesis: String,
    /// The limit asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub character_limit: Option<u64>,
    /// How it went.
    pub status: Status,
}

impl VibeCheck {
    /// Whether the card should say the synthesis is unavailable.
    pub(super) fn unavailable(&self) -> bool {
        matches!(self.status, Status::Empty | Status::Failed)
    }
}

/// Pool settings.
#[derive(Debug, Clone)]
pub(super) struct Settings {
    /// Calls in flight.
    pub concurrency: usize,
    /// Pause after each call, per worker.
    pub throttle: Duration,
    /// Delay before each retry; its length is the number of retries.
    pub retry_delays: Vec<Duration>,
    /// Forwarded as `options.characterLimit`.
    pub character_limit: Option<u64>,
}

/// Totals for the invocation's log line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Tally {
    /// Syntheses received (including empty ones).
    pub success: usize,
    /// Matches left without a synthesis after every retry.
    pub failures: usize,
    /// Retries made.
    pub retries: usize,
}

/// Runs VibeCheck for every match except the caller, in `results` order.
pub(super) async fn run_all(
    protocol: &Protocol,
    session: &Session,
    results: &[Match],
    intent_ids: &[String],
    index_ids: Option<&[String]>,
    settings: &Settings,
) -> (Vec<VibeCheck>, Tally) {
    let started = Instant::now();
    // Futures collected first: a stream closure borrowing `results` trips rustc's Send inference.
    let calls: Vec<_> = results
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let target = m.user.id.clone();
            async move {
                if session.user_id.as_deref() == Some(target.as_str()) {
                    return (i, entry(&target, String::new(), Status::Skipped, settings), 0);
                }
                let (check, retries) = with_retries(protocol, session, &target, intent_ids, index_ids, settings).await;
                tokio::time::sleep(settings.throttle).await;
                (i, check, retries)
            }
        })
        .collect();
    let mut checked: Vec<(usize, VibeCheck, usize)> = futures::stream::iter(calls)
        .buffer_unordered(settings.concurrency.max(1))
        .collect()
        .await;
    checked.sort_by_key(|(i, ..)| *i);
    let mut tally = Tally::default();
    let checks = checked
        .into_iter()
        .map(|(_, check, retries)| {
            tally.retries += retries;
            match check.status {
                Status::Ok | Status::Empty => tally.success += 1,
                Status::Failed => tally.failures += 1,
                Status::Skipped => {}
            }
            check
        })
        .collect();
    let latency = started.elapsed();
    if !results.is_empty() {
        crate::telemetry::index_vibecheck_batch(latency);
    }
    info!(
        request_id = %session.request_id,
        calls = results.len(),
        concurrency = settings.concurrency,
        latency_ms = latency.as_millis() as u64,
        "vibecheck batch"
    );
    (checks, tally)
}

async fn with_retries(
    protocol: &Protocol,
    session: &Session,
    target: &str,
    intent_ids: &[String],
    index_ids: Option<&[String]>,
    settings: &Settings,
) -> (VibeCheck, usize) {
    let attempt = || async {
        let started = Instant::now();
        let answer = protocol
            .vibecheck(session, target, intent_ids, index_ids, settings.character_limit)
            .await;
        debug!(request_id = %session.request_id, target_user_id = target, latency_ms = started.elapsed().as_millis() as u64, ok = answer.is_ok(), "vibecheck call");
        if let Err(e) = &answer
            && let Some(asked) = e.retry_after()
        {
            info!(request_id = %session.request_id, target_user_id = target, retry_after_s = asked.as_secs(), "vibecheck rate limited; Retry-After asked");
        }
        answer
    };
    let (answer, retries) = retrying(&settings.retry_delays, attempt).await;
    let check = match answer {
        Ok(s) if s.trim().is_empty() => entry(target, String::new(), Status::Empty, settings),
        Ok(s) => entry(target, vocab::mask::hide_emails(&s), Status::Ok, settings),
        Err(error) => {
            warn!(request_id = %session.request_id, target_user_id = target, attempts = retries + 1, error = %error, "vibecheck unavailable");
            entry(target, String::new(), Status::Failed, settings)
        }
    };
    (check, retries)
}

fn entry(target: &str, synthesis: String, status: Status, settings: &Settings) -> VibeCheck {
    VibeCheck {
        target_user_id: target.to_string(),
        synthesis,
        character_limit: settings.character_limit,
        status,
    }
}
