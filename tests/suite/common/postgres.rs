//! A throwaway PostgreSQL cluster for tests, from the machine's own
//! PostgreSQL (`scripts/setup` installs Debian's): `initdb` into a temp
//! folder, a loopback port, started once per test binary
//! ([`Cluster::shared`]); every test gets a database of its own
//! ([`Cluster::database`]). A watchdog stops the cluster and removes its
//! folder when the test binary exits. As root (CI), PostgreSQL runs as the
//! `postgres` user, since it refuses to run as root.
//!
//! Shared by the library's unit tests and the integration tests (included
//! by path), so it uses std only.

#![allow(dead_code)]

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// A running cluster.
pub(crate) struct Cluster {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    /// Uid and gid PostgreSQL runs as, when the tests run as root.
    user: Option<(u32, u32)>,
    databases: AtomicU32,
}

/// Where the PostgreSQL server binaries are: `$PG_BIN`, or the newest
/// `/usr/lib/postgresql/<version>/bin`.
fn bin_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("PG_BIN") {
        return dir.into();
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, bin): &(u32, PathBuf)| bin.join("postgres").exists())
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).unwrap_or_else(|| {
        panic!("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/postgres): run scripts/setup, or set PG_BIN")
    })
}

fn id_of(flag: &str) -> u32 {
    let out = Command::new("id").args([flag, "postgres"]).output().expect("id runs");
    assert!(
        out.status.success(),
        "running as root, and there is no 'postgres' user to run PostgreSQL as"
    );
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("a numeric id")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Cluster {
    /// The cluster this test binary shares.
    pub(crate) fn shared() -> &'static Cluster {
        static SHARED: OnceLock<Cluster> = OnceLock::new();
        SHARED.get_or_init(Cluster::start_new)
    }

    /// A cluster of its own (for a test that stops and starts it).
    pub(crate) fn start_new() -> Cluster {
        let bin = bin_dir();
        let root = std::env::temp_dir().join(format!("mcp-gateway-pg-{}-{}", std::process::id(), free_port()));
        std::fs::create_dir_all(&root).unwrap();
        let is_root = Command::new("id")
            .arg("-u")
            .output()
            .map(|o| o.stdout.starts_with(b"0\n"))
            .unwrap_or(false);
        let user = is_root.then(|| (id_of("-u"), id_of("-g")));
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(&root, Some(uid), Some(gid)).unwrap();
        }
        let cluster = Cluster {
            bin,
            dir: root,
            port: free_port(),
            user,
            databases: AtomicU32::new(0),
        };
        let initdb = cluster
            .command("initdb")
            .args([
                "-D",
                "data",
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C",
            ])
            .output()
            .expect("initdb runs");
        assert!(
            initdb.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&initdb.stderr)
        );
        cluster.start();
        cluster.watch();
        cluster
    }

    fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(self.bin.join(program));
        cmd.current_dir(&self.dir).stdin(Stdio::null());
        if let Some((uid, gid)) = self.user {
            cmd.uid(uid).gid(gid);
        }
        cmd
    }

    /// Starts (or starts again) the server and waits until it answers.
    pub(crate) fn start(&self) {
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -k {} -c max_connections=400 -c fsync=off -c synchronous_commit=off -c full_page_writes=off",
            self.port,
            self.dir.display()
        );
        let started = self
            .command("pg_ctl")
            .args([
                "-D",
                "data",
                "-l",
                "server.log",
                "-w",
                "-t",
                "60",
                "-o",
                &options,
                "start",
            ])
            .stdout(Stdio::null())
            .output()
            .expect("pg_ctl runs");
        assert!(
            started.status.success(),
            "PostgreSQL did not start: {}{}",
            String::from_utf8_lossy(&started.stderr),
            std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.answers() {
            assert!(
                Instant::now() < deadline,
                "PostgreSQL does not answer on port {}",
                self.port
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Stops the server (fast shutdown: sessions are cut, nothing committed is lost).
    pub(crate) fn stop(&self) {
        let _ = self
            .command("pg_ctl")
            .args(["-D", "data", "-m", "fast", "-w", "stop"])
            .stdout(Stdio::null())
            .status();
    }

    fn answers(&self) -> bool {
        self.command("pg_isready")
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "postgres"])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Stops the cluster and removes its folder once this process is gone.
    // The watchdog outlives this process by design; init reaps it.
    #[allow(clippy::zombie_processes)]
    fn watch(&self) {
        let script = format!(
            "while [ -d /proc/{pid} ]; do sleep 1; done; {pg_ctl} -D {dir}/data -m immediate stop >/dev/null 2>&1; rm -rf {dir}",
            pid = std::process::id(),
            pg_ctl = self.bin.join("pg_ctl").display(),
            dir = self.dir.display(),
        );
        let mut watchdog = Command::new("sh");
        watchdog
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some((uid, gid)) = self.user {
            watchdog.uid(uid).gid(gid);
        }
        // Its own process group: a test runner's Ctrl-C must not stop it before the cluster.
        watchdog.process_group(0).spawn().expect("the watchdog starts");
    }

    /// The port it listens on.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// The folder of the cluster (its `server.log` is there).
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// A new empty database; its URL.
    pub(crate) fn database(&self) -> String {
        let name = format!("t{}", self.databases.fetch_add(1, Ordering::Relaxed));
        let created = self
            .command("createdb")
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "postgres", &name])
            .output()
            .expect("createdb runs");
        assert!(
            created.status.success(),
            "createdb failed: {}",
            String::from_utf8_lossy(&created.stderr)
        );
        self.url(&name)
    }

    /// The URL of database `name`.
    pub(crate) fn url(&self, name: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// Runs `sql` in database `name` with psql; its output.
    pub(crate) fn psql(&self, name: &str, sql: &str) -> String {
        let out = self
            .command("psql")
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                "-d",
                name,
            ])
            .args(["-v", "ON_ERROR_STOP=1", "-At", "-c", sql])
            .output()
            .expect("psql runs");
        assert!(
            out.status.success(),
            "psql failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}
