//! The memory of meanings (`query_meanings`: the embeddings of the queries
//! that found the tools a project ran), the links an execute on any replica
//! follows back to its discovery (`discovery_links`, `discovery_taught`),
//! and the pruning of what decayed. See `migrations/0014_query_meanings.sql`.
//! Writes are queued to the writer thread like audit rows (by
//! `store/learning.rs`, which owns the queueing of everything learned).

use super::sql::{Sql, args};
use super::{Error, Store};

/// Remembered queries kept per tool.
const PER_TOOL: i64 = config::MEANINGS_PER_TOOL as i64;
/// Remembered queries read per project.
const TOTAL: i64 = config::MEANINGS_TOTAL as i64;
/// How long a discovery can be followed, in milliseconds.
const LINK_MS: i64 = config::LINK_WINDOW.as_millis() as i64;

/// One remembered query of one tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Meaning {
    /// `server:tool`.
    pub tool_key: String,
    /// The normalised query, or its salted hash.
    pub query_key: String,
    /// The query as asked (shortened); `None` when terms are hashed.
    pub query: Option<String>,
    /// Its embedding's int8 codes and scale.
    pub vector: Vec<u8>,
    /// Sum of the weights of its uses (see `search_learning`).
    pub weight: f64,
    /// Order of last use (set by the store on writing).
    pub touched: i64,
}

/// One discovery, as an execute on any replica may follow it.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// The discovery's request id.
    pub request_id: String,
    /// The caller's project.
    pub project_id: i64,
    /// A salted hash of the session key.
    pub session: String,
    /// Unix milliseconds.
    pub at: i64,
    /// Its queries (JSON, `learning::Asked`).
    pub asked: String,
    /// Its answer: toolKeys with the query that found each (JSON).
    pub results: String,
    /// Its queries' embeddings, one row each, when it had them.
    pub vectors: Option<Vec<u8>>,
}

impl Store {
    /// The newest remembered queries of `project_id` (at most 10,000) that
    /// weigh at least `least_weight`.
    pub fn meanings(&self, project_id: i64, least_weight: f64) -> Result<Vec<Meaning>, Error> {
        self.with(|c| {
            c.all(
                "SELECT tool_key, query_key, query, vector, weight, touched FROM query_meanings
                 WHERE project_id = ?1 AND weight >= ?2 ORDER BY touched DESC LIMIT ?3",
                args![project_id, least_weight, TOTAL],
                |r| {
                    Ok(Meaning {
                        tool_key: r.get(0)?,
                        query_key: r.get(1)?,
                        query: r.get(2)?,
                        vector: r.get(3)?,
                        weight: r.get(4)?,
                        touched: r.get(5)?,
                    })
                },
            )
        })
    }

    /// How many requests `project_id` remembers, for `project show` and the console.
    pub fn meaning_count(&self, project_id: i64) -> Result<u64, Error> {
        self.with(|c| {
            c.one(
                "SELECT count(*) FROM query_meanings WHERE project_id = ?1",
                args![project_id],
                |r| r.get::<i64>(0),
            )
        })
        .map(|n| n as u64)
    }

    /// The newest `limit` discoveries of `session` in `project_id` since
    /// `since` (unix milliseconds).
    pub fn links(&self, project_id: i64, session: &str, since: i64, limit: usize) -> Result<Vec<Link>, Error> {
        self.with(|c| {
            c.all(
                "SELECT request_id, project_id, session, at, asked, results, vectors FROM discovery_links
                 WHERE project_id = ?1 AND session = ?2 AND at >= ?3 ORDER BY at DESC LIMIT ?4",
                args![project_id, session, since, limit as i64],
                |r| {
                    Ok(Link {
                        request_id: r.get(0)?,
                        project_id: r.get(1)?,
                        session: r.get(2)?,
                        at: r.get(3)?,
                        asked: r.get(4)?,
                        results: r.get(5)?,
                        vectors: r.get(6)?,
                    })
                },
            )
        })
    }
}

/// Claims the lesson of `tool_key` after discovery `request_id`: true the
/// first time, on whichever replica, false after.
pub(super) fn claim(tx: &dyn Sql, request_id: &str, tool_key: &str, at: i64) -> Result<bool, Error> {
    let n = tx.execute(
        "INSERT INTO discovery_taught (request_id, tool_key, at) VALUES (?1, ?2, ?3)
         ON CONFLICT (request_id, tool_key) DO NOTHING",
        args![request_id, tool_key, at],
    )?;
    Ok(n == 1)
}

/// Adds a use of `m` to project `project_id`'s memory, newest, and keeps
/// that tool's newest [`PER_TOOL`].
pub(super) fn remember(tx: &dyn Sql, project_id: i64, m: &Meaning) -> Result<(), Error> {
    tx.execute(
        "INSERT INTO query_meanings (project_id, tool_key, query_key, query, vector, weight, touched)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6,
                 (SELECT coalesce(max(touched), 0) + 1 FROM query_meanings WHERE project_id = ?1))
         ON CONFLICT (project_id, tool_key, query_key) DO UPDATE SET
             weight = query_meanings.weight + excluded.weight,
             touched = excluded.touched,
             query = coalesce(excluded.query, query_meanings.query)",
        args![project_id, m.tool_key, m.query_key, m.query, m.vector, m.weight],
    )?;
    tx.execute(
        "DELETE FROM query_meanings WHERE project_id = ?1 AND tool_key = ?2 AND touched <=
             (SELECT touched FROM query_meanings WHERE project_id = ?1 AND tool_key = ?2
              ORDER BY touched DESC LIMIT 1 OFFSET ?3)",
        args![project_id, m.tool_key, PER_TOOL],
    )?;
    Ok(())
}

/// Writes `link` and forgets links (and their lessons) past the window.
pub(super) fn insert_link(tx: &dyn Sql, link: &Link) -> Result<(), Error> {
    tx.execute(
        "INSERT INTO discovery_links (request_id, project_id, session, at, asked, results, vectors)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (request_id) DO NOTHING",
        args![
            link.request_id,
            link.project_id,
            link.session,
            link.at,
            link.asked,
            link.results,
            link.vectors
        ],
    )?;
    let stale = link.at - LINK_MS;
    tx.execute("DELETE FROM discovery_links WHERE at < ?1", args![stale])?;
    tx.execute("DELETE FROM discovery_taught WHERE at < ?1", args![stale])?;
    Ok(())
}

/// See [`Store::prune_learning`].
pub(super) fn prune(tx: &dyn Sql, project_id: i64, least_weight: f64) -> Result<(), Error> {
    let terms = tx.execute(
        "DELETE FROM search_learning WHERE project_id = ?1 AND weight < ?2",
        args![project_id, least_weight],
    )?;
    let meanings = tx.execute(
        "DELETE FROM query_meanings WHERE project_id = ?1 AND (weight < ?2 OR touched <=
             (SELECT touched FROM query_meanings WHERE project_id = ?1
              ORDER BY touched DESC LIMIT 1 OFFSET ?3))",
        args![project_id, least_weight, TOTAL],
    )?;
    if terms + meanings > 0 {
        tracing::debug!(project = project_id, terms, meanings, "decayed learning pruned");
    }
    Ok(())
}

/// Forgets `project_id`'s meanings and links (`reset-learning`).
pub(super) fn forget(tx: &dyn Sql, project_id: i64) -> Result<usize, Error> {
    let n = tx.execute("DELETE FROM query_meanings WHERE project_id = ?1", args![project_id])?;
    tx.execute("DELETE FROM discovery_links WHERE project_id = ?1", args![project_id])?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Search, Use};

    fn meaning(tool: &str, key: &str, weight: f64) -> Meaning {
        Meaning {
            tool_key: tool.into(),
            query_key: key.into(),
            query: Some(key.into()),
            vector: vec![1, 2, 3, 0, 0, 128, 63],
            weight,
            touched: 0,
        }
    }

    fn lesson(project_id: i64, discovery: &str, m: Meaning) -> Use {
        Use {
            project_id,
            terms: vec![m.query_key.clone()],
            tool_key: m.tool_key.clone(),
            weight: m.weight,
            discovery: Some(discovery.into()),
            meaning: Some(m),
        }
    }

    /// Polls until `f` holds (the writer batches).
    async fn eventually(what: &str, f: impl Fn() -> bool) {
        for _ in 0..200 {
            if f() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        panic!("never: {what}");
    }

    crate::each_engine!(async meanings_add_up_keep_the_newest_per_tool_teach_once_and_reset);
    async fn meanings_add_up_keep_the_newest_per_tool_teach_once_and_reset((_dir, s): crate::TestStore) {
        let a = s.create_project("a", Some(Search::Hybrid)).unwrap();
        let b = s.create_project("b", Some(Search::Hybrid)).unwrap();
        s.learn(lesson(a.id, "d1", meaning("w:f", "forecast", 1.0))).await;
        // The same discovery's lesson again (another replica): not counted.
        s.learn(lesson(a.id, "d1", meaning("w:f", "forecast", 1.0))).await;
        s.learn(lesson(a.id, "d2", meaning("w:f", "forecast", 1.0))).await;
        s.learn(lesson(b.id, "d3", meaning("w:f", "other", 1.0))).await;
        eventually("b's lesson", || s.meanings(b.id, 0.0).unwrap().len() == 1).await;
        let got = s.meanings(a.id, 0.0).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].weight, got[0].query.as_deref()), (2.0, Some("forecast")));
        assert_eq!(got[0].vector, meaning("", "", 0.0).vector);
        let terms = s.learned(a.id, 0.0).unwrap();
        assert_eq!(terms[0].weight, 2.0, "the term prior is claimed once per discovery too");

        for i in 0..PER_TOOL + 3 {
            s.learn(lesson(a.id, &format!("e{i}"), meaning("w:g", &format!("q{i}"), 1.0)))
                .await;
        }
        let last = format!("q{}", PER_TOOL + 2);
        eventually("the last lesson", || {
            s.meanings(a.id, 0.0).unwrap().iter().any(|m| m.query_key == last)
        })
        .await;
        let g: Vec<String> = s
            .meanings(a.id, 0.0)
            .unwrap()
            .into_iter()
            .filter(|m| m.tool_key == "w:g")
            .map(|m| m.query_key)
            .collect();
        assert_eq!(g.len(), PER_TOOL as usize);
        assert_eq!(g[0], last, "newest first");
        assert!(!g.contains(&"q2".to_string()), "the oldest went");

        assert!(s.reset_learning("a").unwrap().meanings > 0);
        assert!(s.meanings(a.id, 0.0).unwrap().is_empty());
        assert_eq!(s.meanings(b.id, 0.0).unwrap().len(), 1, "b keeps its own");
    }

    crate::each_engine!(async decayed_rows_are_pruned_and_not_loaded);
    async fn decayed_rows_are_pruned_and_not_loaded((_dir, s): crate::TestStore) {
        let a = s.create_project("a", Some(Search::Hybrid)).unwrap();
        s.learn(lesson(a.id, "d1", meaning("w:old", "old", 0.01))).await;
        s.learn(lesson(a.id, "d2", meaning("w:new", "new", 5.0))).await;
        eventually("both", || s.learned(a.id, 0.0).unwrap().len() == 2).await;
        // Read above the floor: the decayed row is not loaded.
        assert_eq!(s.learned(a.id, 0.5).unwrap().len(), 1);
        assert_eq!(s.meanings(a.id, 0.5).unwrap().len(), 1);
        s.prune_learning(a.id, 0.5);
        eventually("pruned", || s.learned(a.id, 0.0).unwrap().len() == 1).await;
        let kept = s.meanings(a.id, 0.0).unwrap();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].tool_key, "w:new");
        assert_eq!(s.learned(a.id, 0.0).unwrap()[0].tool_key, "w:new");
    }

    crate::each_engine!(async links_are_read_newest_first_by_session_and_expire);
    async fn links_are_read_newest_first_by_session_and_expire((_dir, s): crate::TestStore) {
        let a = s.create_project("a", Some(Search::Hybrid)).unwrap();
        let link = |id: &str, session: &str, at: i64| Link {
            request_id: id.into(),
            project_id: a.id,
            session: session.into(),
            at,
            asked: "{}".into(),
            results: "[]".into(),
            vectors: Some(vec![1, 2, 3, 4, 5]),
        };
        let t = 1_800_000_000_000;
        s.link(link("d1", "s", t)).await;
        s.link(link("d2", "s", t + 10)).await;
        s.link(link("d3", "other", t + 20)).await;
        eventually("three links", || s.links(a.id, "other", 0, 4).unwrap().len() == 1).await;
        let got = s.links(a.id, "s", t - 60, 4).unwrap();
        assert_eq!(
            got.iter().map(|l| l.request_id.as_str()).collect::<Vec<_>>(),
            ["d2", "d1"]
        );
        assert_eq!(got[0], link("d2", "s", t + 10));
        assert_eq!(s.links(a.id, "s", t + 5, 4).unwrap().len(), 1, "since");
        // A link an hour later expires the old ones.
        s.link(link("d4", "s", t + 3_600_000)).await;
        eventually("expired", || s.links(a.id, "s", 0, 4).unwrap().len() == 1).await;
    }
}
