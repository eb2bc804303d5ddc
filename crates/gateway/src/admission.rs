//! Code mode's gateway-wide caps: how many scripts run at once, for
//! everyone and for one caller, and how much heap they hold together. Each
//! script runs on a thread of its own with its whole `memory_mb`, so
//! without these a few callers could take every thread and gigabytes.
//!
//! A script holds its [`Ticket`] from before its thread starts until that
//! thread ends, even when its answer has already gone (a limit enforced
//! from outside the engine, `script.rs`): what it still uses stays counted.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use config::code_mode::ScriptCaps;

/// The scripts running now.
#[derive(Debug, Default, Clone)]
pub(super) struct Scripts {
    in_flight: Arc<Mutex<InFlight>>,
}

#[derive(Debug, Default, PartialEq)]
struct InFlight {
    scripts: u32,
    memory: usize,
    callers: HashMap<String, u32>,
}

/// Why a script may not start now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(super) enum Busy {
    /// The gateway runs as many scripts as it may.
    #[error("{0} scripts are running, the gateway's most ([security.code_mode] max_scripts); retry in a few seconds")]
    Gateway(u32),
    /// This caller runs as many scripts as it may.
    #[error(
        "this caller already runs {0} scripts, its most ([security.code_mode] max_scripts_per_caller); await one before starting another"
    )]
    Caller(u32),
    /// The running scripts hold as much heap as they may.
    #[error(
        "the running scripts hold {0} MiB of heap, the gateway's most ([security.code_mode] max_memory_mb); retry in a few seconds"
    )]
    Memory(usize),
}

impl Busy {
    /// The code `tool_execute` answers with.
    pub(super) const CODE: &'static str = "SCRIPT_BUSY";
}

/// A running script's place under the caps, given back when dropped.
#[derive(Debug)]
pub(super) struct Ticket {
    in_flight: Arc<Mutex<InFlight>>,
    caller: String,
    memory: usize,
}

impl Scripts {
    /// A place for a script of `caller` with a heap of `memory` bytes, or
    /// why there is none.
    pub(super) fn admit(&self, caps: &ScriptCaps, caller: String, memory: usize) -> Result<Ticket, Busy> {
        let mut in_flight = self.in_flight.lock().unwrap_or_else(PoisonError::into_inner);
        in_flight.admit(caps, &caller, memory)?;
        Ok(Ticket {
            in_flight: Arc::clone(&self.in_flight),
            caller,
            memory,
        })
    }

    /// Scripts running now, for `/readyz` and `mcp-gateway servers`.
    pub(super) fn running(&self) -> u32 {
        self.in_flight.lock().unwrap_or_else(PoisonError::into_inner).scripts
    }
}

impl InFlight {
    fn admit(&mut self, caps: &ScriptCaps, caller: &str, memory: usize) -> Result<(), Busy> {
        let theirs = self.callers.get(caller).copied().unwrap_or(0);
        if theirs >= caps.per_caller {
            return Err(Busy::Caller(theirs));
        }
        if self.scripts >= caps.scripts {
            return Err(Busy::Gateway(self.scripts));
        }
        if self.memory + memory > caps.memory_bytes {
            return Err(Busy::Memory(self.memory >> 20));
        }
        self.scripts += 1;
        self.memory += memory;
        self.callers.insert(caller.to_string(), theirs + 1);
        Ok(())
    }

    fn release(&mut self, caller: &str, memory: usize) {
        self.scripts = self.scripts.saturating_sub(1);
        self.memory = self.memory.saturating_sub(memory);
        if let Some(n) = self.callers.get_mut(caller) {
            *n -= 1;
            if *n == 0 {
                self.callers.remove(caller);
            }
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut in_flight = self.in_flight.lock().unwrap_or_else(PoisonError::into_inner);
        in_flight.release(&self.caller, self.memory);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: usize = 1 << 20;

    fn caps(scripts: u32, per_caller: u32, memory_mb: usize) -> ScriptCaps {
        ScriptCaps {
            scripts,
            per_caller,
            memory_bytes: memory_mb * MB,
        }
    }

    #[test]
    fn each_cap_refuses_past_it_and_a_ticket_gives_its_place_back() {
        let scripts = Scripts::default();
        let c = caps(3, 2, 1024);
        let a1 = scripts.admit(&c, "a".into(), 64 * MB).unwrap();
        let a2 = scripts.admit(&c, "a".into(), 64 * MB).unwrap();
        assert_eq!(scripts.admit(&c, "a".into(), 64 * MB).unwrap_err(), Busy::Caller(2));
        let b1 = scripts.admit(&c, "b".into(), 64 * MB).unwrap();
        assert_eq!(scripts.admit(&c, "a".into(), 64 * MB).unwrap_err(), Busy::Caller(2));
        assert_eq!(scripts.admit(&c, "c".into(), 64 * MB).unwrap_err(), Busy::Gateway(3));
        drop(a1);
        assert_eq!(scripts.running(), 2);
        let a3 = scripts.admit(&c, "a".into(), 64 * MB).unwrap();
        drop((a2, a3, b1));
        assert_eq!(*scripts.in_flight.lock().unwrap(), InFlight::default());
    }

    #[test]
    fn the_heaps_together_stay_under_the_memory_cap() {
        let scripts = Scripts::default();
        let c = caps(10, 10, 100);
        let big = scripts.admit(&c, "a".into(), 64 * MB).unwrap();
        assert_eq!(scripts.admit(&c, "b".into(), 64 * MB).unwrap_err(), Busy::Memory(64));
        let small = scripts.admit(&c, "b".into(), 36 * MB).unwrap();
        drop(big);
        scripts.admit(&c, "b".into(), 64 * MB).unwrap();
        drop(small);
    }
}
