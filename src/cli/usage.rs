//! `mcp-gateway usage`: calls, errors and what the gateway kept out of
//! models' context, per project, over the last hour, day or week, from the
//! audit log (the console's Usage page reads the same).

use std::process::ExitCode;

use clap::{Args, ValueEnum};

use config::Config;
use gateway::operator::Operator;
use store::{Store, Usage, UsageRange};

/// `usage` arguments.
#[derive(Debug, Args)]
pub struct UsageArgs {
    /// How far back.
    #[arg(long, value_enum, default_value_t = Range::Day)]
    range: Range,
    /// Only this project's calls.
    #[arg(long)]
    project: Option<String>,
    /// Print the JSON the console reads (camelCase).
    #[arg(long)]
    json: bool,
}

/// How far back usage looks.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Range {
    /// The last hour.
    Hour,
    /// The last day.
    Day,
    /// The last week.
    Week,
}

impl From<Range> for UsageRange {
    fn from(r: Range) -> Self {
        match r {
            Range::Hour => UsageRange::Hour,
            Range::Day => UsageRange::Day,
            Range::Week => UsageRange::Week,
        }
    }
}

/// Prints usage: totals, then one line per project.
pub(super) fn run(config: &Config, args: UsageArgs) -> anyhow::Result<ExitCode> {
    let store = Store::open_at(&config.store)?;
    let operator = Operator::new(&store);
    // The newest rows count too: the rollups catch up first.
    operator.roll_up_usage()?;
    let usage = operator.usage(args.range.into(), args.project.as_deref(), None)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&usage)?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", table(&usage));
    Ok(ExitCode::SUCCESS)
}

/// The text `usage` prints.
fn table(usage: &Usage) -> String {
    let mut out = format!(
        "since {}: {} calls, {} not ok; discovery saved {} tokens (o200k), code mode kept {} out of context\n",
        usage.since,
        usage.calls,
        usage.errors,
        usage.saved_tokens,
        bytes(usage.kept_bytes)
    );
    out.push_str(&format!(
        "{:<24} {:>8} {:>8} {:>14} {:>12}\n",
        "PROJECT", "CALLS", "ERRORS", "TOKENS SAVED", "BYTES KEPT"
    ));
    for p in &usage.projects {
        out.push_str(&format!(
            "{:<24} {:>8} {:>8} {:>14} {:>12}\n",
            p.name, p.calls, p.errors, p.saved_tokens, p.kept_bytes
        ));
    }
    out
}

/// `n` bytes in words: "12.3 KB".
fn bytes(n: i64) -> String {
    match n {
        n if n >= 1_000_000 => format!("{:.1} MB", n as f64 / 1e6),
        n if n >= 1_000 => format!("{:.1} KB", n as f64 / 1e3),
        n => format!("{n} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_words() {
        assert_eq!(bytes(999), "999 bytes");
        assert_eq!(bytes(12_345), "12.3 KB");
        assert_eq!(bytes(4_200_000), "4.2 MB");
    }
}
