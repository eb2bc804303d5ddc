//! `servers`: each downstream's state, and what search, audit and code mode
//! are in force.

use std::process::ExitCode;

use serde_json::{Value, json};

use super::audit_words;
use config::Transport;
use downstream::Status;
use gateway::Gateway;

pub(super) fn print(gw: &Gateway, json: bool) -> anyhow::Result<ExitCode> {
    let snapshot = gw.catalog().snapshot();
    let rows: Vec<Value> = gw
        .registry()
        .servers()
        .iter()
        .map(|s| {
            let state = s.state();
            let transport = match &s.config.transport {
                Transport::Stdio { command, .. } => format!("stdio {command}"),
                Transport::Http { url, .. } => format!("http {}", vocab::mask::url(url)),
                Transport::Builtin(_) => "built-in".to_string(),
            };
            let error = match &state.status {
                Status::Failed(e) | Status::NotConfigured(e) => Some(e.clone()),
                _ => None,
            };
            let transport = match state.status {
                Status::SignInRequired if !s.config.shared => format!(
                    "{transport}; shared = false: takes only projects' own secrets (mcp-gateway secret set --project P --server {} {} NAME=-)",
                    s.name(),
                    s.config.secret_flag()
                ),
                Status::SignInRequired => format!(
                    "{transport}; takes only projects' own sign-ins (mcp-gateway login {} --project P)",
                    s.name()
                ),
                _ => transport,
            };
            let held: Vec<Value> = snapshot
                .held_by(s.name())
                .into_iter()
                .map(|h| json!({ "tool": h.tool, "why": h.why }))
                .collect();
            json!({
                "name": s.name(), "title": s.config.title, "status": state.status.word(), "tools": state.tools.len(),
                "enabledCount": snapshot.enabled_by(s.name()), "restarts": state.restarts,
                "protocol": state.protocol, "transport": transport, "error": error, "projectConnections": s.instance_count(),
                "held": held, "flagged": snapshot.flagged_by(s.name()),
            })
        })
        .collect();
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        println!(
            "{:<20} {:<12} {:>5}  {:<11} DETAIL",
            "SERVER", "STATUS", "TOOLS", "PROTOCOL"
        );
        for r in &rows {
            let mut detail = r["error"]
                .as_str()
                .or(r["transport"].as_str())
                .unwrap_or("")
                .to_string();
            let held = r["held"].as_array().map_or(0, Vec::len);
            if held > 0 {
                detail.push_str(&format!("; {held} held for review (mcp-gateway tools changes)"));
            }
            if let Some(n) = r["flagged"].as_u64().filter(|n| *n > 0) {
                detail.push_str(&format!("; {n} tagged suspicious:*"));
            }
            // `6/7`: six of its seven tools enabled (rules, overrides, holds).
            let (tools, enabled) = (
                r["tools"].as_u64().unwrap_or(0),
                r["enabledCount"].as_u64().unwrap_or(0),
            );
            let tools = match enabled == tools {
                true => tools.to_string(),
                false => format!("{enabled}/{tools}"),
            };
            println!(
                "{:<20} {:<12} {:>5}  {:<11} {}",
                r["name"].as_str().unwrap_or(""),
                r["status"].as_str().unwrap_or(""),
                tools,
                r["protocol"].as_str().unwrap_or("-"),
                detail
            );
        }
        let search = gw.catalog().search_status();
        println!("\nsearch: {} ({})", search.in_force, search.detail);
        println!("audit: {}", audit_words(gw.audit_mode()));
        println!("code mode: {}", code_mode_words(&gw.code_mode_status()));
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether `tool_execute` runs scripts, and under which limits, for `servers`.
fn code_mode_words(status: &Value) -> String {
    let l = &status["limits"];
    let limits = format!(
        "{} MiB, {} ms CPU, {} ms in all, {} calls, {} at once, {} bytes out",
        l["memory_mb"], l["cpu_ms"], l["timeout_ms"], l["max_calls"], l["parallel"], l["max_output_bytes"]
    );
    let list = |key: &str| {
        let names: Vec<&str> = status[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        names.join(", ")
    };
    match status["enabled"].as_bool() {
        Some(true) if list("projects_off").is_empty() => format!("on (tool_execute takes script; {limits})"),
        Some(true) => format!(
            "on, off for {} (tool_execute takes script; {limits})",
            list("projects_off")
        ),
        _ if list("projects_on").is_empty() => "off ([security.code_mode] enabled = false)".into(),
        _ => format!("off, on for {} ({limits})", list("projects_on")),
    }
}
