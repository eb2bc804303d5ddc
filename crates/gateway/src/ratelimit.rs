//! Per-caller request rate limits for the HTTP listener (`[http]
//! requests_per_minute`, `burst`), as a generic cell rate algorithm: each
//! caller has a theoretical arrival time that every request pushes one
//! interval further; a request more than `burst` intervals early waits.
//!
//! A gateway on its own keeps the arrival times in memory. Gateways sharing
//! a PostgreSQL store keep them there ([`Store::take_rate`]), so a caller's
//! budget is one across replicas, whichever replica a request reaches.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use config::Rate;
use store::Store;

/// Callers' budgets, by caller key (a token id, or one shared key for anonymous callers).
#[derive(Debug)]
pub struct Limiter {
    interval: Duration,
    /// How far ahead of now a caller's arrival time may run.
    tolerance: Duration,
    arrivals: Arrivals,
}

#[derive(Debug)]
enum Arrivals {
    /// This process's callers.
    Local(Mutex<HashMap<String, Instant>>),
    /// Every gateway's on the shared store.
    Shared(Arc<Store>),
}

/// What one request was charged to: a caller's budget on a limiter. The
/// HTTP face hands it on with the request, so that each call a script makes
/// is charged to the same budget as a request of its own.
#[derive(Debug, Clone)]
pub struct Budget {
    limiter: Arc<Limiter>,
    caller: String,
}

impl Budget {
    /// `caller`'s budget on `limiter`.
    pub fn new(limiter: Arc<Limiter>, caller: String) -> Self {
        Self { limiter, caller }
    }

    /// Charges one more request: over the rate, `Err` with the seconds to
    /// wait (rounded up, as `Retry-After` says them), and it is counted.
    pub fn take(&self) -> Result<(), u64> {
        self.limiter.check(&self.caller).map_err(|wait| {
            telemetry::rate_limited();
            wait.as_secs_f64().ceil().max(1.0) as u64
        })
    }
}

/// Callers kept before idle ones are forgotten.
const PRUNE_ABOVE: usize = 10_000;

impl Limiter {
    /// A limiter enforcing `rate` per caller in this process.
    pub fn new(rate: Rate) -> Self {
        Self::with_arrivals(rate, Arrivals::Local(Mutex::default()))
    }

    /// A limiter enforcing `rate` per caller for every gateway on `store`
    /// when it is shared, else for this process.
    pub fn for_store(rate: Rate, store: Arc<Store>) -> Self {
        if store.is_shared() {
            Self::with_arrivals(rate, Arrivals::Shared(store))
        } else {
            Self::new(rate)
        }
    }

    fn with_arrivals(rate: Rate, arrivals: Arrivals) -> Self {
        let interval = Duration::from_secs(60) / rate.per_minute.max(1);
        Self {
            interval,
            tolerance: interval * (rate.burst.max(1) - 1),
            arrivals,
        }
    }

    /// Counts one request of `caller` now: `Err(wait)` when over its rate,
    /// with how long until the next request would be accepted.
    fn check(&self, caller: &str) -> Result<(), Duration> {
        match &self.arrivals {
            Arrivals::Local(arrivals) => self.check_local(arrivals, caller, Instant::now()),
            Arrivals::Shared(store) => {
                let now_ms = chrono::Utc::now().timestamp_millis();
                let ms = |d: Duration| d.as_millis() as i64;
                match store.take_rate(caller, now_ms, ms(self.interval), ms(self.tolerance)) {
                    Ok(verdict) => verdict.map_err(|wait_ms| Duration::from_millis(wait_ms as u64)),
                    // The request's own store reads will fail and say why.
                    Err(e) => {
                        tracing::warn!(error = %e, "rate budget unavailable; request let through");
                        Ok(())
                    }
                }
            }
        }
    }

    fn check_local(
        &self,
        arrivals: &Mutex<HashMap<String, Instant>>,
        caller: &str,
        now: Instant,
    ) -> Result<(), Duration> {
        let mut arrivals = arrivals.lock().expect("rate limiter lock");
        if arrivals.len() > PRUNE_ABOVE {
            arrivals.retain(|_, at| *at > now);
        }
        let due = arrivals.get(caller).copied().unwrap_or(now).max(now);
        if due > now + self.tolerance {
            return Err(due - self.tolerance - now);
        }
        arrivals.insert(caller.to_string(), due + self.interval);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_passes_then_the_sustained_rate_applies_per_caller() {
        let limiter = Limiter::new(Rate {
            per_minute: 60,
            burst: 3,
        });
        let Arrivals::Local(arrivals) = &limiter.arrivals else {
            unreachable!("a new limiter is local")
        };
        let check = |caller: &str, at: Instant| limiter.check_local(arrivals, caller, at);
        let t0 = Instant::now();
        for _ in 0..3 {
            assert_eq!(check("a", t0), Ok(()));
        }
        let wait = check("a", t0).unwrap_err();
        assert_eq!(wait, Duration::from_secs(1), "one request per second after the burst");
        assert_eq!(check("b", t0), Ok(()), "another caller has its own budget");
        assert_eq!(check("a", t0 + Duration::from_secs(1)), Ok(()));
        assert!(check("a", t0 + Duration::from_secs(1)).is_err());
        // After a quiet spell the whole burst is available again, no more.
        let later = t0 + Duration::from_secs(60);
        for _ in 0..3 {
            assert_eq!(check("a", later), Ok(()));
        }
        assert!(check("a", later).is_err());
    }
}
