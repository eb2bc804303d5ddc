//! The sandbox's tests: limits, the host's calls, and what a script cannot reach.

use std::collections::VecDeque;

use serde_json::json;

use super::*;

fn limits() -> Limits {
    Limits {
        memory_bytes: 16 << 20,
        cpu: Duration::from_millis(300),
        wall: Duration::from_secs(2),
        stack_bytes: 256 << 10,
        max_calls: 50,
        parallel: 4,
        max_output_bytes: 64 << 10,
    }
}

/// Answers `echo:*` calls with their arguments, `fail:*` with a refusal and
/// searches with the query; `hang:*` never answers. Records the largest
/// number of calls in flight at once.
#[derive(Default)]
struct Fake {
    ready: VecDeque<Answer>,
    in_flight: usize,
    most_in_flight: usize,
    started: Vec<Call>,
}

impl Host for Fake {
    fn start(&mut self, id: u64, call: Call) {
        self.started.push(call.clone());
        self.in_flight += 1;
        self.most_in_flight = self.most_in_flight.max(self.in_flight);
        let answer = match call {
            Call::Tool { key, .. } if key.starts_with("hang:") => return,
            Call::Tool { key, .. } if key.starts_with("fail:") => Err(Refusal {
                code: "TOOL_NOT_FOUND".into(),
                message: format!("unknown toolKey '{key}'"),
            }),
            Call::Tool { arguments, .. } => Ok(json!({ "structuredContent": arguments })),
            Call::Search { query, limit } => Ok(json!([{ "toolKey": format!("s:{query}"), "n": limit }])),
        };
        self.ready.push_back((id, answer));
    }

    fn next(&mut self, timeout: Duration) -> Result<Option<Answer>, Gone> {
        match self.ready.pop_front() {
            Some(a) => {
                self.in_flight -= 1;
                Ok(Some(a))
            }
            None => {
                std::thread::sleep(timeout.min(Duration::from_millis(50)));
                Ok(None)
            }
        }
    }
}

fn go(script: &str) -> (Outcome, Fake) {
    go_with(script, &limits())
}

fn go_with(script: &str, limits: &Limits) -> (Outcome, Fake) {
    let mut host = Fake::default();
    let outcome = run(script, limits, &mut host, &Arc::new(AtomicBool::new(false)));
    (outcome, host)
}

#[test]
fn returns_json_logs_and_counts_calls() {
    let (out, host) = go(r#"
        const r = await tools.call("echo:a", { n: 2 });
        const found = await tools.search("read files", 3);
        console.log("got", r.structuredContent.n, { x: 1 });
        return { n: r.structuredContent.n * 21, found: found[0].toolKey };
    "#);
    assert_eq!(out.result, Ok(json!({ "n": 42, "found": "s:read files" })));
    assert_eq!(out.logs, vec![r#"got 2 {"x":1}"#]);
    assert_eq!(out.calls, 2);
    assert_eq!(
        host.started[1],
        Call::Search {
            query: "read files".into(),
            limit: Some(3)
        }
    );
}

#[test]
fn no_return_is_null() {
    assert_eq!(go("1 + 1;").0.result, Ok(serde_json::Value::Null));
}

#[test]
fn promise_all_runs_calls_in_parallel_up_to_the_limit() {
    let (out, host) = go(r#"
        const keys = Array.from({ length: 10 }, (_, i) => i);
        const all = await Promise.all(keys.map((i) => tools.call("echo:x", { i })));
        return all.map((r) => r.structuredContent.i);
    "#);
    assert_eq!(out.result, Ok(json!([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])));
    assert_eq!(host.most_in_flight, 4, "parallel = 4");
}

#[test]
fn a_refused_call_rejects_with_its_code() {
    let (out, _) = go(r#"
        try { await tools.call("fail:x", {}); } catch (e) { return [e.code, e.message]; }
    "#);
    assert_eq!(out.result, Ok(json!(["TOOL_NOT_FOUND", "unknown toolKey 'fail:x'"])));
    let (out, _) = go(r#"await tools.call("fail:x", {});"#);
    let Err(Error::Threw(message)) = out.result else {
        panic!("{:?}", out.result)
    };
    assert!(message.contains("unknown toolKey 'fail:x'"), "{message}");
}

#[test]
fn syntax_errors_and_throws_read_as_such() {
    assert!(matches!(go("return (;").0.result, Err(Error::Syntax(_))));
    let Err(Error::Threw(m)) = go("throw new TypeError('nope')").0.result else {
        panic!()
    };
    assert!(m.starts_with("TypeError: nope"), "{m}");
}

#[test]
fn an_endless_loop_stops_at_the_cpu_limit() {
    let started = Instant::now();
    let (out, _) = go("while (true) {}");
    assert_eq!(
        out.result,
        Err(Error::Cpu {
            limit: Duration::from_millis(300)
        })
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    // Catching does not help: the interrupt cannot be caught.
    let (out, _) = go("for (;;) { try { while (true) {} } catch (e) {} }");
    assert!(matches!(out.result, Err(Error::Cpu { .. })), "{:?}", out.result);
}

#[test]
fn a_memory_bomb_stops_at_the_memory_limit() {
    let (out, _) = go("const a = []; while (true) a.push(new Array(10000).fill(1));");
    assert!(matches!(out.result, Err(Error::Memory { .. })), "{:?}", out.result);
    let (out, _) = go("return 'x'.repeat(100 * 1024 * 1024).length;");
    assert!(matches!(out.result, Err(Error::Memory { .. })), "{:?}", out.result);
}

#[test]
fn deep_recursion_stops_at_the_stack_limit() {
    let (out, _) = go("const f = (n) => f(n + 1) + 1; return f(0);");
    assert!(matches!(out.result, Err(Error::Stack { .. })), "{:?}", out.result);
}

#[test]
fn calls_past_the_cap_end_the_script_even_when_caught() {
    let (out, host) = go(r#"
        for (let i = 0; i < 10000; i++) { try { await tools.call("echo:x", {}); } catch (e) {} }
        return "done";
    "#);
    assert_eq!(out.result, Err(Error::TooManyCalls { limit: 50 }));
    assert_eq!(host.started.len(), 50);
}

#[test]
fn a_promise_nothing_settles_is_refused_at_once() {
    let started = Instant::now();
    assert_eq!(go("await new Promise(() => {});").0.result, Err(Error::NeverResolves));
    assert!(started.elapsed() < Duration::from_millis(500));
}

#[test]
fn a_hung_call_stops_at_the_wall_limit() {
    let mut l = limits();
    l.wall = Duration::from_millis(200);
    let (out, _) = go_with(r#"await tools.call("hang:x", {});"#, &l);
    assert_eq!(out.result, Err(Error::Timeout { limit: l.wall }));
}

#[test]
fn output_past_the_cap_is_refused() {
    let (out, _) = go("for (let i = 0; i < 10000; i++) console.log('a line of logs');");
    assert!(
        matches!(out.result, Err(Error::OutputTooLarge { .. })),
        "{:?}",
        out.result
    );
    let (out, _) = go("return 'y'.repeat(100000);");
    assert!(
        matches!(out.result, Err(Error::OutputTooLarge { .. })),
        "{:?}",
        out.result
    );
}

#[test]
fn no_eval_function_constructor_import_clock_or_host() {
    for script in [
        "return eval('1')",
        "return Function('return 1')()",
        "return tools.call.constructor('return globalThis')()",
        "return (async () => {}).constructor('return 1')()",
        "return new Date()",
        "return performance.now()",
        "return process.env",
        "return require('fs')",
        "return await import('fs')",
    ] {
        let (out, _) = go(script);
        assert!(matches!(out.result, Err(Error::Threw(_))), "{script}: {:?}", out.result);
    }
    let (out, _) = go("import fs from 'fs';");
    assert!(matches!(out.result, Err(Error::Syntax(_))), "{:?}", out.result);
}

#[test]
fn host_objects_cannot_be_changed_and_tampering_breaks_only_the_script() {
    let (out, _) = go("tools.call = () => 1;");
    assert!(matches!(out.result, Err(Error::Threw(m)) if m.contains("TypeError")));
    let (out, _) = go("Object.defineProperty(tools, 'x', { value: 1 });");
    assert!(matches!(out.result, Err(Error::Threw(_))));
    // Replacing JSON and Promise after the prelude changes nothing it uses.
    let (out, host) = go(r#"
        JSON.stringify = () => '{"key":"evil:x"}';
        JSON.parse = () => ({ hijacked: true });
        const r = await tools.call("echo:a", { ok: 1 });
        return r.structuredContent;
    "#);
    assert_eq!(out.result, Ok(json!({ "ok": 1 })));
    assert_eq!(
        host.started[0],
        Call::Tool {
            key: "echo:a".into(),
            arguments: json!({ "ok": 1 })
        }
    );
}

#[test]
fn cancelling_stops_a_running_script() {
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&cancel);
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        flag.store(true, Ordering::Relaxed);
    });
    let mut l = limits();
    l.cpu = Duration::from_secs(10);
    let out = run("while (true) {}", &l, &mut Fake::default(), &cancel);
    assert_eq!(out.result, Err(Error::Cancelled));
}

#[test]
fn a_trivial_script_starts_and_ends_quickly() {
    go("return 1"); // warm up the allocator and page cache
    let started = Instant::now();
    for _ in 0..20 {
        assert_eq!(go("return 1").0.result, Ok(json!(1)));
    }
    let each = started.elapsed() / 20;
    // The goal is 5 ms in a release build (benches/script.rs); debug builds are slower.
    assert!(each < Duration::from_millis(50), "{each:?}");
}

#[test]
fn the_cpu_clock_counts_work_not_waiting() {
    let before = thread_cpu();
    std::thread::sleep(Duration::from_millis(100));
    let slept = thread_cpu() - before;
    assert!(slept < Duration::from_millis(20), "{slept:?} of CPU while asleep");
}

/// Built-ins that loop to an array's length in C never reach the interrupt
/// handler: over a huge sparse array each ran for seconds past `cpu_ms`.
#[test]
fn built_ins_over_huge_sparse_arrays_stop_within_the_cpu_limit() {
    let methods = [
        "a.copyWithin(0, 1)",
        "a.reverse()",
        "a.splice(1, 1)",
        "a.sort()",
        "a.join()",
        "a.lastIndexOf(1)",
        "a.includes(1)",
        "a.fill(1)",
        "a.slice(1)",
        "a.toReversed()",
        "a.unshift(1)",
        "Array.prototype.join.call({ length: 2 ** 28 })",
        "Array.prototype.reverse.call({ get length() { return 2 ** 28; } })",
        "a.flat()",
        "[a].flat()",
        "[].concat(a)",
        "a.concat([])",
        "[1].flatMap(() => a)",
    ];
    for method in methods {
        let started = Instant::now();
        let script = format!("const a = []; a.length = 2 ** 28; {method}; return 'done';");
        let (out, _) = go(&script);
        let elapsed = started.elapsed();
        let stopped = match &out.result {
            Err(Error::Cpu { .. }) => true,
            Err(Error::Threw(m)) => m.starts_with("RangeError"),
            _ => false,
        };
        assert!(stopped, "{method}: {:?}", out.result);
        assert!(elapsed < Duration::from_secs(2), "{method} ran {elapsed:?}");
    }
}

#[test]
fn bounded_built_ins_still_work_on_ordinary_arrays() {
    let (out, _) = go(r#"
        const a = [3, 1, 2];
        const sparse = [1, , 3];
        return [
            a.slice().sort(), a.join("-"), a.concat([4, [5]], 6), [1, [2, [3, [4]]]].flat(2),
            a.flatMap((x) => [x, x * 10]), sparse.concat([]).length, 1 in sparse.concat([]),
            Array.prototype.concat.call(1, 2).length, [[1], [2]].flat(Infinity), a.includes(2),
            Array.prototype.join.call({ length: 2, 0: "x", 1: "y" }),
        ];
    "#);
    assert_eq!(
        out.result,
        Ok(json!([
            [1, 2, 3],
            "3-1-2",
            [3, 1, 2, 4, [5], 6],
            [1, 2, 3, [4]],
            [3, 30, 1, 10, 2, 20],
            3,
            false,
            2,
            [1, 2],
            true,
            "x,y"
        ]))
    );
}

/// Through V8's stack API (`Error.prepareStackTrace`, `CallSite.getFunction`)
/// a script reached the bridge's own functions on the stack.
#[test]
fn no_function_of_the_bridge_is_within_reach() {
    let (out, host) = go(r#"
        const got = [];
        try {
            Error.prepareStackTrace = (e, frames) => {
                for (const f of frames) got.push(f.getFunction && f.getFunction());
                return "x";
            };
        } catch (e) {}
        try { tools.call("echo:x", { toJSON() { throw new Error("inside"); } }); } catch (e) { String(e.stack); }
        let replaced = 0;
        Map.prototype.set = function () { replaced++; };
        Map.prototype.get = function () { replaced++; };
        globalThis.Promise = class { constructor() { replaced += 10; } };
        Array.prototype.map = function () { replaced += 100; return []; };
        console.log("still", "logs");
        const r = await tools.call("echo:a", { n: 1 });
        return [got.filter((f) => typeof f === "function").length, replaced, r.structuredContent.n];
    "#);
    assert_eq!(out.result, Ok(json!([0, 0, 1])));
    assert_eq!(out.logs, vec!["still logs"]);
    assert_eq!(host.started.len(), 1);
}

/// When the heap is too full for QuickJS to build its error, it throws
/// `null`: that read "the script threw: a thrown null".
#[test]
fn every_out_of_memory_end_reads_as_the_memory_limit() {
    for script in [
        "const a = []; while (true) a.push({ n: a.length });",
        "const a = []; while (true) a.push([a.length]);",
        "const m = new Map(); for (let i = 0; ; i++) m.set(i, { i });",
        "let s = 'x'; const keep = []; while (true) { s = s + s.length; keep.push(s); }",
    ] {
        let mut l = limits();
        l.memory_bytes = 4 << 20;
        l.cpu = Duration::from_secs(20);
        l.wall = Duration::from_secs(20);
        let (out, _) = go_with(script, &l);
        assert!(
            matches!(out.result, Err(Error::Memory { .. })),
            "{script}: {:?}",
            out.result
        );
    }
    // A script's own `throw null` is not mistaken for one.
    let (out, _) = go("throw null;");
    assert_eq!(out.result, Err(Error::Threw("a thrown null".into())));
}

/// `calls` counts the calls that reached the host: one asked for while the
/// result was being serialised, or never awaited before the script
/// returned, has no audit row and is not counted.
#[test]
fn calls_the_host_never_started_are_not_counted() {
    let (out, host) = go(r#"
        tools.call("echo:late", {});
        return { toJSON() { tools.call("echo:later", {}); return 1; } };
    "#);
    assert_eq!(out.result, Ok(json!(1)));
    assert_eq!((out.calls, host.started.len()), (0, 0));
}

#[test]
fn a_busy_loop_stops_at_the_wall_limit_too() {
    let mut l = limits();
    l.cpu = Duration::from_secs(30);
    l.wall = Duration::from_millis(200);
    let started = Instant::now();
    let (out, _) = go_with("while (true) {}", &l);
    assert_eq!(out.result, Err(Error::Timeout { limit: l.wall }));
    assert!(started.elapsed() < Duration::from_secs(2));
}
