//! How a meta-tool call ended: one word for the audit log's column, the
//! metrics' label and the access log's field, so the three always agree.

/// How a meta-tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Answered.
    Ok,
    /// The downstream tool answered `isError: true`.
    ToolError,
    /// Refused: no or bad token, or a tool outside the caller's view.
    Denied,
    /// Could not run (bad arguments, server down, protocol error).
    Failed,
    /// Ran past its timeout.
    Timeout,
    /// Its server was called and no outcome was written yet: the call is
    /// running, or the gateway stopped during it.
    Started,
}

impl Outcome {
    /// The column value (also the metrics label).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::ToolError => "tool_error",
            Outcome::Denied => "denied",
            Outcome::Failed => "failed",
            Outcome::Timeout => "timeout",
            Outcome::Started => "started",
        }
    }

    /// The outcome a column value names; one this build does not know reads as failed.
    pub fn from_word(s: &str) -> Self {
        match s {
            "ok" => Outcome::Ok,
            "tool_error" => Outcome::ToolError,
            "denied" => Outcome::Denied,
            "timeout" => Outcome::Timeout,
            "started" => Outcome::Started,
            _ => Outcome::Failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_outcome_reads_back_from_its_word() {
        use Outcome::*;
        for o in [Ok, ToolError, Denied, Failed, Timeout, Started] {
            assert_eq!(Outcome::from_word(o.as_str()), o);
            assert_eq!(serde_json::to_value(o).unwrap(), o.as_str());
        }
        assert_eq!(Outcome::from_word("exploded"), Failed);
    }
}
