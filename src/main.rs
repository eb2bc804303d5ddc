use std::process::ExitCode;

use clap::Parser;
use mcp_gateway::cli::{self, Cli};

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(e) = cli::init_logging(&cli) {
        eprintln!("mcp-gateway: {e:#}");
        return ExitCode::from(2);
    }
    match cli::run(cli).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("mcp-gateway: {e:#}");
            ExitCode::from(2)
        }
    }
}
