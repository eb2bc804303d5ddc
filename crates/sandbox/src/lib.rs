//! Code mode's JavaScript sandbox: runs one script in a QuickJS runtime of
//! its own, under limits, and knows nothing of the gateway. The script
//! reaches the world only through the [`Host`] it is given (`tools.call`,
//! `tools.search`); it has no filesystem, network, process, module loader,
//! clock, `eval` or `Function` constructor.
//!
//! [`run`] blocks: call it from a thread of its own (the JS stack limit is
//! measured against that thread's stack, see [`thread_stack_bytes`]).

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rquickjs::allocator::{Allocator, RustAllocator};
use rquickjs::context::intrinsic;
use rquickjs::function::Rest;
use rquickjs::promise::PromiseState;
use rquickjs::{CatchResultExt, CaughtError, Context, Ctx, Function, Promise, Runtime, Value};

/// What one script may use. Every field has a default in
/// `config/code_mode.rs`, settable per project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Heap of the script's runtime.
    pub memory_bytes: usize,
    /// Time spent running JavaScript (waiting for tools does not count).
    pub cpu: Duration,
    /// Wall time of the whole script, tool calls included.
    pub wall: Duration,
    /// JavaScript stack (deep recursion stops here).
    pub stack_bytes: usize,
    /// Most `tools.call` and `tools.search` calls in one script.
    pub max_calls: u32,
    /// Most calls in flight at once (`Promise.all` beyond it queues).
    pub parallel: u32,
    /// Most bytes of logs and return value together.
    pub max_output_bytes: usize,
}

/// A request from the script to its host.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    /// `tools.call(key, arguments)`.
    Tool {
        /// `server:tool`.
        key: String,
        /// The arguments, as the script gave them (JSON).
        arguments: serde_json::Value,
    },
    /// `tools.search(query, limit)`.
    Search {
        /// What the script looks for.
        query: String,
        /// How many results, when it said.
        limit: Option<u32>,
    },
}

/// Why the host could not answer a [`Call`]: the script's promise rejects
/// with an `Error` carrying this message and `code`.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// A stable code (`TOOL_NOT_FOUND`, ...).
    pub code: String,
    /// A message the script's author can act on.
    pub message: String,
}

/// An answer to call `id` (the n-th call of the script, from 1).
pub type Answer = (u64, Result<serde_json::Value, Refusal>);

/// The script's way out: starts calls and hands back their answers.
pub trait Host {
    /// Starts call `id`; it must not block. Its answer comes from [`Host::next`].
    fn start(&mut self, id: u64, call: Call);
    /// The next answer of a started call, waiting at most `timeout`:
    /// `Ok(None)` when none came in time, `Err(Gone)` when the host went away
    /// (the request was cancelled).
    fn next(&mut self, timeout: Duration) -> Result<Option<Answer>, Gone>;
}

/// The host stopped listening: the script's request was cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gone;

/// Why a script produced no result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The script does not parse.
    #[error("the script does not parse: {0}")]
    Syntax(String),
    /// The script threw, or its promise rejected, and did not catch it.
    #[error("the script threw: {0}")]
    Threw(String),
    /// The runtime's heap is full.
    #[error(
        "the script ran out of memory (limit {limit_bytes} bytes, memory_mb); build smaller values, or filter results before keeping them"
    )]
    Memory {
        /// The limit.
        limit_bytes: usize,
    },
    /// The JavaScript stack is full.
    #[error(
        "the script's stack overflowed (limit {limit_bytes} bytes, stack_kb); use a loop instead of deep recursion"
    )]
    Stack {
        /// The limit.
        limit_bytes: usize,
    },
    /// The script computed for longer than its CPU budget.
    #[error("the script ran JavaScript for more than {} ms (cpu_ms); is there an endless loop?", limit.as_millis())]
    Cpu {
        /// The limit.
        limit: Duration,
    },
    /// The script, tool calls included, took longer than its wall-time budget.
    #[error("the script took more than {} ms in all (timeout_ms); its tool calls were cancelled", limit.as_millis())]
    Timeout {
        /// The limit.
        limit: Duration,
    },
    /// The script made more calls than it may.
    #[error("the script made more than {limit} tool calls (max_calls); do more per call, or split the task")]
    TooManyCalls {
        /// The limit.
        limit: u32,
    },
    /// Logs and return value are larger than they may be.
    #[error(
        "the script's logs and return value exceed {limit_bytes} bytes (max_output_bytes); return only what you need"
    )]
    OutputTooLarge {
        /// The limit.
        limit_bytes: usize,
    },
    /// The script waits on a promise nothing will ever settle.
    #[error("the script never finishes: it awaits a promise that no tool call will settle")]
    NeverResolves,
    /// The return value is not JSON (a function, a symbol, a cycle, a BigInt).
    #[error("the script's return value is not JSON: {0}")]
    NotJson(String),
    /// The request was cancelled.
    #[error("the script was cancelled")]
    Cancelled,
    /// QuickJS failed in a way that is not the script's doing.
    #[error("the script engine failed: {0}")]
    Engine(String),
}

impl Error {
    /// A stable code for the wire and metrics.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Syntax(_) => "SCRIPT_SYNTAX_ERROR",
            Error::Threw(_) => "SCRIPT_ERROR",
            Error::Memory { .. } => "SCRIPT_MEMORY_LIMIT",
            Error::Stack { .. } => "SCRIPT_STACK_LIMIT",
            Error::Cpu { .. } => "SCRIPT_CPU_LIMIT",
            Error::Timeout { .. } => "SCRIPT_TIMEOUT",
            Error::TooManyCalls { .. } => "SCRIPT_CALL_LIMIT",
            Error::OutputTooLarge { .. } => "SCRIPT_OUTPUT_LIMIT",
            Error::NeverResolves => "SCRIPT_NEVER_RESOLVES",
            Error::NotJson(_) => "SCRIPT_RESULT_NOT_JSON",
            Error::Cancelled => "SCRIPT_CANCELLED",
            Error::Engine(_) => "SCRIPT_ENGINE_ERROR",
        }
    }
}

/// What a script did: its result or why it has none, its logs and calls.
#[derive(Debug)]
pub struct Outcome {
    /// The return value as JSON (`null` for none), or why there is none.
    pub result: Result<serde_json::Value, Error>,
    /// `console.log` lines, in order.
    pub logs: Vec<String>,
    /// Tool calls and searches the script started (a call it asked for
    /// and never reached its host, for it returned first, is not one).
    pub calls: u32,
    /// Time spent running JavaScript.
    pub cpu: Duration,
}

/// Native stack for a thread that runs scripts under `limits`: the JS stack
/// limit plus room for QuickJS's own C frames and ours.
pub fn thread_stack_bytes(limits: &Limits) -> usize {
    limits.stack_bytes + (2 << 20)
}

/// Sets up `tools` and `console`, then takes the host's functions out of
/// reach and removes every way to compile code at run time. Captured here,
/// so a script that replaces `JSON` or `Promise` breaks only itself.
const PRELUDE: &str = r#"(function (host, log, maxLength) {
  "use strict";
  const stringify = JSON.stringify, parse = JSON.parse, Promise_ = Promise, Error_ = Error;
  const TypeError_ = TypeError, RangeError_ = RangeError, String_ = String, Number_ = Number, Object_ = Object;
  const { trunc, min } = Math;
  const { freeze, create, defineProperty: define, getOwnPropertyDescriptor: own, getOwnPropertyNames: names, getPrototypeOf: protoOf } = Object;
  const apply = Reflect.apply, isArray = Array.isArray, spreadable = Symbol.isConcatSpreadable;
  const data = (value) => ({ value, writable: true, enumerable: true, configurable: true });
  const fixed = (value) => ({ value, writable: false, enumerable: false, configurable: false });

  // V8's stack API hands a script the functions on the stack, this bridge's among them.
  define(Error, "prepareStackTrace", fixed(undefined));

  // Some built-ins loop to an array's length in C, where the interrupt
  // handler never runs: over a huge sparse array they would outrun cpu_ms.
  // Their receivers are bounded here (the length is read from its
  // descriptor, so no script code runs between the check and the loop);
  // concat, flat and flatMap, which also loop over what they are given,
  // are written in JavaScript, where the handler runs.
  const lengthOf = (o) => {
    for (let p = o; p !== null && (typeof p === "object" || typeof p === "function"); p = protoOf(p)) {
      const d = own(p, "length");
      if (d) return "value" in d ? (typeof d.value === "number" ? d.value : d.value === undefined ? 0 : Infinity) : Infinity;
    }
    return 0;
  };
  const bounded = (o) => {
    const n = lengthOf(o);
    if (!(n <= maxLength)) throw new RangeError_(`an array-like of length ${String_(n)} is longer than code mode's built-ins take (at most ${maxLength}, from memory_mb)`);
  };
  const toLength = (v) => { const n = trunc(Number_(v)); return n > 0 ? min(n, 2 ** 53 - 1) : 0; };
  const append = (out, v) => { define(out, out.length, data(v)); };
  const flatInto = (out, source, depth) => {
    const n = toLength(source.length);
    for (let i = 0; i < n; i++) {
      if (!(i in source)) continue;
      const v = source[i];
      if (depth > 0 && isArray(v)) flatInto(out, v, depth - 1); else append(out, v);
    }
  };
  const object = (o) => { if (o === null || o === undefined) throw new TypeError_("Array.prototype method called on null or undefined"); return Object_(o); };
  const own_ = {
    concat(...items) {
      const out = [];
      for (let k = -1; k < items.length; k++) {
        const e = k < 0 ? object(this) : items[k];
        const s = e !== null && typeof e === "object" ? e[spreadable] : undefined;
        if (s !== undefined ? s : isArray(e)) {
          const n = toLength(e.length), base = out.length;
          for (let i = 0; i < n; i++) if (i in e) define(out, base + i, data(e[i]));
          out.length = base + n;
        } else append(out, e);
      }
      return out;
    },
    flat(depth) {
      const out = [], d = depth === undefined ? 1 : trunc(Number_(depth));
      flatInto(out, object(this), d > 0 ? d : 0);
      return out;
    },
    flatMap(f, thisArg) {
      const o = object(this), out = [];
      if (typeof f !== "function") throw new TypeError_("flatMap: not a function");
      const n = toLength(o.length);
      for (let i = 0; i < n; i++) {
        if (!(i in o)) continue;
        const v = apply(f, thisArg, [o[i], i, o]);
        if (isArray(v)) flatInto(out, v, 0); else append(out, v);
      }
      return out;
    },
  };
  const ArrayProto = Array.prototype;
  for (const name of names(ArrayProto)) {
    const d = own(ArrayProto, name);
    if (name === "constructor" || typeof d.value !== "function") continue;
    const original = d.value;
    const replaced = own_[name] ?? { [name](...args) { bounded(this); return apply(original, this, args); } }[name];
    define(ArrayProto, name, { value: replaced, writable: true, enumerable: false, configurable: true });
  }

  const pending = create(null);
  const start = (kind, payload) => new Promise_((resolve, reject) => {
    pending[host(kind, stringify(payload))] = { resolve, reject };
  });
  const tools = freeze({
    call: (toolKey, args) => {
      if (typeof toolKey !== "string") throw new TypeError_("tools.call(toolKey, args): toolKey must be a string like \"server:tool\"");
      return start("call", { key: toolKey, arguments: args === undefined ? {} : args });
    },
    search: (query, n) => {
      if (typeof query !== "string") throw new TypeError_("tools.search(query, n): query must be a string");
      return start("search", { query, limit: n });
    },
  });
  const show = (v) => typeof v === "string" ? v : (stringify(v) ?? String_(v));
  const console = freeze({
    log: (...args) => {
      let line = "";
      for (let i = 0; i < args.length; i++) line += (i > 0 ? " " : "") + show(args[i]);
      log(line);
    },
  });
  for (const name of ["tools", "console"]) {
    define(globalThis, name, { value: name === "tools" ? tools : console, enumerable: false, writable: false, configurable: false });
  }
  delete globalThis.eval;
  delete globalThis.Function;
  for (const f of [function () {}, async function () {}, function* () {}, async function* () {}]) {
    define(protoOf(f), "constructor", fixed(undefined));
  }
  return (id, ok, json) => {
    const p = pending[id];
    delete pending[id];
    if (ok) { p.resolve(parse(json)); return; }
    const refusal = parse(json);
    const error = new Error_(refusal.message);
    define(error, "code", data(refusal.code));
    p.reject(error);
  };
})"#;

/// Why the script must stop, whatever it catches: set by a limit and read
/// by the interrupt handler, which QuickJS cannot let a script ignore.
#[derive(Debug, Default)]
struct State {
    stop: RefCell<Option<Error>>,
    queue: RefCell<VecDeque<(u64, Call)>>,
    calls: Cell<u32>,
    started: Cell<u32>,
    /// Set by the heap when it refuses an allocation: QuickJS then throws
    /// `null` when it cannot even build the error, and this tells that
    /// apart from a script's own `throw null`.
    out_of_memory: Cell<bool>,
    logs: RefCell<Vec<String>>,
    output: Cell<usize>,
    /// CPU time spent running JavaScript before the current stretch, and
    /// the thread's CPU clock when it began.
    spent: Cell<Duration>,
    since: Cell<Option<Duration>>,
}

impl State {
    fn stop(&self, why: Error) {
        self.stop.borrow_mut().get_or_insert(why);
    }

    fn cpu(&self) -> Duration {
        self.spent.get()
            + self
                .since
                .get()
                .map_or(Duration::ZERO, |t| thread_cpu().saturating_sub(t))
    }

    fn resume_clock(&self) {
        self.since.set(Some(thread_cpu()));
    }

    fn pause_clock(&self) {
        self.spent.set(self.cpu());
        self.since.set(None);
    }
}

/// The CPU time this thread has used. `cpu_ms` is measured on it, not on
/// the wall clock, so a script on a busy machine is not charged for the
/// time other threads had the core.
fn thread_cpu() -> Duration {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID).map_or(Duration::ZERO, Duration::from)
}

/// Runs `script`, a module body (top-level `await` and `return` allowed),
/// under `limits`; its calls go to `host`. Setting `cancel` stops it
/// (within the interrupt handler's period, a few thousand instructions).
pub fn run(script: &str, limits: &Limits, host: &mut dyn Host, cancel: &Arc<AtomicBool>) -> Outcome {
    let state = Rc::new(State::default());
    let heap = Heap {
        limit: limits.memory_bytes,
        used: 0,
        state: Rc::clone(&state),
    };
    let result = match Runtime::new_with_alloc(heap) {
        Ok(rt) => execute(&rt, script, limits, host, cancel, &state),
        Err(e) => Err(Error::Engine(e.to_string())),
    };
    // A limit that fired explains the failure better than what it caused.
    let result = match state.stop.borrow_mut().take() {
        Some(why) => Err(why),
        None if result.is_err() && state.out_of_memory.get() => Err(Error::Memory {
            limit_bytes: limits.memory_bytes,
        }),
        None => result,
    };
    state.pause_clock();
    Outcome {
        result,
        logs: state.logs.take(),
        calls: state.started.get(),
        cpu: state.spent.get(),
    }
}

fn execute(
    rt: &Runtime,
    script: &str,
    limits: &Limits,
    host: &mut dyn Host,
    cancel: &Arc<AtomicBool>,
    state: &Rc<State>,
) -> Result<serde_json::Value, Error> {
    rt.set_max_stack_size(limits.stack_bytes);
    let watched = Rc::clone(state);
    let cancel = Arc::clone(cancel);
    let (cpu_limit, wall) = (limits.cpu, limits.wall);
    let deadline = Instant::now() + limits.wall;
    rt.set_interrupt_handler(Some(Box::new(move || {
        if cancel.load(Ordering::Relaxed) {
            watched.stop(Error::Cancelled);
        } else if watched.cpu() > cpu_limit {
            watched.stop(Error::Cpu { limit: cpu_limit });
        } else if Instant::now() > deadline {
            watched.stop(Error::Timeout { limit: wall });
        }
        watched.stop.borrow().is_some()
    })));
    // No Date or Performance (clocks), no Proxy, typed arrays or WeakRef
    // (not needed to call tools); Eval only so that the host can compile
    // the script: the prelude removes `eval` and `Function` from its reach.
    type Intrinsics = (
        intrinsic::Eval,
        intrinsic::Json,
        intrinsic::Promise,
        intrinsic::MapSet,
        intrinsic::RegExp,
        intrinsic::RegExpCompiler,
    );
    let context = Context::custom::<Intrinsics>(rt).map_err(|e| Error::Engine(e.to_string()))?;
    context.with(|ctx| {
        state.resume_clock();
        let settle = prelude(&ctx, limits, state)?;
        // One line: error positions in the script keep their line numbers.
        let wrapped = format!("(async function () {{ \"use strict\"; {script}\n}})");
        let main: Function = ctx.eval(wrapped).catch(&ctx).map_err(|e| thrown(e, limits, true))?;
        let promise: Promise = main.call(()).catch(&ctx).map_err(|e| thrown(e, limits, false))?;
        let mut in_flight = 0u32;
        loop {
            while ctx.execute_pending_job() {}
            if let Some(why) = state.stop.borrow_mut().take() {
                return Err(why);
            }
            match promise.state() {
                PromiseState::Resolved => return output(&ctx, &promise, limits, state),
                PromiseState::Rejected => {
                    let e = promise.result::<Value>().and_then(Result::err);
                    let e = e.map(|e| match e {
                        rquickjs::Error::Exception => CaughtError::from_error(&ctx, e),
                        e => CaughtError::Error(e),
                    });
                    return Err(e.map_or(Error::Threw("rejected".into()), |e| thrown(e, limits, false)));
                }
                PromiseState::Pending => {}
            }
            while in_flight < limits.parallel {
                let Some((id, call)) = state.queue.borrow_mut().pop_front() else {
                    break;
                };
                host.start(id, call);
                state.started.set(state.started.get() + 1);
                in_flight += 1;
            }
            if in_flight == 0 {
                return Err(Error::NeverResolves);
            }
            state.pause_clock();
            let left = deadline.saturating_duration_since(Instant::now());
            let answer = host.next(left);
            state.resume_clock();
            let (id, answer) = match answer {
                Err(Gone) => return Err(Error::Cancelled),
                Ok(None) => return Err(Error::Timeout { limit: limits.wall }),
                Ok(Some(answer)) => answer,
            };
            in_flight -= 1;
            let (ok, json) = match answer {
                Ok(value) => (true, value.to_string()),
                Err(refusal) => (
                    false,
                    serde_json::json!({ "code": refusal.code, "message": refusal.message }).to_string(),
                ),
            };
            settle
                .call::<_, ()>((id, ok, json))
                .catch(&ctx)
                .map_err(|e| thrown(e, limits, false))?;
        }
    })
}

/// Installs `tools` and `console`; returns the function that settles a call.
fn prelude<'js>(ctx: &Ctx<'js>, limits: &Limits, state: &Rc<State>) -> Result<Function<'js>, Error> {
    let engine = |e: rquickjs::Error| Error::Engine(e.to_string());
    let calls = Rc::clone(state);
    let max_calls = limits.max_calls;
    let host = Function::new(ctx.clone(), move |ctx: Ctx<'js>, kind: String, payload: String| {
        let n = calls.calls.get() + 1;
        if n > max_calls {
            calls.stop(Error::TooManyCalls { limit: max_calls });
            return Err(rquickjs::Exception::throw_range(
                &ctx,
                "too many tool calls (max_calls)",
            ));
        }
        let payload: serde_json::Value = serde_json::from_str(&payload)
            .map_err(|_| rquickjs::Exception::throw_type(&ctx, "arguments are not JSON"))?;
        let call = match kind.as_str() {
            "call" => Call::Tool {
                key: payload["key"].as_str().unwrap_or_default().to_string(),
                arguments: payload["arguments"].clone(),
            },
            _ => Call::Search {
                query: payload["query"].as_str().unwrap_or_default().to_string(),
                limit: payload["limit"].as_u64().map(|n| n.min(u64::from(u32::MAX)) as u32),
            },
        };
        calls.calls.set(n);
        calls.queue.borrow_mut().push_back((u64::from(n), call));
        Ok(u64::from(n))
    })
    .map_err(engine)?;
    let logs = Rc::clone(state);
    let max_output = limits.max_output_bytes;
    let log = Function::new(ctx.clone(), move |line: Rest<String>| {
        for line in line.0 {
            let total = logs.output.get() + line.len() + 1;
            logs.output.set(total);
            if total > max_output {
                logs.stop(Error::OutputTooLarge {
                    limit_bytes: max_output,
                });
                return;
            }
            logs.logs.borrow_mut().push(line);
        }
    })
    .map_err(engine)?;
    let setup: Function = ctx.eval(PRELUDE).map_err(engine)?;
    setup.call((host, log, max_length(limits))).map_err(engine)
}

/// The resolved value as JSON, within the output limit.
fn output<'js>(
    ctx: &Ctx<'js>,
    promise: &Promise<'js>,
    limits: &Limits,
    state: &State,
) -> Result<serde_json::Value, Error> {
    let value: Value = match promise.result::<Value>() {
        Some(Ok(v)) => v,
        _ => return Err(Error::Engine("a resolved promise without a value".into())),
    };
    if value.is_undefined() {
        return Ok(serde_json::Value::Null);
    }
    let json = ctx
        .json_stringify(value)
        .catch(ctx)
        .map_err(|e| Error::NotJson(describe(&e)))?;
    let Some(json) = json else {
        return Err(Error::NotJson("a function or a symbol".into()));
    };
    let json = json.to_string().map_err(|e| Error::Engine(e.to_string()))?;
    if state.output.get() + json.len() > limits.max_output_bytes {
        return Err(Error::OutputTooLarge {
            limit_bytes: limits.max_output_bytes,
        });
    }
    serde_json::from_str(&json).map_err(|e| Error::NotJson(e.to_string()))
}

/// The longest array-like the C loops of `Array.prototype` may walk: a
/// dense array that long (16 bytes an element) would fill the heap, so
/// only a sparse one can be longer, and walking its holes is what would
/// outrun `cpu_ms` (about 25 ns a hole: 100 ms at the default 64 MiB).
fn max_length(limits: &Limits) -> u32 {
    u32::try_from(limits.memory_bytes / 16).unwrap_or(u32::MAX)
}

/// The script's heap: QuickJS allocates through Rust's allocator, and is
/// refused past the limit here rather than by QuickJS's own limit, so that
/// an out-of-memory end is known as one (see [`State::out_of_memory`]).
struct Heap {
    limit: usize,
    used: usize,
    state: Rc<State>,
}

// The allocator QuickJS gets is unsafe by its trait: the one place outside
// the encoder crate where the workspace allows unsafe code.
#[allow(unsafe_code)]
impl Heap {
    fn admit(&mut self, size: usize) -> bool {
        let fits = self.used.saturating_add(size) <= self.limit;
        if !fits {
            self.state.out_of_memory.set(true);
        }
        fits
    }

    fn took(&mut self, ptr: *mut u8) -> *mut u8 {
        if !ptr.is_null() {
            // SAFETY: `ptr` was just returned by RustAllocator.
            self.used += unsafe { RustAllocator::usable_size(ptr) };
        }
        ptr
    }
}

// SAFETY: every pointer comes from, and goes back to, RustAllocator; this
// only counts their sizes and refuses allocations past the limit.
#[allow(unsafe_code)]
unsafe impl Allocator for Heap {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        if !self.admit(size) {
            return std::ptr::null_mut();
        }
        let ptr = RustAllocator.alloc(size);
        self.took(ptr)
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        let Some(total) = count.checked_mul(size) else {
            return std::ptr::null_mut();
        };
        if !self.admit(total) {
            return std::ptr::null_mut();
        }
        let ptr = RustAllocator.calloc(count, size);
        self.took(ptr)
    }

    unsafe fn dealloc(&mut self, ptr: *mut u8) {
        // SAFETY: the caller hands back a pointer of this allocator.
        unsafe {
            self.used = self.used.saturating_sub(RustAllocator::usable_size(ptr));
            RustAllocator.dealloc(ptr);
        }
    }

    unsafe fn realloc(&mut self, ptr: *mut u8, new_size: usize) -> *mut u8 {
        if ptr.is_null() {
            return self.alloc(new_size);
        }
        // SAFETY: the caller hands back a pointer of this allocator.
        unsafe {
            let old = RustAllocator::usable_size(ptr);
            if new_size > old && !self.admit(new_size - old) {
                return std::ptr::null_mut();
            }
            let moved = RustAllocator.realloc(ptr, new_size);
            if !moved.is_null() {
                self.used = self.used.saturating_sub(old) + RustAllocator::usable_size(moved);
            }
            moved
        }
    }

    unsafe fn usable_size(ptr: *mut u8) -> usize {
        // SAFETY: the caller hands in a pointer of this allocator.
        unsafe { RustAllocator::usable_size(ptr) }
    }
}

/// What a thrown value says, with the limit it hit when it is one of ours.
fn thrown(e: CaughtError<'_>, limits: &Limits, parsing: bool) -> Error {
    let message = describe(&e);
    if message.contains("out of memory") || matches!(e, CaughtError::Error(rquickjs::Error::Allocation)) {
        return Error::Memory {
            limit_bytes: limits.memory_bytes,
        };
    }
    if message.contains("stack overflow") || message.contains("call stack size exceeded") {
        return Error::Stack {
            limit_bytes: limits.stack_bytes,
        };
    }
    if parsing && message.starts_with("SyntaxError") {
        return Error::Syntax(message);
    }
    Error::Threw(message)
}

/// `Name: message` and the first frames of the stack, for a thrown value.
fn describe(e: &CaughtError<'_>) -> String {
    match e {
        CaughtError::Exception(e) => {
            let name: Option<String> = e.get("name").ok();
            let message = e.message().unwrap_or_default();
            let head = match name {
                Some(name) if !name.is_empty() => format!("{name}: {message}"),
                _ => message,
            };
            let stack = e.stack().unwrap_or_default();
            let frames: Vec<&str> = stack.lines().map(str::trim).filter(|l| !l.is_empty()).take(3).collect();
            match frames.is_empty() {
                true => head,
                false => format!("{head} ({})", frames.join(" ")),
            }
        }
        CaughtError::Value(v) => match v.as_string().and_then(|s| s.to_string().ok()) {
            Some(s) => s,
            None => format!("a thrown {}", v.type_name()),
        },
        CaughtError::Error(e) => e.to_string(),
    }
}

#[cfg(test)]
mod tests;
