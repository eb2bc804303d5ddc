//! `archive index` and `archive search`: the `[archives]` folders from the
//! command line, without a running gateway.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::Subcommand;
use serde_json::json;

use ::archive::{self, Archive, ArchivesConfig, Options};
use config::{Builtin, Config, Transport};

/// `archive …`.
#[derive(Debug, Subcommand)]
pub enum ArchiveCommand {
    /// Index the [archives] folders (incrementally: unchanged files are skipped).
    Index {
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Search the indexed archive as searchLocalArchives does.
    Search {
        /// Words, or a "quoted phrase".
        query: String,
        /// Exact words only (no typo tolerance).
        #[arg(long)]
        exact: bool,
        /// Include citations and the citation graph.
        #[arg(long)]
        citations: bool,
        /// Citation graph depth (1-3).
        #[arg(long, default_value_t = 1)]
        depth: u64,
        /// How many results (1-50).
        #[arg(long, short = 'n', default_value_t = 10)]
        limit: u64,
        /// Print the tool's JSON.
        #[arg(long)]
        json: bool,
    },
}

fn archives(config: &Config) -> anyhow::Result<Arc<ArchivesConfig>> {
    let found = config.servers.iter().find_map(|s| match &s.transport {
        Transport::Builtin(Builtin::Archives(a)) => Some(a.clone()),
        _ => None,
    });
    match found {
        Some(a) if a.unconfigured().is_none() => Ok(a),
        _ => bail!(
            "{}: no archive folders; add\n\n[archives]\nfolders = [\"path/to/notes\"]\n",
            config.source
        ),
    }
}

/// Runs an `archive` command.
pub(super) fn run(config: &Config, command: ArchiveCommand) -> anyhow::Result<ExitCode> {
    let archives = archives(config)?;
    match command {
        ArchiveCommand::Index { json } => index(&archives, json),
        ArchiveCommand::Search {
            query,
            exact,
            citations,
            depth,
            limit,
            json,
        } => {
            let args = json!({ "query": query, "fuzzy": !exact, "includeCitations": citations, "citationDepth": depth, "limit": limit });
            let options =
                Options::from_args(args.as_object().expect("an object")).map_err(|p| anyhow::anyhow!(p.join("; ")))?;
            let answer = Archive::new(archives).search(&options)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&answer.to_json(&options))?);
            } else {
                println!("{}", answer.summary(&options));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn index(archives: &ArchivesConfig, json: bool) -> anyhow::Result<ExitCode> {
    let bar = indicatif::ProgressBar::new(0);
    if std::io::stderr().is_terminal() {
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} files  {wide_msg}")
                .expect("a valid template"),
        );
    } else {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let plain = !std::io::stderr().is_terminal();
    let mut last_line = 0;
    let report = archive::index(archives, &mut |p| {
        bar.set_length(p.total as u64);
        bar.set_position(p.done as u64);
        bar.set_message(p.path.to_string());
        // Without a terminal: a line per thousand files, so long runs show they are alive.
        if plain && p.done >= last_line + 1000 {
            last_line = p.done;
            eprintln!("indexed {}/{} files", p.done, p.total);
        }
    })
    .with_context(|| format!("indexing into {}", archives.db_path.display()))?;
    bar.finish_and_clear();
    for (path, why) in &report.skipped {
        eprintln!("skipped {path}: {why}");
    }
    let seconds = report.elapsed.as_secs_f64().max(1e-9);
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "scanned": report.scanned, "added": report.added, "updated": report.updated,
                "unchanged": report.unchanged, "removed": report.removed, "ignored": report.ignored,
                "skipped": report.skipped.iter().map(|(p, w)| json!({ "path": p, "reason": w })).collect::<Vec<_>>(),
                "bytes": report.bytes, "citations": report.citations, "resolvedCitations": report.resolved,
                "seconds": seconds,
            }))?
        );
    } else {
        println!(
            "{} files: {} added, {} updated, {} unchanged, {} removed, {} skipped, {} other files ignored; {} citations ({} to archived documents); {:.2} s ({:.0} files/s)",
            report.scanned,
            report.added,
            report.updated,
            report.unchanged,
            report.removed,
            report.skipped.len(),
            report.ignored,
            report.citations,
            report.resolved,
            seconds,
            report.scanned as f64 / seconds
        );
    }
    Ok(ExitCode::SUCCESS)
}
