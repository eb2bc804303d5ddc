//! The audit rows of meta-tool calls, as the gateway writes them: with
//! strict audit an answer waits for its row, and an answer whose row was not
//! written is withheld.

use std::time::Duration;

use rmcp::model::CallToolResponse;

use super::{ExecuteError, Gateway, error};
use crate::auth::Caller;
use crate::config::AuditMode;
use crate::learning::Trail;
use crate::store::{self, Outcome};

/// How long a call waits for its audit row before it is refused (or its
/// answer withheld): a store restarting within it delays calls, not fails them.
pub const AUDIT_WAIT: Duration = Duration::from_secs(10);

impl Gateway {
    /// One meta-tool call's audit row: IDs and counts, and what learning
    /// from use links to it.
    #[allow(clippy::too_many_arguments)]
    pub fn audit_row(
        request_id: &str,
        caller: Option<&Caller>,
        meta_tool: &str,
        tool_key: Option<String>,
        outcome: Outcome,
        latency: Duration,
        result_count: Option<u64>,
        trail: Trail,
    ) -> store::AuditRow {
        let mut row = store::audit_row(request_id, meta_tool);
        row.project_id = caller.map(|c| c.project.id);
        row.token_id = caller.and_then(|c| c.token_id);
        row.tool_key = tool_key;
        row.outcome = outcome;
        row.latency_ms = latency.as_millis() as u64;
        row.result_count = result_count;
        row.subject = caller.and_then(|c| c.subject.clone());
        row.issuer = caller.and_then(|c| c.issuer.clone());
        row.query_terms = trail.query_terms;
        row.ranked_keys = trail.ranked_keys;
        (row.follows, row.rank) = trail.follows.unzip();
        row
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
    pub fn withhold(key: &str, why: store::Unwritten) -> CallToolResponse {
        let key = key.to_string();
        ExecuteError::AnswerWithheld { key, why }.into_result().into()
    }

    /// Whether `answer` is a call refused for want of its `started` row: it
    /// ran nothing, so its own row need not be waited for.
    pub fn refused_unaudited(answer: &CallToolResponse) -> bool {
        matches!(answer, CallToolResponse::Complete(r)
            if r.structured_content.as_ref().is_some_and(|s| s["error"]["code"] == error::AUDIT_UNAVAILABLE))
    }
}
