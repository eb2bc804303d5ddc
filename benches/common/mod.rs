//! Shared by the benches that run the real binary over HTTP.
#![allow(dead_code)] // each bench uses a different part of this module

use tokio::io::AsyncBufReadExt;

pub(crate) mod measure;
pub(crate) mod reps;

/// The gateway binary: the one cargo built for the benches, or
/// `BENCH_GATEWAY`, a copy carried to a machine with no Rust toolchain
/// (`scripts/scale pack`).
pub(crate) fn bin() -> &'static str {
    static BIN: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        std::env::var("BENCH_GATEWAY").unwrap_or_else(|_| env!("CARGO_BIN_EXE_mcp-gateway").into())
    });
    &BIN
}

/// Bench gateways never fetch a missing embedding model (its download and
/// embedding would load the machine being measured): port 9 refuses at once.
pub(crate) const OFFLINE_MODEL_URL: &str = "http://127.0.0.1:9/offline.whl";

/// Starts `mcp-gateway ARGS` (a command that prints "listening on http://…" on
/// stderr) and returns that URL with the child, which dies with its handle.
pub(crate) async fn spawn(args: &[&str]) -> (String, tokio::process::Child) {
    spawn_with(args, &[]).await
}

/// `mcp-gateway serve --http` on `config` (a `gateway.toml`'s text) in a
/// fresh folder: its URL, the child, and the folder, kept as long as it runs.
pub(crate) async fn serve(config: &str) -> (String, tokio::process::Child, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gateway.toml");
    std::fs::write(&path, config).unwrap();
    let (url, child) = spawn(&["serve", "--http", "127.0.0.1:0", "--config", path.to_str().unwrap()]).await;
    (url, child, dir)
}

/// [`spawn`] with extra environment variables.
pub(crate) async fn spawn_with(args: &[&str], env: &[(&str, &str)]) -> (String, tokio::process::Child) {
    let mut child = tokio::process::Command::new(bin())
        .args(args)
        .envs(env.iter().copied())
        // BENCH_RUST_LOG measures another level (it must keep the "listening" line).
        .env(
            "RUST_LOG",
            std::env::var("BENCH_RUST_LOG").unwrap_or_else(|_| "info".into()),
        )
        .env("MCP_GATEWAY_MODEL_URL", OFFLINE_MODEL_URL)
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines.next_line().await.unwrap().expect("prints its address");
        if let Some(i) = line.find("http://") {
            break line[i..].split_whitespace().next().unwrap().to_string();
        }
    };
    // Keep reading, so a chatty child never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (url, child)
}
