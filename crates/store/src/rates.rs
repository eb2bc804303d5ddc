//! Request budgets shared by every gateway on one store (`rate_budgets`,
//! migration 0012): `[http] requests_per_minute` per caller holds across
//! replicas. One statement per request decides and records it atomically.

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
}
