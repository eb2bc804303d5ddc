//! What the load benches read off a process and a run: its CPU time and
//! memory from /proc, and percentiles of call latencies.

use std::time::Duration;

use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};

pub(crate) type Client = RunningService<RoleClient, ()>;

/// An MCP session over streamable HTTP.
pub(crate) async fn connect(url: &str) -> Client {
    ().serve(StreamableHttpClientTransport::from_uri(url)).await.unwrap()
}

/// A JSON object as tool arguments.
pub(crate) fn args(v: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    v.as_object().unwrap().clone()
}

/// The process's resident memory.
pub(crate) fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// User + system CPU time the process has used so far (all its threads,
/// not its children).
pub(crate) fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // pid (comm) state … : fields after the last ')' start at field 3; utime and stime are 14 and 15.
    let after = &stat[stat.rfind(')').map_or(0, |i| i + 1)..];
    let fields: Vec<u64> = after.split_whitespace().map(|f| f.parse().unwrap_or(0)).collect();
    let ticks = fields.get(11).copied().unwrap_or(0) + fields.get(12).copied().unwrap_or(0);
    Duration::from_secs_f64(ticks as f64 / clock_ticks_per_second())
}

/// A process's children (a gateway's servers): every process whose parent
/// it is, read from `/proc/*/stat`, which every Linux has (a task's
/// `children` file needs a kernel built with it, and sandboxes such as
/// gVisor may lack it).
pub(crate) fn children(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&p| parent(p) == Some(pid))
        .collect()
}

/// Its parent's pid: `pid (comm) state ppid …`, the comm possibly holding spaces and parentheses.
fn parent(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..].split_whitespace().nth(1)?.parse().ok()
}

/// CPU time of the children a process has now.
pub(crate) fn children_cpu(pid: u32) -> Duration {
    children(pid).into_iter().map(cpu_time).sum()
}

/// CPU time of a process and of the children it has now.
pub(crate) fn cpu_with_children(pid: u32) -> Duration {
    cpu_time(pid) + children_cpu(pid)
}

/// Read once: `getconf` is a process of its own.
fn clock_ticks_per_second() -> f64 {
    static TICKS: std::sync::LazyLock<f64> = std::sync::LazyLock::new(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok()?.trim().parse().ok())
            .unwrap_or(100.0)
    });
    *TICKS
}

/// The `p` quantile of `sorted`, in ms.
pub(crate) fn pct(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

/// The machine, as a figure's caption names it: CPU model and cores.
pub(crate) fn machine() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = info
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map_or("unknown CPU", str::trim)
        .to_string();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{model}, {cores} cores")
}

/// CPU time the hypervisor gave other guests while this one wanted it, all
/// cores together, so far (the `steal` column of `/proc/stat`, in its
/// hundredths of a second); zero where there is none to read. On a shared
/// VM a rep's CPU per call rises with it (docs/src/measured.md).
pub(crate) fn stolen() -> Duration {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let ticks = stat
        .lines()
        .find_map(|l| l.strip_prefix("cpu "))
        .and_then(|l| l.split_whitespace().nth(7))
        .and_then(|t| t.parse::<u64>().ok())
        .unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

/// A comma-separated list of numbers from the environment, or `default`'s.
pub(crate) fn settings<T: std::str::FromStr>(name: &str, default: &str) -> Vec<T> {
    std::env::var(name)
        .unwrap_or_else(|_| default.into())
        .split(',')
        .map(|n| {
            n.trim()
                .parse()
                .unwrap_or_else(|_| panic!("{name} is a list of numbers, e.g. {default}"))
        })
        .collect()
}

/// A number from the environment, or `default`.
pub(crate) fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}
