//! Logging on stderr: the filter, the format, each line scrubbed of
//! credentials and bounded, and written at once or, when logging is busy,
//! in batches ([`Coalesced`]).

use std::io::Write as _;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::bail;

use super::{Cli, Command, LogFormat};
use config::{self, Config};

mod fields;

/// A boxed layer of the process's one subscriber.
type Boxed = Box<dyn tracing_subscriber::Layer<tracing_subscriber::Registry> + Send + Sync>;

/// Initializes logging on stderr (stdout may be the MCP transport), and for
/// `serve` with `[telemetry] otlp_endpoint`, the export of spans.
pub fn init_logging(cli: &Cli) -> anyhow::Result<()> {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let default = match cli.command {
        Command::Serve { http: Some(_), .. } => "info",
        // Over stdio alone a client started the gateway, and some clients
        // show its stderr in the user's terminal: a line per call is noise.
        _ => "warn",
    };
    let directives = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let mut layers = vec![lines(cli.log_format, directives, |line| STDERR.write_line(line))];
    if let Some(telemetry) = exported_traces(cli) {
        layers.push(telemetry::traces::layer(&telemetry)?);
    }
    if let Err(e) = tracing_subscriber::registry().with(layers).try_init() {
        bail!("cannot initialize logging: {e}");
    }
    Ok(())
}

/// The log lines: those `directives` let through ([`log_filter`]), in
/// `format`, each scrubbed ([`scrub`]) and handed whole to `sink`. The
/// binary's sink is its standard error; the test harness keeps each
/// gateway's lines apart.
pub fn lines(format: LogFormat, directives: tracing_subscriber::EnvFilter, sink: Sink) -> Boxed {
    use tracing_subscriber::Layer;
    let filter = log_filter(directives);
    let fmt = tracing_subscriber::fmt::layer().with_writer(move || Scrubbed(sink));
    match format {
        LogFormat::Json => fmt.json().flatten_event(true).with_filter(filter).boxed(),
        LogFormat::Pretty => fmt
            .with_ansi(false)
            .fmt_fields(fields::PlainFields)
            .with_filter(filter)
            .boxed(),
    }
}

/// Where a scrubbed log line goes.
pub type Sink = fn(&[u8]) -> std::io::Result<()>;

/// What is logged: `directives` (RUST_LOG or the default), less rmcp's
/// payloads, whatever RUST_LOG says ([`telemetry::loggable`]).
fn log_filter(
    directives: tracing_subscriber::EnvFilter,
) -> impl tracing_subscriber::layer::Filter<tracing_subscriber::Registry> {
    use tracing_subscriber::filter::{FilterExt, LevelFilter, filter_fn};
    // The hint says this filter never widens the directives: without one the
    // pair hints nothing, every level counts as wanted, and each `log::trace!`
    // of a dependency (mio's, for every socket) reached the subscriber.
    directives.and(filter_fn(telemetry::loggable).with_max_level_hint(LevelFilter::TRACE))
}

/// A writer of log lines, each scrubbed ([`scrub`]) on its way to its
/// sink: dependencies log URLs too (rmcp's transport worker, a failed
/// request's URL at ERROR), and what a caller sent (rmcp logs every error a
/// handler returns, and the caller's JSON-RPC id, whole).
struct Scrubbed(Sink);

/// Most bytes of one log line. The gateway's own lines quote a caller's
/// strings short (`leaks::quote`); a dependency's line that quotes one
/// whole is cut here (a JSON line cut is no longer JSON, which only a
/// caller's abuse brings about).
const MAX_LOG_LINE_BYTES: usize = 16 * 1024;

/// A log line as it is written: URLs masked ([`vocab::mask::urls_in`]),
/// credentials redacted, at most [`MAX_LOG_LINE_BYTES`] (a cut line ends in `…`).
fn scrub(line: &str) -> String {
    let (body, end) = match line.strip_suffix('\n') {
        Some(body) => (body, "\n"),
        None => (line, ""),
    };
    let masked = vocab::mask::urls_in(body);
    leaks::redacted_head(&masked, MAX_LOG_LINE_BYTES) + end
}

impl std::io::Write for Scrubbed {
    /// The formatter writes each event whole, so a URL or a credential is
    /// never split across calls.
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let line = scrub(&String::from_utf8_lossy(buf));
        (self.0)(line.as_bytes())?;
        Ok(buf.len())
    }

    /// Lines held back are written by [`flush_logs`], at exit.
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Writes out log lines still held back ([`Coalesced`]); `main` calls it
/// before the process exits.
pub fn flush_logs() {
    let _ = STDERR.flush();
}

/// The gateway's standard error, shared by every log line.
static STDERR: Coalesced = Coalesced::new();

/// Lines a second above which log lines are written in batches.
const BUSY_LINES_PER_SECOND: u32 = 200;

/// How long a line waits, at most, for others to share its write when
/// logging is busy.
const LINGER: Duration = Duration::from_millis(10);

/// Held-back bytes past which the thread that logs a line writes them
/// itself (a stalled reader then slows logging down, as an unbuffered pipe
/// would).
const MAX_PENDING_BYTES: usize = 256 * 1024;

/// Standard error that writes each line at once while logging is quiet,
/// and in batches at most [`LINGER`] apart while it is busy (over
/// [`BUSY_LINES_PER_SECOND`]): every write to a pipe wakes its reader
/// (journald, docker, a terminal, a test): at one session the access
/// line's wake-up alone was about a twentieth of the gateway's CPU per
/// call (docs/src/measured.md, "The access line's write"). Lines keep
/// their order: a line written at once first writes out those held back.
struct Coalesced {
    state: Mutex<Pending>,
    held: Condvar,
}

struct Pending {
    bytes: Vec<u8>,
    rate: Rate,
    flusher: bool,
}

impl Pending {
    /// Writes out the held lines (under the lock, so lines keep their
    /// order); they are gone even if the write fails, as an unbuffered
    /// line would be. The buffer keeps its room for the next batch.
    fn write_out(&mut self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        let written = out.write_all(&self.bytes);
        self.bytes.clear();
        written
    }
}

impl Coalesced {
    const fn new() -> Self {
        Self {
            state: Mutex::new(Pending {
                bytes: Vec::new(),
                rate: Rate::new(),
                flusher: false,
            }),
            held: Condvar::new(),
        }
    }

    fn write_line(&'static self, line: &[u8]) -> std::io::Result<()> {
        let mut pending = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let busy = pending.rate.count(Instant::now());
        if !busy || pending.bytes.len() + line.len() > MAX_PENDING_BYTES {
            // Written under the lock, after what is held back: in order.
            let mut out = std::io::stderr().lock();
            pending.write_out(&mut out)?;
            return out.write_all(line);
        }
        let first = pending.bytes.is_empty();
        pending.bytes.extend_from_slice(line);
        if pending.flusher {
            if first {
                self.held.notify_one();
            }
            return Ok(());
        }
        let spawned = std::thread::Builder::new()
            .name("log-writer".into())
            .spawn(move || self.flush_held());
        match spawned {
            Ok(_) => pending.flusher = true,
            // No thread to write them later: now, then.
            Err(_) => pending.write_out(&mut std::io::stderr().lock())?,
        }
        Ok(())
    }

    /// The logging thread: waits for held lines, lets others join them for
    /// [`LINGER`], and writes them out in one write.
    fn flush_held(&self) {
        let mut pending = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            while pending.bytes.is_empty() {
                pending = self.held.wait(pending).unwrap_or_else(|p| p.into_inner());
            }
            drop(pending);
            std::thread::sleep(LINGER);
            pending = self.state.lock().unwrap_or_else(|p| p.into_inner());
            let _ = pending.write_out(&mut std::io::stderr().lock());
        }
    }

    fn flush(&self) -> std::io::Result<()> {
        let mut pending = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = std::io::stderr().lock();
        pending.write_out(&mut out)?;
        out.flush()
    }
}

/// Lines counted over the last tenth of a second (two buckets of 50 ms).
#[derive(Debug, Clone, Copy)]
struct Rate {
    bucket: Option<Instant>,
    now: u32,
    before: u32,
}

impl Rate {
    const BUCKET: Duration = Duration::from_millis(50);

    const fn new() -> Self {
        Self {
            bucket: None,
            now: 0,
            before: 0,
        }
    }

    /// Counts a line at `at`; whether logging is busy.
    fn count(&mut self, at: Instant) -> bool {
        match self.bucket {
            Some(start) if at < start + Self::BUCKET => {}
            Some(start) if at < start + 2 * Self::BUCKET => {
                (self.before, self.now) = (self.now, 0);
                self.bucket = Some(start + Self::BUCKET);
            }
            _ => (self.bucket, self.before, self.now) = (Some(at), 0, 0),
        }
        self.now += 1;
        (self.now + self.before) * 10 > BUSY_LINES_PER_SECOND
    }
}

/// `serve`'s `[telemetry]`, read ahead of the run (which reports a bad config itself).
fn exported_traces(cli: &Cli) -> Option<config::TelemetryConfig> {
    if !matches!(cli.command, Command::Serve { .. }) {
        return None;
    }
    let path = cli.config.clone().or_else(config::default_path);
    Config::load(path.as_deref()).ok()?.telemetry
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_filter_hints_the_directives_level() {
        use tracing_subscriber::filter::LevelFilter;
        use tracing_subscriber::layer::Filter;
        let hint = |d: &str| Filter::max_level_hint(&log_filter(tracing_subscriber::EnvFilter::new(d)));
        assert_eq!(hint("info"), Some(LevelFilter::INFO));
        assert_eq!(hint("warn,mcp_gateway=debug"), Some(LevelFilter::DEBUG));
    }

    /// Issue 41: rmcp's WARN `response error` carried a caller's megabyte,
    /// credential included.
    #[test]
    fn log_lines_are_masked_redacted_and_bounded() {
        let token = format!("mgwa_1_{}", "0123456789abcdef".repeat(4));
        let line = format!("WARN response error: unknown tool '{token}' {}\n", "y ".repeat(1 << 20));
        let out = scrub(&line);
        assert!(out.len() <= MAX_LOG_LINE_BYTES + "…\n".len(), "{}", out.len());
        assert!(out.ends_with("…\n"), "one line still");
        assert!(out.contains("[REDACTED:gateway-admin-token]"), "{}", &out[..200]);
        assert!(!out.contains("0123456789abcdef"));
        assert_eq!(scrub("plain line\n"), "plain line\n");
        assert_eq!(scrub("db postgres://gw:pw@db/gw\n"), "db postgres://gw:***@db/gw\n");
    }

    #[test]
    fn lines_are_batched_only_while_logging_is_busy() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut rate = Rate::new();
        // A call's few lines, and one a second: written at once.
        assert!((0..5).all(|i| !rate.count(ms(i))));
        assert!(!rate.count(ms(1_000)));
        // A thousand a second: busy from the 21st line of a tenth of a second.
        let busy: Vec<bool> = (0..40).map(|i| rate.count(ms(2_000 + i))).collect();
        assert!(
            busy[..20].iter().all(|b| !b) && busy[20..].iter().all(|b| *b),
            "{busy:?}"
        );
        // Quiet again a tenth of a second later.
        assert!(!rate.count(ms(2_200)));
    }
}
