//! What projects learned from use, in SQL: the term prior (`search_learning`),
//! the memory of meanings (`query_meanings`), the links an execute on any
//! replica follows back to its discovery (`discovery_links`,
//! `discovery_taught`), and the salt of hashed terms. This is the store's
//! side of the `learning` crate's [`LearningStore`]; the scoring, the limits
//! and the service live there. Writes are queued to the writer thread like
//! audit rows; reads and resets run inline.

use learning::retention::{LINK_WINDOW, PER_TOOL, TOTAL};
use learning::{Association, LearningStore, Link, Remembered, Use};
use serde::Serialize;

use super::audit::Write;
use super::sql::{Sql, args};
use super::{Error, Store, now};

/// How long a discovery can be followed, in milliseconds.
const LINK_MS: i64 = LINK_WINDOW.as_millis() as i64;

/// What `reset-learning` forgot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Forgotten {
    /// Query term → tool associations (the term prior).
    pub associations: usize,
    /// Remembered requests (the memory of meanings).
    pub meanings: usize,
}

impl LearningStore for Store {
    type Error = Error;

    fn is_shared(&self) -> bool {
        Store::is_shared(self)
    }

    fn learning_salt(&self) -> Result<Vec<u8>, Error> {
        self.with(|c| c.one("SELECT salt FROM learning_salt WHERE id = 1", &[], |r| r.get(0)))
    }

    fn learned(&self, project_id: i64, least_weight: f64) -> Result<Vec<Association>, Error> {
        self.with(|c| {
            c.all(
                "SELECT term, tool_key, weight FROM search_learning WHERE project_id = ?1 AND weight >= ?2",
                args![project_id, least_weight],
                |r| {
                    Ok(Association {
                        term: r.get(0)?,
                        tool_key: r.get(1)?,
                        weight: r.get(2)?,
                    })
                },
            )
        })
    }

    fn meanings(&self, project_id: i64, least_weight: f64) -> Result<Vec<Remembered>, Error> {
        self.with(|c| {
            c.all(
                "SELECT tool_key, query_key, vector, weight, touched FROM query_meanings
                 WHERE project_id = ?1 AND weight >= ?2 ORDER BY touched DESC LIMIT ?3",
                args![project_id, least_weight, TOTAL as i64],
                |r| {
                    Ok(Remembered {
                        tool_key: r.get(0)?,
                        query_key: r.get(1)?,
                        vector: r.get(2)?,
                        weight: r.get(3)?,
                        touched: r.get(4)?,
                    })
                },
            )
        })
    }

    fn links(&self, project_id: i64, session: &str, since: i64, limit: usize) -> Result<Vec<Link>, Error> {
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

    fn prune_learning(&self, project_id: i64, least_weight: f64) {
        if let Some(tx) = self.sender() {
            let _ = tx.try_send(Write::Prune {
                project_id,
                least_weight,
            });
        }
    }

    async fn learn(&self, lesson: Use) {
        if let Some(tx) = self.sender()
            && tx.send(Write::Learn(lesson)).await.is_err()
        {
            tracing::error!("store writer stopped; a use could not be learned");
        }
    }

    async fn link(&self, link: Link) {
        if let Some(tx) = self.sender()
            && tx.send(Write::Link(Box::new(link))).await.is_err()
        {
            tracing::error!("store writer stopped; a discovery could not be linked");
        }
    }
}

impl Store {
    /// How much project `project_id` learned: its term-tool associations
    /// and its remembered requests, for `project show` and the console.
    pub fn learning_size(&self, project_id: i64) -> Result<(u64, u64), Error> {
        self.with(|c| {
            c.one(
                "SELECT (SELECT count(*) FROM search_learning WHERE project_id = ?1),
                        (SELECT count(*) FROM query_meanings WHERE project_id = ?1)",
                args![project_id],
                |r| Ok((r.get::<i64>(0)? as u64, r.get::<i64>(1)? as u64)),
            )
        })
    }

    /// Forgets what `project` learned (terms, meanings, links to its
    /// discoveries) and says how much went. Moves the access generation, so
    /// every gateway on this store drops what it holds in memory at its next
    /// request.
    pub fn reset_learning(&self, project: &str) -> Result<Forgotten, Error> {
        let project = self.require_project(project)?;
        self.transaction(|tx| {
            let associations = tx.execute("DELETE FROM search_learning WHERE project_id = ?1", args![project.id])?;
            let meanings = forget(tx, project.id)?;
            tx.execute("UPDATE access_generation SET n = n + 1", &[])?;
            Ok(Forgotten { associations, meanings })
        })
    }
}

/// Adds `u` to its associations and meanings, inside the writer's
/// transaction, unless its claimant (a session) already taught its tool.
pub(super) fn insert(tx: &dyn Sql, u: &Use) -> Result<(), Error> {
    if let Some(claimant) = &u.claim
        && !claim(tx, claimant, &u.tool_key, chrono::Utc::now().timestamp_millis())?
    {
        return Ok(());
    }
    let at = now();
    for term in &u.terms {
        tx.execute(
            "INSERT INTO search_learning (project_id, term, tool_key, weight, last_used_at) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (project_id, term, tool_key)
             DO UPDATE SET weight = search_learning.weight + excluded.weight, last_used_at = excluded.last_used_at",
            args![u.project_id, term, u.tool_key, u.weight, at],
        )?;
    }
    if let Some(m) = &u.meaning {
        remember(tx, u.project_id, m)?;
    }
    Ok(())
}

/// Claims the lesson of `tool_key` for `claimant` (a session's key, kept in
/// the `request_id` column of `discovery_taught` and forgotten with the
/// links, after the link window): true the first time, on whichever
/// replica, false after.
fn claim(tx: &dyn Sql, claimant: &str, tool_key: &str, at: i64) -> Result<bool, Error> {
    let n = tx.execute(
        "INSERT INTO discovery_taught (request_id, tool_key, at) VALUES (?1, ?2, ?3)
         ON CONFLICT (request_id, tool_key) DO NOTHING",
        args![claimant, tool_key, at],
    )?;
    Ok(n == 1)
}

/// Adds a use of `m` to project `project_id`'s memory, newest, and keeps
/// that tool's newest [`PER_TOOL`].
fn remember(tx: &dyn Sql, project_id: i64, m: &Remembered) -> Result<(), Error> {
    tx.execute(
        "INSERT INTO query_meanings (project_id, tool_key, query_key, vector, weight, touched)
         VALUES (?1, ?2, ?3, ?4, ?5,
                 (SELECT coalesce(max(touched), 0) + 1 FROM query_meanings WHERE project_id = ?1))
         ON CONFLICT (project_id, tool_key, query_key) DO UPDATE SET
             weight = query_meanings.weight + excluded.weight,
             touched = excluded.touched",
        args![project_id, m.tool_key, m.query_key, m.vector, m.weight],
    )?;
    tx.execute(
        "DELETE FROM query_meanings WHERE project_id = ?1 AND tool_key = ?2 AND touched <=
             (SELECT touched FROM query_meanings WHERE project_id = ?1 AND tool_key = ?2
              ORDER BY touched DESC LIMIT 1 OFFSET ?3)",
        args![project_id, m.tool_key, PER_TOOL as i64],
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

/// See [`LearningStore::prune_learning`].
pub(super) fn prune(tx: &dyn Sql, project_id: i64, least_weight: f64) -> Result<(), Error> {
    let terms = tx.execute(
        "DELETE FROM search_learning WHERE project_id = ?1 AND weight < ?2",
        args![project_id, least_weight],
    )?;
    let meanings = tx.execute(
        "DELETE FROM query_meanings WHERE project_id = ?1 AND (weight < ?2 OR touched <=
             (SELECT touched FROM query_meanings WHERE project_id = ?1
              ORDER BY touched DESC LIMIT 1 OFFSET ?3))",
        args![project_id, least_weight, TOTAL as i64],
    )?;
    if terms + meanings > 0 {
        tracing::debug!(project = project_id, terms, meanings, "decayed learning pruned");
    }
    Ok(())
}

/// Forgets `project_id`'s meanings and links (`reset-learning`).
fn forget(tx: &dyn Sql, project_id: i64) -> Result<usize, Error> {
    let n = tx.execute("DELETE FROM query_meanings WHERE project_id = ?1", args![project_id])?;
    tx.execute("DELETE FROM discovery_links WHERE project_id = ?1", args![project_id])?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Search;

    crate::each_engine!(async uses_add_up_per_project_and_reset_forgets_one_project);
    async fn uses_add_up_per_project_and_reset_forgets_one_project((_dir, s): crate::TestStore) {
        uses_add_up(&s).await;
    }

    async fn uses_add_up(s: &Store) {
        let a = s.create_project("a", Some(Search::Hybrid)).unwrap();
        let b = s.create_project("b", Some(Search::Hybrid)).unwrap();
        let use_of = |p: i64, tool: &str| Use {
            project_id: p,
            terms: vec!["deploy".into(), "app".into()],
            tool_key: tool.into(),
            weight: 1.5,
            claim: None,
            meaning: None,
        };
        s.learn(use_of(a.id, "k8s:apply")).await;
        s.learn(use_of(a.id, "k8s:apply")).await;
        s.learn(use_of(b.id, "fly:deploy")).await;
        // The writer batches: wait for the rows.
        let mut learned = Vec::new();
        for _ in 0..100 {
            learned = s.learned(a.id, 0.0).unwrap();
            if learned.iter().any(|x| x.weight == 3.0) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        learned.sort_by(|x, y| x.term.cmp(&y.term));
        assert_eq!(
            learned,
            vec![
                Association {
                    term: "app".into(),
                    tool_key: "k8s:apply".into(),
                    weight: 3.0
                },
                Association {
                    term: "deploy".into(),
                    tool_key: "k8s:apply".into(),
                    weight: 3.0
                },
            ]
        );
        let generation = s.access_generation().unwrap();
        assert_eq!(s.reset_learning("a").unwrap().associations, 2);
        assert!(
            s.access_generation().unwrap() > generation,
            "other gateways drop their copy"
        );
        assert!(s.learned(a.id, 0.0).unwrap().is_empty());
        assert_eq!(s.learned(b.id, 0.0).unwrap().len(), 2, "b keeps what it learned");
        assert!(matches!(s.reset_learning("nope"), Err(Error::NoProject(_))));
        assert_eq!(s.learning_salt().unwrap().len(), 16);
    }

    fn meaning(tool: &str, key: &str, weight: f64) -> Remembered {
        Remembered {
            tool_key: tool.into(),
            query_key: key.into(),
            vector: vec![1, 2, 3, 0, 0, 128, 63],
            weight,
            touched: 0,
        }
    }

    fn lesson(project_id: i64, claimant: &str, m: Remembered) -> Use {
        Use {
            project_id,
            terms: vec![m.query_key.clone()],
            tool_key: m.tool_key.clone(),
            weight: m.weight,
            claim: Some(claimant.into()),
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
        // The same claimant's lesson again (another replica): not counted.
        s.learn(lesson(a.id, "d1", meaning("w:f", "forecast", 1.0))).await;
        s.learn(lesson(a.id, "d2", meaning("w:f", "forecast", 1.0))).await;
        s.learn(lesson(b.id, "d3", meaning("w:f", "other", 1.0))).await;
        eventually("b's lesson", || s.meanings(b.id, 0.0).unwrap().len() == 1).await;
        let got = s.meanings(a.id, 0.0).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].weight, got[0].query_key.as_str()), (2.0, "forecast"));
        assert_eq!(got[0].vector, meaning("", "", 0.0).vector);
        let terms = s.learned(a.id, 0.0).unwrap();
        assert_eq!(terms[0].weight, 2.0, "the term prior is claimed once per claimant too");

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
        assert_eq!(g.len(), PER_TOOL);
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
