//! Tests of `downstream`.

use super::*;

/// No built-in server: these registries' servers are all commands.
#[derive(Debug)]
struct NoBuiltins;

impl Builtins for NoBuiltins {
    fn serve(&self, _: &config::Builtin, _: tokio::io::DuplexStream) {}
}

/// A registry of `(name, connect_timeout_ms)` servers that nobody
/// supervises: the test publishes their states itself.
fn unsupervised(servers: &[(&str, u64)]) -> Registry {
    let text: String = servers
        .iter()
        .map(|(name, ms)| format!("[[servers]]\nname = \"{name}\"\ncommand = \"x\"\nconnect_timeout_ms = {ms}\n"))
        .collect();
    let config = config::Config::parse(&text, "test.toml", std::path::Path::new("/")).unwrap();
    let memory: Arc<dyn ToolMemory> = Arc::new(instances::Forgetful);
    let changed = Arc::new(ToolChanges::default());
    let builtins: Arc<dyn Builtins> = Arc::new(NoBuiltins);
    let members = config
        .servers
        .into_iter()
        .filter(|c| servers.iter().any(|(name, _)| c.name == *name))
        .map(|c| {
            let (ct, tracker) = (CancellationToken::new(), TaskTracker::new());
            Arc::new(Downstream::new(
                c,
                ct,
                memory.clone(),
                builtins.clone(),
                tracker,
                changed.clone(),
            ))
        })
        .collect();
    Registry::unsupervised(members, changed, memory, builtins)
}

fn names(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

#[tokio::test(start_paused = true)]
async fn a_wait_for_first_connections_is_bounded_and_skips_servers_past_theirs() {
    let registry = unsupervised(&[
        ("fast", 30_000),
        ("slow", 30_000),
        ("hung", 2_000),
        ("retrying", 30_000),
        ("hidden", 30_000),
    ]);
    registry.get("retrying").unwrap().publish(|s| s.restarts = 1);
    let up_after = |name: &str, after: Duration| {
        let server = registry.get(name).unwrap();
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            server.publish(|s| s.status = Status::Running);
        });
    };
    let within = |began: tokio::time::Instant, expected: Duration| {
        let waited = began.elapsed();
        assert!(
            waited >= expected && waited < expected + Duration::from_millis(10),
            "{waited:?}"
        );
    };

    // The cap ends the wait: one came up, two are still starting.
    up_after("fast", Duration::from_secs(1));
    let began = tokio::time::Instant::now();
    let startup = registry
        .first_connections(|name| name != "hidden", Duration::from_secs(5))
        .await;
    within(began, Duration::from_secs(5));
    assert_eq!(startup.up, names(&["fast"]));
    assert_eq!(startup.starting, names(&["slow", "hung"]));

    // A server's connect timeout ends the wait for it.
    let began = tokio::time::Instant::now();
    let startup = registry
        .first_connections(|name| name == "hung", Duration::from_secs(60))
        .await;
    within(began, Duration::from_secs(2));
    assert_eq!(startup.starting, names(&["hung"]));

    // A server that comes up ends the wait at once.
    up_after("slow", Duration::from_secs(3));
    let began = tokio::time::Instant::now();
    let startup = registry
        .first_connections(|name| name == "slow", Duration::from_secs(60))
        .await;
    within(began, Duration::from_secs(3));
    assert_eq!(
        startup,
        Startup {
            up: names(&["slow"]),
            starting: vec![]
        }
    );

    // Running, retrying after a failure: nothing to wait for.
    let began = tokio::time::Instant::now();
    let startup = registry
        .first_connections(|name| ["fast", "retrying"].contains(&name), Duration::from_secs(60))
        .await;
    within(began, Duration::ZERO);
    assert!(startup.is_empty(), "{startup:?}");
}

/// A call reads the servers' states, then the change count; a server seen
/// in a new state must have its change counted already, or the call trusts
/// a catalog that misses it (#43: a cold start's first call answered from
/// an empty catalog). Two threads race on it many times: with the count
/// taken after the state is published, this fails within a few thousand.
#[test]
fn a_state_is_never_seen_before_its_change_is_counted() {
    const CHANGES: u32 = 200_000;
    let registry = unsupervised(&[("demo", 30_000)]);
    let server = registry.get("demo").unwrap();
    let changed = registry.changed().clone();
    let base = changed.count();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            for _ in 0..CHANGES {
                server.publish_change(&changed, |s| s.restarts += 1);
            }
        });
        let mut seen = 0;
        while seen < CHANGES {
            seen = server.state().restarts;
            let counted = changed.count() - base;
            assert!(
                counted >= u64::from(seen),
                "state {seen} seen with {counted} changes counted"
            );
        }
    });
}
