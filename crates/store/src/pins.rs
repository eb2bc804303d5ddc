//! Pinned tool definitions and the changes waiting for review, in SQL
//! (`migrations/0009_tool_pins.sql`): the store's side of the `vetting`
//! crate's [`PinStore`], where the rules are, and the operator's reads and
//! decisions (`mcp-gateway tools`).

use std::collections::HashMap;

use vetting::{NewPin, PinStore, ReviewState, ServerPins};

use super::sql::args;
use super::{Error, Store, now};

/// One definition under review, with the pinned one it would replace.
#[derive(Debug, Clone, PartialEq)]
pub struct Review {
    /// The server.
    pub server: String,
    /// The tool's name.
    pub tool: String,
    /// Its hash.
    pub hash: String,
    /// As listed (JSON).
    pub definition: String,
    /// The pinned definition (JSON), if any.
    pub pinned: Option<String>,
    /// Why it is held (`changed`, `new`, `suspicious:…`).
    pub reasons: Vec<String>,
    /// Held or rejected.
    pub state: ReviewState,
    /// When it was first seen.
    pub seen_at: String,
}

impl PinStore for Store {
    type Error = Error;

    /// The review generation: moves on every change to pins and reviews.
    fn review_generation(&self) -> Result<i64, Error> {
        self.with(|c| c.one("SELECT n FROM review_generation WHERE id = 1", &[], |r| r.get(0)))
    }

    /// Pins and reviews of every server, by server.
    fn pins(&self) -> Result<HashMap<String, ServerPins>, Error> {
        self.with(|c| {
            let mut out: HashMap<String, ServerPins> = HashMap::new();
            for r in c.query("SELECT server, tool, hash FROM tool_pins", &[])? {
                out.entry(r.get(0)?).or_default().pinned.insert(r.get(1)?, r.get(2)?);
            }
            for r in c.query("SELECT server, tool, hash, state FROM tool_reviews", &[])? {
                out.entry(r.get(0)?)
                    .or_default()
                    .reviews
                    .insert(r.get(1)?, (r.get(2)?, ReviewState::from_column(r.text(3))));
            }
            Ok(out)
        })
    }

    /// Trusts each definition for its tool, replacing any pin and review,
    /// in one transaction (a server's first listing pins every tool at once).
    fn pin_tools(&self, pins: &[NewPin<'_>]) -> Result<(), Error> {
        if pins.is_empty() {
            return Ok(());
        }
        let at = now();
        // One order for every replica: two pinning the same tools never deadlock.
        let mut pins: Vec<&NewPin<'_>> = pins.iter().collect();
        pins.sort_by_key(|p| (p.server, p.tool));
        self.transaction(|tx| {
            for p in pins {
                tx.execute(
                    "INSERT INTO tool_pins (server, tool, hash, definition) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (server, tool) DO UPDATE SET hash = ?3, definition = ?4, pinned_at = ?5",
                    args![p.server, p.tool, p.hash, p.definition, at],
                )?;
                tx.execute(
                    "DELETE FROM tool_reviews WHERE server = ?1 AND tool = ?2",
                    args![p.server, p.tool],
                )?;
            }
            Ok(())
        })
    }

    /// Holds `definition` of `server`'s `tool` for review; true when this
    /// definition was not already waiting (a change to log and count).
    fn hold_tool(
        &self,
        server: &str,
        tool: &str,
        hash: &str,
        definition: &str,
        reasons: &[&str],
    ) -> Result<bool, Error> {
        let reasons = serde_json::to_string(reasons).unwrap_or_else(|_| "[]".into());
        self.with(|c| {
            let same = c.row(
                "SELECT 1 FROM tool_reviews WHERE server = ?1 AND tool = ?2 AND hash = ?3",
                args![server, tool, hash],
                |_| Ok(()),
            )?;
            if same.is_some() {
                return Ok(false);
            }
            c.execute(
                "INSERT INTO tool_reviews (server, tool, hash, definition, reasons, state)
                 VALUES (?1, ?2, ?3, ?4, ?5, 'held')
                 ON CONFLICT (server, tool) DO UPDATE SET hash = ?3, definition = ?4, reasons = ?5,
                     state = 'held', seen_at = ?6",
                args![server, tool, hash, definition, reasons, now()],
            )?;
            Ok(true)
        })
    }
}

impl Store {
    /// Definitions under review, oldest first; of one server if given,
    /// its projects' own listings (`server@project`) included.
    pub fn reviews(&self, server: Option<&str>) -> Result<Vec<Review>, Error> {
        self.with(|c| {
            c.all(
                "SELECT r.server, r.tool, r.hash, r.definition, p.definition, r.reasons, r.state, r.seen_at
                 FROM tool_reviews r LEFT JOIN tool_pins p ON p.server = r.server AND p.tool = r.tool
                 WHERE CAST(?1 AS TEXT) IS NULL OR r.server = ?1
                    OR substr(r.server, 1, length(CAST(?1 AS TEXT)) + 1) = CAST(?1 AS TEXT) || '@'
                 ORDER BY r.seen_at, r.server, r.tool",
                args![server],
                |r| {
                    Ok(Review {
                        server: r.get(0)?,
                        tool: r.get(1)?,
                        hash: r.get(2)?,
                        definition: r.get(3)?,
                        pinned: r.get(4)?,
                        reasons: serde_json::from_str(r.text(5)).unwrap_or_default(),
                        state: ReviewState::from_column(r.text(6)),
                        seen_at: r.get(7)?,
                    })
                },
            )
        })
    }

    /// An operator's approval: the definition under review becomes the pin.
    /// False when nothing waits for `server`'s `tool`.
    pub fn approve_tool(&self, server: &str, tool: &str) -> Result<bool, Error> {
        self.transaction(|tx| {
            let moved = tx.execute(
                "INSERT INTO tool_pins (server, tool, hash, definition)
                 SELECT server, tool, hash, definition FROM tool_reviews WHERE server = ?1 AND tool = ?2
                 ON CONFLICT (server, tool) DO UPDATE SET hash = excluded.hash, definition = excluded.definition,
                     pinned_at = ?3",
                args![server, tool, now()],
            )?;
            tx.execute(
                "DELETE FROM tool_reviews WHERE server = ?1 AND tool = ?2",
                args![server, tool],
            )?;
            Ok(moved > 0)
        })
    }

    /// An operator's rejection: the definition stays hidden while listed.
    /// False when nothing waits for `server`'s `tool`.
    pub fn reject_tool(&self, server: &str, tool: &str) -> Result<bool, Error> {
        self.with(|c| {
            c.execute(
                "UPDATE tool_reviews SET state = 'rejected' WHERE server = ?1 AND tool = ?2",
                args![server, tool],
            )
            .map(|n| n > 0)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::each_engine!(holds_wait_until_approved_or_rejected_and_move_the_generation);
    fn holds_wait_until_approved_or_rejected_and_move_the_generation((_dir, s): crate::TestStore) {
        let g0 = s.review_generation().unwrap();
        let pin = NewPin {
            server: "fs",
            tool: "read",
            hash: "h1",
            definition: "{\"d\":1}",
        };
        s.pin_tools(&[pin]).unwrap();
        assert!(s.review_generation().unwrap() > g0);
        assert!(s.hold_tool("fs", "read", "h2", "{\"d\":2}", &["changed"]).unwrap());
        let g1 = s.review_generation().unwrap();
        assert!(
            !s.hold_tool("fs", "read", "h2", "{\"d\":2}", &["changed"]).unwrap(),
            "already held"
        );
        assert_eq!(s.review_generation().unwrap(), g1, "an unchanged hold writes nothing");
        let pins = s.pins().unwrap();
        assert_eq!(pins["fs"].pinned["read"], "h1");
        assert_eq!(pins["fs"].reviews["read"], ("h2".to_string(), ReviewState::Held));
        let r = &s.reviews(None).unwrap()[0];
        assert_eq!(
            (r.pinned.as_deref(), r.definition.as_str()),
            (Some("{\"d\":1}"), "{\"d\":2}")
        );
        assert_eq!(r.reasons, ["changed"]);

        assert!(s.reject_tool("fs", "read").unwrap());
        assert_eq!(s.pins().unwrap()["fs"].reviews["read"].1, ReviewState::Rejected);
        assert!(s.approve_tool("fs", "read").unwrap());
        let pins = s.pins().unwrap();
        assert_eq!(pins["fs"].pinned["read"], "h2");
        assert!(pins["fs"].reviews.is_empty());
        assert!(!s.approve_tool("fs", "read").unwrap(), "nothing waits");
        assert!(!s.reject_tool("fs", "nothing").unwrap());
    }

    crate::each_engine!(a_servers_reviews_include_its_projects_own_listings);
    fn a_servers_reviews_include_its_projects_own_listings((_dir, s): crate::TestStore) {
        for server in ["fs", "fs@alpha", "fsx@alpha", "f"] {
            s.hold_tool(server, "read", "h", "{}", &["changed"]).unwrap();
        }
        let servers = |of| -> Vec<String> { s.reviews(Some(of)).unwrap().into_iter().map(|r| r.server).collect() };
        assert_eq!(servers("fs"), ["fs", "fs@alpha"]);
        assert_eq!(servers("f"), ["f"]);
        assert_eq!(s.reviews(None).unwrap().len(), 4);
    }
}
