//! The `mcp-gateway` binary: parses the command line and runs it (see `cli`).

use std::process::ExitCode;

use clap::Parser;
use mcp_gateway::cli::{self, Cli};

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(e) = cli::init_logging(&cli) {
        eprintln!("mcp-gateway: {e:#}");
        return ExitCode::from(2);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cli.worker_threads())
        .enable_all()
        .build();
    let runtime = match runtime {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mcp-gateway: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let result = runtime.block_on(cli::run(cli));
    // Log lines held back while logging was busy go out before the process ends.
    cli::flush_logs();
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("mcp-gateway: {e:#}");
            ExitCode::from(2)
        }
    }
}
