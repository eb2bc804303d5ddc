//! Per-caller request rate limits for the HTTP listener (`[http]
//! requests_per_minute`, `burst`), as a generic cell rate algorithm: each
//! caller has a theoretical arrival time that every request pushes one
//! interval further; a request more than `burst` intervals early waits.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A request rate: so many per minute, with bursts of up to `burst`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    /// Sustained requests per minute (at least 1).
    pub per_minute: u32,
    /// Requests allowed back to back (at least 1).
    pub burst: u32,
}

/// Callers' budgets, by caller key (a token id, or one shared key for anonymous callers).
#[derive(Debug)]
pub struct Limiter {
    interval: Duration,
    /// How far ahead of now a caller's arrival time may run.
    tolerance: Duration,
    arrivals: Mutex<HashMap<String, Instant>>,
}

/// Callers kept before idle ones are forgotten.
const PRUNE_ABOVE: usize = 10_000;

impl Limiter {
    /// A limiter enforcing `rate` per caller.
    pub fn new(rate: Rate) -> Self {
        let interval = Duration::from_secs(60) / rate.per_minute.max(1);
        Self {
            interval,
            tolerance: interval * (rate.burst.max(1) - 1),
            arrivals: Mutex::default(),
        }
    }

    /// Counts one request of `caller` at `now`: `Err(wait)` when over its
    /// rate, with how long until the next request would be accepted.
    pub fn check(&self, caller: &str, now: Instant) -> Result<(), Duration> {
        let mut arrivals = self.arrivals.lock().expect("rate limiter lock");
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
        let t0 = Instant::now();
        for _ in 0..3 {
            assert_eq!(limiter.check("a", t0), Ok(()));
        }
        let wait = limiter.check("a", t0).unwrap_err();
        assert_eq!(wait, Duration::from_secs(1), "one request per second after the burst");
        assert_eq!(limiter.check("b", t0), Ok(()), "another caller has its own budget");
        assert_eq!(limiter.check("a", t0 + Duration::from_secs(1)), Ok(()));
        assert!(limiter.check("a", t0 + Duration::from_secs(1)).is_err());
        // After a quiet spell the whole burst is available again, no more.
        let later = t0 + Duration::from_secs(60);
        for _ in 0..3 {
            assert_eq!(limiter.check("a", later), Ok(()));
        }
        assert!(limiter.check("a", later).is_err());
    }
}
