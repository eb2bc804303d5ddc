//! `[security]`: what the gateway does when a server's tools change or look
//! hostile, and with credentials in calls (`src/security.rs` applies it).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::code_mode::{CodeMode, RawCodeMode};

/// `[security]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSecurity {
    /// A pinned tool whose definition changed: `hold` (default), `warn` or `accept`.
    pub on_tool_change: Option<OnToolChange>,
    /// A tool that appears on a server already pinned: `accept` (default) or `hold`.
    pub on_new_tool: Option<OnNewTool>,
    /// A tool whose texts look hostile: `hold` or `tag`; unset, hidden
    /// characters hold and every other finding tags.
    pub on_suspicious: Option<OnSuspicious>,
    /// Credentials in calls: `block`, `redact` or `off`; unset, arguments to
    /// servers not `trusted_for_credentials` are blocked and results redacted.
    pub secrets: Option<Secrets>,
    /// Per project: `[security.projects.NAME] secrets = "…"`.
    #[serde(default)]
    pub projects: BTreeMap<String, RawProjectSecurity>,
    /// Scripts in `tool_execute` (code mode): on or off, and their limits.
    pub code_mode: Option<RawCodeMode>,
}

/// `[security.projects.NAME]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProjectSecurity {
    /// Overrides `[security] secrets` and the servers' for this project's calls.
    pub secrets: Option<Secrets>,
    /// Overrides `[security.code_mode]` for this project's scripts.
    pub code_mode: Option<RawCodeMode>,
}

/// What a changed tool definition does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnToolChange {
    /// Hidden and refused until an operator approves it.
    #[default]
    Hold,
    /// Logged and counted, then trusted.
    Warn,
    /// Counted, then trusted.
    Accept,
}

/// What a new tool on an already pinned server does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnNewTool {
    /// Pinned and shown.
    #[default]
    Accept,
    /// Held until an operator approves it.
    Hold,
}

/// What a suspicious finding in a tool's texts does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnSuspicious {
    /// Held until an operator approves it.
    Hold,
    /// Shown, with a `suspicious:…` tag that search shows and rules can match.
    Tag,
}

/// What a credential found in a call does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Secrets {
    /// The call (arguments) or its result is refused.
    Block,
    /// The credential is replaced by `[REDACTED:kind]`.
    Redact,
    /// Not scanned.
    Off,
}

/// Validated `[security]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SecurityConfig {
    /// See [`RawSecurity::on_tool_change`].
    pub on_tool_change: OnToolChange,
    /// See [`RawSecurity::on_new_tool`].
    pub on_new_tool: OnNewTool,
    /// See [`RawSecurity::on_suspicious`].
    pub on_suspicious: Option<OnSuspicious>,
    /// See [`RawSecurity::secrets`].
    pub secrets: Option<Secrets>,
    /// Per project name.
    pub project_secrets: BTreeMap<String, Secrets>,
    /// Code mode, on or off and its limits, per project.
    pub code_mode: CodeMode,
}

/// `[security.code_mode]` and each project's, checked: the key and message of what is wrong.
pub fn code_mode(raw: &RawSecurity) -> Result<CodeMode, (String, String)> {
    let projects = raw
        .projects
        .iter()
        .filter_map(|(name, p)| Some((name, p.code_mode.as_ref()?)));
    CodeMode::new(raw.code_mode.as_ref(), projects)
}

impl From<RawSecurity> for SecurityConfig {
    fn from(raw: RawSecurity) -> Self {
        Self {
            on_tool_change: raw.on_tool_change.unwrap_or_default(),
            on_new_tool: raw.on_new_tool.unwrap_or_default(),
            on_suspicious: raw.on_suspicious,
            secrets: raw.secrets,
            project_secrets: raw
                .projects
                .into_iter()
                .filter_map(|(name, p)| Some((name, p.secrets?)))
                .collect(),
            // Checked, it comes from `code_mode` (it may fail; this may not).
            code_mode: CodeMode::default(),
        }
    }
}

/// Which way a call's data goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// `tool_execute` arguments, to the server.
    Arguments,
    /// The server's result, to the caller.
    Results,
}

impl Direction {
    /// For logs and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Arguments => "arguments",
            Direction::Results => "results",
        }
    }
}

impl SecurityConfig {
    /// What to do with credentials going `direction` for `project` on a server
    /// with `server_secrets` and `trusted` (`trusted_for_credentials`): the
    /// project's setting, else (for arguments) nothing on a trusted server,
    /// else the server's, else `[security]`'s, else block arguments and
    /// redact results.
    pub fn secrets_for(
        &self,
        project: &str,
        server_secrets: Option<Secrets>,
        trusted: bool,
        direction: Direction,
    ) -> Secrets {
        if let Some(s) = self.project_secrets.get(project) {
            return *s;
        }
        if trusted && direction == Direction::Arguments {
            return Secrets::Off;
        }
        server_secrets.or(self.secrets).unwrap_or(match direction {
            Direction::Arguments => Secrets::Block,
            Direction::Results => Secrets::Redact,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_follow_project_then_trust_then_server_then_section() {
        let mut c = SecurityConfig::default();
        let (a, r) = (Direction::Arguments, Direction::Results);
        assert_eq!(c.secrets_for("p", None, false, a), Secrets::Block);
        assert_eq!(c.secrets_for("p", None, false, r), Secrets::Redact);
        assert_eq!(c.secrets_for("p", None, true, a), Secrets::Off);
        assert_eq!(c.secrets_for("p", None, true, r), Secrets::Redact);
        c.secrets = Some(Secrets::Redact);
        assert_eq!(c.secrets_for("p", None, false, a), Secrets::Redact);
        assert_eq!(c.secrets_for("p", Some(Secrets::Off), false, r), Secrets::Off);
        c.project_secrets.insert("p".into(), Secrets::Block);
        assert_eq!(c.secrets_for("p", None, true, a), Secrets::Block);
        assert_eq!(c.secrets_for("q", None, true, a), Secrets::Off);
    }
}
