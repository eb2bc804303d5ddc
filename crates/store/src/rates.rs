//! Request budgets shared by every gateway on one store (`rate_budgets`,
//! migration 0012): `[http] requests_per_minute` per caller holds across
//! replicas. One statement per request decides and records it atomically.
//! And the calls counted against `[[limits]]` (`tool_limit_windows`,
//! migration 0017), in fixed windows every replica shares.

use super::sql::args;
use super::{Error, Store};

impl Store {
    /// Counts one request of `caller` at `now_ms` against its budget: one
    /// request per `interval_ms`, running at most `tolerance_ms` ahead (the
    /// burst). `Ok(Err(wait_ms))` when over it.
    pub fn take_rate(
        &self,
        caller: &str,
        now_ms: i64,
        interval_ms: i64,
        tolerance_ms: i64,
    ) -> Result<Result<(), i64>, Error> {
        self.with(|c| {
            let taken = c.row(
                "INSERT INTO rate_budgets (caller, due_ms) VALUES (?1, CAST(?2 AS BIGINT) + ?3)
                 ON CONFLICT (caller) DO UPDATE
                     SET due_ms = CASE WHEN rate_budgets.due_ms > ?2 THEN rate_budgets.due_ms ELSE ?2 END + ?3
                     WHERE rate_budgets.due_ms <= CAST(?2 AS BIGINT) + ?4
                 RETURNING due_ms",
                args![caller, now_ms, interval_ms, tolerance_ms],
                |_| Ok(()),
            )?;
            if taken.is_some() {
                return Ok(Ok(()));
            }
            let due: i64 = c.one(
                "SELECT due_ms FROM rate_budgets WHERE caller = ?1",
                args![caller],
                |r| r.get(0),
            )?;
            Ok(Err((due - tolerance_ms - now_ms).max(1)))
        })
    }
}

impl Store {
    /// Counts one call in `scope`'s window that starts at `window_start`
    /// (seconds), if fewer than `limit` are counted there: `Ok(true)` when
    /// counted, `Ok(false)` when the window is full. The first call of a
    /// window also prunes the windows of `scope` that started before
    /// `forget_before` (a sliding window still reads the one before).
    pub fn take_window(&self, scope: &str, window_start: i64, limit: i64, forget_before: i64) -> Result<bool, Error> {
        if limit < 1 {
            return Ok(false);
        }
        self.with(|c| {
            let counted: Option<i64> = c.row(
                "INSERT INTO tool_limit_windows (scope, window_start, calls) VALUES (?1, ?2, 1)
                 ON CONFLICT (scope, window_start) DO UPDATE
                     SET calls = tool_limit_windows.calls + 1
                     WHERE tool_limit_windows.calls < ?3
                 RETURNING calls",
                args![scope, window_start, limit],
                |r| r.get(0),
            )?;
            if counted == Some(1) {
                c.execute(
                    "DELETE FROM tool_limit_windows WHERE scope = ?1 AND window_start < ?2",
                    args![scope, forget_before],
                )?;
            }
            Ok(counted.is_some())
        })
    }

    /// The calls counted in `scope`'s window that starts at `window_start`.
    pub fn window_calls(&self, scope: &str, window_start: i64) -> Result<i64, Error> {
        self.with(|c| {
            let calls: Option<i64> = c.row(
                "SELECT calls FROM tool_limit_windows WHERE scope = ?1 AND window_start = ?2",
                args![scope, window_start],
                |r| r.get(0),
            )?;
            Ok(calls.unwrap_or(0))
        })
    }

    /// Takes back one call counted in `scope`'s window (a call another
    /// limit then refused).
    pub fn give_back_window(&self, scope: &str, window_start: i64) -> Result<(), Error> {
        self.with(|c| {
            c.execute(
                "UPDATE tool_limit_windows SET calls = calls - 1 WHERE scope = ?1 AND window_start = ?2 AND calls > 0",
                args![scope, window_start],
            )
            .map(|_| ())
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    #[ignore = "full tier: needs PostgreSQL (scripts/setup)"]
    fn a_budget_is_shared_by_every_gateway_on_the_store() {
        let (_dir, at) = crate::test_database();
        let (a, b) = (crate::Store::open_at(&at).unwrap(), crate::Store::open_at(&at).unwrap());
        // 60 a minute with a burst of 3: three requests, on either replica, then a second's wait.
        let (interval, tolerance, t0) = (1000, 2000, 1_000_000);
        assert_eq!(a.take_rate("tok:1", t0, interval, tolerance).unwrap(), Ok(()));
        assert_eq!(b.take_rate("tok:1", t0, interval, tolerance).unwrap(), Ok(()));
        assert_eq!(a.take_rate("tok:1", t0, interval, tolerance).unwrap(), Ok(()));
        assert_eq!(b.take_rate("tok:1", t0, interval, tolerance).unwrap(), Err(1000));
        assert_eq!(
            b.take_rate("tok:2", t0, interval, tolerance).unwrap(),
            Ok(()),
            "another caller"
        );
        assert_eq!(a.take_rate("tok:1", t0 + 1000, interval, tolerance).unwrap(), Ok(()));
        assert!(b.take_rate("tok:1", t0 + 1000, interval, tolerance).unwrap().is_err());
        // After a quiet minute the whole burst is there again, and no more.
        for _ in 0..3 {
            assert_eq!(a.take_rate("tok:1", t0 + 60_000, interval, tolerance).unwrap(), Ok(()));
        }
        assert!(b.take_rate("tok:1", t0 + 60_000, interval, tolerance).unwrap().is_err());
    }

    /// Windows count up to their limit, on either engine, each scope and
    /// window apart; a window taken back counts one less; a new window
    /// prunes those before the one it keeps.
    fn windows_count_to_their_limit(store: &crate::Store) {
        let take = |scope, start| store.take_window(scope, start, 2, start - 60).unwrap();
        assert!(take("p1:gh:*:m", 60) && take("p1:gh:*:m", 60));
        assert!(!take("p1:gh:*:m", 60), "the third of two");
        assert!(take("p2:gh:*:m", 60), "another scope");
        store.give_back_window("p1:gh:*:m", 60).unwrap();
        assert!(take("p1:gh:*:m", 60), "one given back");
        assert!(take("p1:gh:*:m", 120), "the next window");
        assert_eq!(
            store.window_calls("p1:gh:*:m", 60).unwrap(),
            2,
            "the one before is kept"
        );
        assert!(
            !store.take_window("p1:gh:*:m", 120, 0, 60).unwrap(),
            "a window with no room"
        );
        assert!(take("p1:gh:*:m", 180), "the next window");
        let windows: i64 = store
            .with(|c| {
                c.one(
                    "SELECT COUNT(*) FROM tool_limit_windows WHERE scope = 'p1:gh:*:m'",
                    &[],
                    |r| r.get(0),
                )
            })
            .unwrap();
        assert_eq!(windows, 2, "the oldest window went");
        assert_eq!(store.window_calls("p1:gh:*:m", 120).unwrap(), 1);
    }

    #[test]
    fn sqlite_windows_count_to_their_limit() {
        windows_count_to_their_limit(&crate::sqlite_test_store().1);
    }

    #[test]
    #[ignore = "full tier: needs PostgreSQL (scripts/setup)"]
    fn postgres_windows_count_to_their_limit() {
        windows_count_to_their_limit(&crate::postgres_test_store().1);
    }
}
