//! The audit rows of meta-tool calls, as the gateway writes them: with
//! strict audit an answer waits for its row, and an answer whose row was not
//! written is withheld.

use std::time::Duration;

use super::{Answer, ExecuteError, Gateway};
use crate::auth::Caller;
use config::AuditMode;
use learning::Trail;
use vocab::keys::RequestId;
use vocab::outcome::Outcome;

/// How long a call waits for its audit row before it is refused (or its
/// answer withheld): a store restarting within it delays calls, not fails them.
pub const AUDIT_WAIT: Duration = Duration::from_secs(10);

/// Where a call's audit row stands as its answer leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuditState {
    /// Its outcome row is to be written; under strict audit the answer waits for it.
    #[default]
    Due,
    /// The call was refused because its `started` row could not be written:
    /// it ran nothing, so its own row is written behind.
    StartRefused,
    /// Its outcome row could not be written: the answer is withheld.
    Withheld,
}

/// One meta-tool call's audit row, built up from what is known of it: IDs
/// and counts, and what learning from use links to it.
pub(super) struct Row(store::AuditRow);

impl Row {
    /// The row of `meta_tool`'s call `request_id`, failed until it says otherwise.
    pub(super) fn new(request_id: &RequestId, meta_tool: &str) -> Row {
        let mut row = store::audit_row(request_id, meta_tool);
        row.outcome = Outcome::Failed;
        Row(row)
    }

    /// Who called: project, token, OAuth subject and issuer.
    pub(super) fn caller(mut self, caller: &Caller) -> Row {
        self.0.project_id = Some(caller.project.id);
        self.0.token_id = caller.token_id;
        self.0.subject.clone_from(&caller.subject);
        self.0.issuer.clone_from(&caller.issuer);
        self
    }

    /// The tool the call names.
    pub(super) fn key(mut self, key: Option<&str>) -> Row {
        self.0.tool_key = key.map(str::to_string);
        self
    }

    pub(super) fn outcome(mut self, outcome: Outcome) -> Row {
        self.0.outcome = outcome;
        self
    }

    pub(super) fn latency(mut self, latency: Duration) -> Row {
        self.0.latency_ms = latency.as_millis() as u64;
        self
    }

    /// What the answer held, and what learning links to it.
    pub(super) fn answered(mut self, result_count: Option<u64>, trail: Trail) -> Row {
        self.0.result_count = result_count;
        self.0.query_terms = trail.query_terms;
        self.0.ranked_keys = trail.ranked_keys;
        (self.0.follows, self.0.rank) = trail.follows.unzip();
        self
    }

    /// What the call kept out of the model's context ([`super::savings`]).
    pub(super) fn savings(mut self, tokens: Option<i64>, bytes: Option<i64>) -> Row {
        self.0.saved_tokens = tokens;
        self.0.kept_bytes = bytes;
        self
    }

    pub(super) fn build(self) -> store::AuditRow {
        self.0
    }
}

impl Gateway {
    /// The key an audit row keeps for `caller`'s call of `key`: the one its
    /// server knows the tool by, whatever an override renamed it.
    pub(super) fn audited_key(&self, caller: &Caller, key: Option<&str>) -> Option<String> {
        let key = key?;
        let snapshot = self.catalog.snapshot_for(&caller.project.name);
        Some(snapshot.real_key(key).map_or(key, |real| real.as_str()).to_string())
    }

    /// Writes an audit row. With `[store] audit = "strict"` and `answered`
    /// (a caller is about to read what the row records), it returns once the
    /// row is durable, or says why it is not, and the answer must then be
    /// withheld ([`Gateway::withhold`]); other rows are written behind.
    pub async fn audit(&self, row: store::AuditRow, answered: bool) -> Result<(), store::Unwritten> {
        if self.audit == AuditMode::Strict && answered {
            return self.store.audit_durable(row, AUDIT_WAIT).await;
        }
        self.store.audit(row).await;
        Ok(())
    }

    /// Whether answers wait for their audit rows.
    pub fn audit_mode(&self) -> AuditMode {
        self.audit
    }

    /// What the caller gets instead of an answer whose row was not written.
    pub(super) fn withhold(key: &str, why: store::Unwritten) -> Answer {
        let key = key.to_string();
        Answer {
            audit: AuditState::Withheld,
            ..Answer::failed(ExecuteError::AnswerWithheld { key, why }, None)
        }
    }
}
