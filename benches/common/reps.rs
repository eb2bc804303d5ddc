//! Reps of sessions calling one tool in a loop, as the benches that set the
//! gateway beside another server or proxy measure them: calls, latencies,
//! errors and the CPU a process spent.

use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;

use super::measure::{Client, children_cpu, connect, cpu_time, pct, stolen};

/// One measured rep.
pub(crate) struct Rep {
    pub(crate) errors: u64,
    pub(crate) latencies: Vec<Duration>,
    pub(crate) seconds: f64,
    /// CPU the process spent (its threads).
    pub(crate) own: Duration,
    /// The same, and its children's (the servers it runs).
    pub(crate) with_children: Duration,
    /// CPU time other guests took from this machine meanwhile ([`stolen`]).
    pub(crate) stolen: Duration,
}

/// `n` sessions on `url`, opened one after another.
pub(crate) async fn sessions_on(url: &str, n: usize) -> Vec<Client> {
    let mut clients = Vec::with_capacity(n);
    for _ in 0..n {
        clients.push(connect(url).await);
    }
    clients
}

/// Every session calls `call(session, i)` for its `i`th call, in a loop,
/// for `length`; the latencies and the errors.
pub(crate) async fn drive(
    clients: &[Client],
    length: Duration,
    call: impl Fn(usize, u64) -> CallToolRequestParams + Copy,
) -> (Vec<Duration>, u64) {
    let deadline = Instant::now() + length;
    let sessions = clients.iter().enumerate().map(|(n, client)| async move {
        let mut latencies = Vec::new();
        let mut errors = 0;
        let mut i = 0u64;
        while Instant::now() < deadline {
            i += 1;
            let t = Instant::now();
            let ok = client
                .call_tool(call(n, i))
                .await
                .is_ok_and(|r| r.is_error != Some(true));
            latencies.push(t.elapsed());
            errors += u64::from(!ok);
        }
        (latencies, errors)
    });
    let mut all = Vec::new();
    let mut errors = 0;
    for (l, e) in futures::future::join_all(sessions).await {
        all.extend(l);
        errors += e;
    }
    (all, errors)
}

/// A warm-up second outside the figures, then `seconds` of calls, with the
/// CPU process `pid` (and its children) spent over them.
pub(crate) async fn measure(
    clients: &[Client],
    seconds: u64,
    pid: u32,
    call: impl Fn(usize, u64) -> CallToolRequestParams + Copy,
) -> Rep {
    drive(clients, Duration::from_secs(1), call).await;
    let (own_before, children_before, stolen_before) = (cpu_time(pid), children_cpu(pid), stolen());
    let started = Instant::now();
    let (mut latencies, errors) = drive(clients, Duration::from_secs(seconds), call).await;
    let seconds = started.elapsed().as_secs_f64();
    let own = cpu_time(pid).saturating_sub(own_before);
    let with_children = own + children_cpu(pid).saturating_sub(children_before);
    let stolen = stolen().saturating_sub(stolen_before);
    latencies.sort();
    Rep {
        errors,
        latencies,
        seconds,
        own,
        with_children,
        stolen,
    }
}

/// What a table's row shows of several reps together.
pub(crate) struct Summary {
    pub(crate) calls_per_second: f64,
    /// In ms.
    pub(crate) p50: f64,
    /// In ms.
    pub(crate) p99: f64,
    /// The process's own CPU per call, in µs.
    pub(crate) own_per_call_us: f64,
    /// With its children's, in µs.
    pub(crate) with_children_per_call_us: f64,
    pub(crate) errors: u64,
}

impl Rep {
    /// The process's own CPU per call, in µs.
    pub(crate) fn own_per_call_us(&self) -> f64 {
        self.own.as_secs_f64() * 1e6 / self.latencies.len().max(1) as f64
    }
}

impl Summary {
    pub(crate) fn of(reps: &[Rep]) -> Self {
        let calls: usize = reps.iter().map(|r| r.latencies.len()).sum();
        let seconds: f64 = reps.iter().map(|r| r.seconds).sum();
        let per_call = |cpu: fn(&Rep) -> Duration| {
            reps.iter().map(|r| cpu(r).as_secs_f64()).sum::<f64>() * 1e6 / calls.max(1) as f64
        };
        let mut all: Vec<Duration> = reps.iter().flat_map(|r| r.latencies.iter().copied()).collect();
        all.sort();
        Self {
            calls_per_second: calls as f64 / seconds,
            p50: pct(&all, 0.5),
            p99: pct(&all, 0.99),
            own_per_call_us: per_call(|r| r.own),
            with_children_per_call_us: per_call(|r| r.with_children),
            errors: reps.iter().map(|r| r.errors).sum(),
        }
    }
}
