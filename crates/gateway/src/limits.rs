//! `[[limits]]` at call time: each call of a tool is counted, per project,
//! against every limit that covers it, in a sliding minute and day: the
//! calls of the current clock window, and of the one before, weighted by
//! how much of it the last minute (or day) still covers (the sliding
//! window counter), so no burst passes at a window's edge. Past a limit, the
//! call is refused with `TOOL_LIMIT_REACHED`, saying when one fits again.
//! The counts live in the store, so every replica on a shared store counts
//! in the same windows.

use super::{ExecuteError, Gateway};
use crate::auth::Caller;
use crate::catalog::Entry;
use config::ToolLimit;

/// A window a limit counts calls in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Window {
    Minute,
    Day,
}

impl Window {
    fn seconds(self) -> i64 {
        match self {
            Window::Minute => 60,
            Window::Day => 86_400,
        }
    }

    fn tag(self) -> &'static str {
        match self {
            Window::Minute => "m",
            Window::Day => "d",
        }
    }

    fn words(self, calls: u32) -> String {
        let calls = if calls == 1 {
            "1 call".into()
        } else {
            format!("{calls} calls")
        };
        match self {
            Window::Minute => format!("{calls} a minute"),
            Window::Day => format!("{calls} a day"),
        }
    }

    /// The start of the clock window `now` (unix seconds) falls in.
    fn start(self, now: i64) -> i64 {
        now - now.rem_euclid(self.seconds())
    }
}

/// The calls the current clock window may hold, `elapsed` seconds into it
/// of `secs`, when `previous` fell in the window before: the sliding window
/// still covers `(secs - elapsed) / secs` of those.
fn room(limit: u32, previous: i64, elapsed: i64, secs: i64) -> i64 {
    i64::from(limit) - ceil_div(previous * (secs - elapsed), secs)
}

/// `a / b` rounded up, for `b > 0` and `a >= 0` (whole seconds and calls,
/// no float's rounding at the edges).
fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

/// Seconds until one more call fits, `elapsed` seconds into a clock window
/// of `secs` that holds `current` calls after `previous` in the one before
/// (at least one second).
fn wait(limit: u32, previous: i64, current: i64, elapsed: i64, secs: i64) -> u64 {
    // When the previous window's weight has fallen far enough, `elapsed'`
    // seconds into a window after `before` calls: before * (secs - e) / secs <= free.
    let fits_at = |before: i64, free: i64| -> Option<i64> {
        if free < 0 {
            return None;
        }
        if before == 0 {
            return Some(0);
        }
        Some(ceil_div(secs * (before - free).max(0), before))
    };
    let seconds = match fits_at(previous, i64::from(limit) - current - 1) {
        Some(e) if e < secs => e - elapsed,
        // Not in this window: in the next, where this one's calls weigh.
        _ => secs - elapsed + fits_at(current, i64::from(limit) - 1).unwrap_or(secs),
    };
    seconds.max(1) as u64
}

/// The windows `limit` counts in, with their allowance.
fn windows(limit: &ToolLimit) -> impl Iterator<Item = (Window, u32)> {
    [(Window::Day, limit.per_day), (Window::Minute, limit.per_minute)]
        .into_iter()
        .filter_map(|(w, n)| Some((w, n?)))
}

impl Gateway {
    /// Counts `caller`'s call of `entry` against every limit that covers
    /// it: all of them, or none (a refused call is taken back from the
    /// windows it was counted in). A store that cannot count lets the call
    /// through, and says so in the log.
    pub(super) fn count_call(&self, caller: &Caller, entry: &Entry) -> Result<(), ExecuteError> {
        let limits = self.limits.load();
        if limits.is_empty() {
            return Ok(());
        }
        let now = chrono::Utc::now().timestamp();
        let mut counted: Vec<(String, i64)> = Vec::new();
        let project = &caller.project.name;
        for limit in limits.matching(project, &entry.server, entry.real_name()) {
            for (window, calls) in windows(limit) {
                let scope = format!("{}|{}", limit.scope(caller.project.id), window.tag());
                let (start, secs) = (window.start(now), window.seconds());
                let taken = self.store.window_calls(&scope, start - secs).and_then(|previous| {
                    let room = room(calls, previous, now - start, secs);
                    let taken = self.store.take_window(&scope, start, room, start - secs)?;
                    Ok((taken, previous))
                });
                match taken {
                    Ok((true, _)) => counted.push((scope, start)),
                    Ok((false, previous)) => {
                        for (scope, start) in &counted {
                            let _ = self.store.give_back_window(scope, *start);
                        }
                        let current = self.store.window_calls(&scope, start).unwrap_or(i64::from(calls));
                        let retry_after = wait(calls, previous, current, now - start, secs);
                        return Err(ExecuteError::Limited {
                            key: entry.key.to_string(),
                            limit: window.words(calls),
                            project: project.clone(),
                            retry_after,
                            retry_at: now + retry_after as i64,
                        });
                    }
                    Err(e) => {
                        tracing::warn!(project = caller.project.id, error = %e, "tool limit unavailable; call let through");
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_starts_on_its_boundary() {
        // 2026-11-29T01:02:03Z
        let now = 1_795_914_123;
        assert_eq!(Window::Minute.start(now), now - 3);
        assert_eq!(now - Window::Day.start(now), 3_723);
        assert_eq!(Window::Minute.start(now - 3), now - 3);
        assert_eq!(Window::Minute.words(1), "1 call a minute");
        assert_eq!(Window::Day.words(500), "500 calls a day");
    }

    /// Issue #75: 3 a minute let 4 through in 2.2 s across a minute's edge.
    #[test]
    fn the_window_before_weighs_as_much_as_the_last_minute_still_covers() {
        assert_eq!(room(3, 3, 1, 60), 0, "a second after 3 calls, none more");
        assert_eq!(room(3, 3, 30, 60), 1, "half a minute on, 1.5 of them weigh");
        assert_eq!(room(3, 3, 59, 60), 2);
        assert_eq!(room(3, 0, 0, 60), 3, "a quiet minute before: all of it");
    }

    #[test]
    fn a_refusal_says_when_one_more_fits() {
        // 3 in the minute before, 1 second in: the 3 weigh until they fall to 2.
        assert_eq!(wait(3, 3, 0, 1, 60), 19);
        // 3 in this minute already, 10 s in: not before the next minute, when
        // they weigh 3 * (60 - e) / 60 <= 2, from its 20th second.
        assert_eq!(wait(3, 0, 3, 10, 60), 50 + 20);
        // 500 a day, all taken, an hour in: the next day, about 4 minutes on.
        let waited = wait(500, 0, 500, 3_600, 86_400);
        assert_eq!(waited, 86_400 - 3_600 + 173);
        // Whatever the counts, never less than a second.
        assert_eq!(wait(3, 2, 0, 59, 60), 1);
    }

    #[test]
    fn a_limit_counts_in_the_windows_it_sets() {
        let limit = ToolLimit {
            server: "gh".into(),
            tool: None,
            project: None,
            per_minute: Some(5),
            per_day: Some(50),
        };
        let order: Vec<(Window, u32)> = windows(&limit).collect();
        assert_eq!(order, [(Window::Day, 50), (Window::Minute, 5)]);
        let minute_only = ToolLimit { per_day: None, ..limit };
        assert_eq!(windows(&minute_only).count(), 1);
    }
}
