//! `[[limits]]` at call time: each call of a tool is counted, per project,
//! in the minute and the day it falls in, against every limit that covers
//! it; past one, the call is refused with `TOOL_LIMIT_REACHED` and the
//! seconds until its window ends. The counts live in the store, so every
//! replica on a shared store counts in the same windows.

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

    /// The start of the window `now` (unix seconds) falls in, and the
    /// seconds until it ends (at least one).
    fn at(self, now: i64) -> (i64, u64) {
        let start = now - now.rem_euclid(self.seconds());
        (start, (start + self.seconds() - now).max(1) as u64)
    }
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
                let (start, retry_after) = window.at(now);
                match self.store.take_window(&scope, start, i64::from(calls)) {
                    Ok(true) => counted.push((scope, start)),
                    Ok(false) => {
                        for (scope, start) in &counted {
                            let _ = self.store.give_back_window(scope, *start);
                        }
                        return Err(ExecuteError::Limited {
                            key: entry.key.to_string(),
                            limit: window.words(calls),
                            project: project.clone(),
                            retry_after,
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
    fn a_window_starts_on_its_boundary_and_says_when_it_ends() {
        // 2026-11-29T01:02:03Z
        let now = 1_795_914_123;
        assert_eq!(Window::Minute.at(now), (now - 3, 57));
        let (day, left) = Window::Day.at(now);
        assert_eq!((now - day, left), (3_723, 86_400 - 3_723));
        assert_eq!(Window::Minute.at(now - 3), (now - 3, 60));
        assert_eq!(Window::Minute.words(1), "1 call a minute");
        assert_eq!(Window::Day.words(500), "500 calls a day");
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
