//! What projects learned from use (`search_learning`, see
//! the search crate's `learning.rs`), and the salt of hashed query terms. Uses are
//! queued to the writer thread like audit rows; reading and resetting run
//! inline.

use serde::Serialize;

use super::sql::{Sql, args};

use super::audit::Write;
use super::{Error, Store, now};

/// One learned association: `term` led to `tool_key`, with its decayable weight.
#[derive(Debug, Clone, PartialEq)]
pub struct Association {
    /// An analyzed query term, or its salted hash.
    pub term: String,
    /// `server:tool`.
    pub tool_key: String,
    /// See `migrations/0008_search_learning.sql`.
    pub weight: f64,
}

/// One successful use to learn from.
#[derive(Debug, Clone, PartialEq)]
pub struct Use {
    /// The caller's project.
    pub project_id: i64,
    /// The terms of the query that found the tool (as stored).
    pub terms: Vec<String>,
    /// The tool run.
    pub tool_key: String,
    /// The use's weight (`search::learning::weight_of_use`).
    pub weight: f64,
    /// The discovery it follows (its request id): each discovery teaches a
    /// tool once, whichever replica the execute reached.
    pub discovery: Option<String>,
    /// The query's meaning, remembered with the tool.
    pub meaning: Option<super::Meaning>,
}

/// What `reset-learning` forgot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Forgotten {
    /// Query term → tool associations (the term prior).
    pub associations: usize,
    /// Remembered requests (the memory of meanings).
    pub meanings: usize,
}

impl Store {
    /// What project `project_id` learned, as associations that weigh at
    /// least `least_weight` (the rest has decayed and awaits pruning).
    pub fn learned(&self, project_id: i64, least_weight: f64) -> Result<Vec<Association>, Error> {
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

    /// The salt hashed terms are made with (one per store).
    pub fn learning_salt(&self) -> Result<Vec<u8>, Error> {
        self.with(|c| c.one("SELECT salt FROM learning_salt WHERE id = 1", &[], |r| r.get(0)))
    }

    /// Queues a use to learn from; waits if the writer is behind, like audit rows.
    pub async fn learn(&self, learned: Use) {
        if let Some(tx) = self.sender()
            && tx.send(Write::Learn(learned)).await.is_err()
        {
            tracing::error!("store writer stopped; a use could not be learned");
        }
    }

    /// Queues `link`, so an execute on another replica can follow it.
    pub async fn link(&self, link: super::Link) {
        if let Some(tx) = self.sender()
            && tx.send(Write::Link(Box::new(link))).await.is_err()
        {
            tracing::error!("store writer stopped; a discovery could not be linked");
        }
    }

    /// Queues the pruning of `project_id`'s learning: term associations and
    /// remembered queries that weigh less than `least_weight` (decayed), and
    /// remembered queries past the newest 10,000. Never waits: when the
    /// writer is behind, this pruning is skipped (the next load prunes).
    pub fn prune_learning(&self, project_id: i64, least_weight: f64) {
        if let Some(tx) = self.sender() {
            let _ = tx.try_send(Write::Prune {
                project_id,
                least_weight,
            });
        }
    }

    /// Forgets what `project` learned (terms, meanings, links to its
    /// discoveries) and says how much went. Moves the access generation, so
    /// every gateway on this store drops what it holds in memory at its next
    /// request.
    pub fn reset_learning(&self, project: &str) -> Result<Forgotten, Error> {
        let project = self.require_project(project)?;
        self.transaction(|tx| {
            let associations = tx.execute("DELETE FROM search_learning WHERE project_id = ?1", args![project.id])?;
            let meanings = super::meanings::forget(tx, project.id)?;
            tx.execute("UPDATE access_generation SET n = n + 1", &[])?;
            Ok(Forgotten { associations, meanings })
        })
    }
}

/// Adds `u` to its associations and meanings, inside the writer's
/// transaction, unless its discovery already taught its tool.
pub(super) fn insert(tx: &dyn Sql, u: &Use) -> Result<(), Error> {
    if let Some(discovery) = &u.discovery
        && !super::meanings::claim(tx, discovery, &u.tool_key, chrono::Utc::now().timestamp_millis())?
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
        super::meanings::remember(tx, u.project_id, m)?;
    }
    Ok(())
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
            discovery: None,
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
}
