//! `[security.code_mode]` and `[security.projects.NAME.code_mode]`: whether
//! `tool_execute` runs scripts, and the limits each script runs under.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

/// Heap of a script's runtime, in MiB.
pub(crate) const DEFAULT_MEMORY_MB: u32 = 64;
/// JavaScript run time of a script (time waiting for tools not counted), in ms.
pub(crate) const DEFAULT_CPU_MS: u64 = 2_000;
/// Wall time of a script, its tool calls included, in ms.
pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// JavaScript stack of a script, in KiB (a few thousand frames).
pub(crate) const DEFAULT_STACK_KB: u32 = 512;
/// Tool calls and searches in one script.
pub(crate) const DEFAULT_MAX_CALLS: u32 = 200;
/// Calls of one script in flight at once.
pub(crate) const DEFAULT_PARALLEL: u32 = 8;
/// Bytes of a script's logs and return value together.
pub(crate) const DEFAULT_MAX_OUTPUT_BYTES: u64 = 256 * 1024;

/// Scripts running at once, gateway-wide (each holds a thread).
pub(crate) const DEFAULT_MAX_SCRIPTS: u32 = 16;
/// Scripts running at once for one caller (a token, an OAuth subject, or
/// an anonymous session).
pub(crate) const DEFAULT_MAX_SCRIPTS_PER_CALLER: u32 = 4;
/// The heaps of all running scripts together, in MiB.
pub(crate) const DEFAULT_MAX_MEMORY_MB: u32 = 512;

/// Upper bounds a setting may not pass: a script is a request, not a job.
const MAX_MEMORY_MB: u32 = 1024;
const MAX_STACK_KB: u32 = 8 * 1024;
const MAX_PARALLEL: u32 = 64;
const MAX_CALLS: u32 = 10_000;

/// `[security.code_mode]` as written; every field optional.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCodeMode {
    /// Whether `tool_execute` takes `script` (default true).
    pub enabled: Option<bool>,
    /// Heap of a script's runtime, MiB (default 64).
    pub memory_mb: Option<u32>,
    /// JavaScript run time, ms (default 2000).
    pub cpu_ms: Option<u64>,
    /// Wall time with tool calls, ms (default 120000).
    pub timeout_ms: Option<u64>,
    /// JavaScript stack, KiB (default 512).
    pub stack_kb: Option<u32>,
    /// Tool calls and searches per script (default 200).
    pub max_calls: Option<u32>,
    /// Calls in flight at once (default 8).
    pub parallel: Option<u32>,
    /// Bytes of logs and return value (default 262144).
    pub max_output_bytes: Option<u64>,
    /// Scripts running at once, gateway-wide (default 16; section only).
    pub max_scripts: Option<u32>,
    /// Scripts running at once per caller (default 4; section only).
    pub max_scripts_per_caller: Option<u32>,
    /// The running scripts' heaps together, MiB (default 512; section only).
    pub max_memory_mb: Option<u32>,
}

/// How many scripts may run at once, gateway-wide: a script past a cap is
/// refused (`SCRIPT_BUSY`), not queued, so a caller learns at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScriptCaps {
    /// Scripts in flight.
    pub scripts: u32,
    /// Scripts in flight for one caller.
    pub per_caller: u32,
    /// Their `memory_mb` together, bytes: each script holds its whole heap
    /// limit while it runs.
    pub memory_bytes: usize,
}

impl ScriptCaps {
    fn from_raw(raw: &RawCodeMode) -> Self {
        Self {
            scripts: raw.max_scripts.unwrap_or(DEFAULT_MAX_SCRIPTS),
            per_caller: raw.max_scripts_per_caller.unwrap_or(DEFAULT_MAX_SCRIPTS_PER_CALLER),
            memory_bytes: raw.max_memory_mb.unwrap_or(DEFAULT_MAX_MEMORY_MB) as usize * (1 << 20),
        }
    }
}

impl Default for ScriptCaps {
    fn default() -> Self {
        Self::from_raw(&RawCodeMode::default())
    }
}

/// The limits one script runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeLimits {
    /// Heap, bytes.
    pub memory_bytes: usize,
    /// JavaScript run time.
    pub cpu: Duration,
    /// Wall time.
    pub timeout: Duration,
    /// Stack, bytes.
    pub stack_bytes: usize,
    /// Calls per script.
    pub max_calls: u32,
    /// Calls in flight.
    pub parallel: u32,
    /// Bytes of output.
    pub max_output_bytes: usize,
}

impl Default for CodeLimits {
    fn default() -> Self {
        CodeLimits::default_with(&RawCodeMode::default())
    }
}

impl CodeLimits {
    /// `raw`'s settings over the defaults.
    fn default_with(raw: &RawCodeMode) -> Self {
        Self {
            memory_bytes: raw.memory_mb.unwrap_or(DEFAULT_MEMORY_MB) as usize * (1 << 20),
            cpu: Duration::from_millis(raw.cpu_ms.unwrap_or(DEFAULT_CPU_MS)),
            timeout: Duration::from_millis(raw.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS)),
            stack_bytes: raw.stack_kb.unwrap_or(DEFAULT_STACK_KB) as usize * 1024,
            max_calls: raw.max_calls.unwrap_or(DEFAULT_MAX_CALLS),
            parallel: raw.parallel.unwrap_or(DEFAULT_PARALLEL),
            max_output_bytes: raw.max_output_bytes.unwrap_or(DEFAULT_MAX_OUTPUT_BYTES) as usize,
        }
    }

    /// `raw`'s settings over these.
    fn overridden(self, raw: &RawCodeMode) -> Self {
        Self {
            memory_bytes: raw.memory_mb.map_or(self.memory_bytes, |m| m as usize * (1 << 20)),
            cpu: raw.cpu_ms.map_or(self.cpu, Duration::from_millis),
            timeout: raw.timeout_ms.map_or(self.timeout, Duration::from_millis),
            stack_bytes: raw.stack_kb.map_or(self.stack_bytes, |k| k as usize * 1024),
            max_calls: raw.max_calls.unwrap_or(self.max_calls),
            parallel: raw.parallel.unwrap_or(self.parallel),
            max_output_bytes: raw.max_output_bytes.map_or(self.max_output_bytes, |b| b as usize),
        }
    }
}

/// Validated code mode settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeMode {
    /// `[security.code_mode] enabled`.
    pub enabled: bool,
    /// The section's limits over the defaults.
    pub limits: CodeLimits,
    /// Gateway-wide caps on scripts in flight.
    pub caps: ScriptCaps,
    /// Per project: enabled, and limits over the section's.
    pub projects: BTreeMap<String, (bool, CodeLimits)>,
}

impl Default for CodeMode {
    fn default() -> Self {
        Self {
            enabled: true,
            limits: CodeLimits::default(),
            caps: ScriptCaps::default(),
            projects: BTreeMap::new(),
        }
    }
}

impl CodeMode {
    /// The section and each project's overrides, checked.
    pub fn new<'a>(
        section: Option<&RawCodeMode>,
        projects: impl Iterator<Item = (&'a String, &'a RawCodeMode)>,
    ) -> Result<Self, (String, String)> {
        let section = section.cloned().unwrap_or_default();
        check("security.code_mode", &section)?;
        let enabled = section.enabled.unwrap_or(true);
        let limits = CodeLimits::default_with(&section);
        let projects = projects
            .map(|(name, raw)| {
                let section = format!("security.projects.{name}.code_mode");
                check(&section, raw)?;
                gateway_wide_only(&section, raw)?;
                Ok((name.clone(), (raw.enabled.unwrap_or(enabled), limits.overridden(raw))))
            })
            .collect::<Result<BTreeMap<_, _>, (String, String)>>()?;
        let caps = ScriptCaps::from_raw(&section);
        let largest = projects
            .values()
            .map(|(_, l): &(bool, CodeLimits)| l.memory_bytes)
            .fold(limits.memory_bytes, usize::max);
        if caps.memory_bytes < largest {
            return Err((
                "security.code_mode.max_memory_mb".into(),
                format!(
                    "max_memory_mb = {} is below a memory_mb of {}: such a script could never start",
                    caps.memory_bytes >> 20,
                    largest >> 20
                ),
            ));
        }
        Ok(Self {
            enabled,
            limits,
            caps,
            projects,
        })
    }

    /// The limits `project`'s scripts run under, or `None` when code mode is off for it.
    pub fn for_project(&self, project: &str) -> Option<CodeLimits> {
        let (enabled, limits) = self
            .projects
            .get(project)
            .copied()
            .unwrap_or((self.enabled, self.limits));
        enabled.then_some(limits)
    }
}

/// The caps shared by every script are set once, for the gateway.
fn gateway_wide_only(section: &str, raw: &RawCodeMode) -> Result<(), (String, String)> {
    let set = [
        ("max_scripts", raw.max_scripts.is_some()),
        ("max_scripts_per_caller", raw.max_scripts_per_caller.is_some()),
        ("max_memory_mb", raw.max_memory_mb.is_some()),
    ];
    match set.into_iter().find(|(_, set)| *set) {
        Some((key, _)) => Err((
            format!("{section}.{key}"),
            format!("{key} is gateway-wide: set it in [security.code_mode], not per project"),
        )),
        None => Ok(()),
    }
}

/// Every limit set is at least 1 and at most its bound.
fn check(section: &str, raw: &RawCodeMode) -> Result<(), (String, String)> {
    let bounds: [(&str, Option<u64>, u64); 10] = [
        ("memory_mb", raw.memory_mb.map(u64::from), u64::from(MAX_MEMORY_MB)),
        ("cpu_ms", raw.cpu_ms, 10 * 60_000),
        ("timeout_ms", raw.timeout_ms, 60 * 60_000),
        ("stack_kb", raw.stack_kb.map(u64::from), u64::from(MAX_STACK_KB)),
        ("max_calls", raw.max_calls.map(u64::from), u64::from(MAX_CALLS)),
        ("parallel", raw.parallel.map(u64::from), u64::from(MAX_PARALLEL)),
        ("max_output_bytes", raw.max_output_bytes, 64 << 20),
        ("max_scripts", raw.max_scripts.map(u64::from), 4096),
        (
            "max_scripts_per_caller",
            raw.max_scripts_per_caller.map(u64::from),
            4096,
        ),
        ("max_memory_mb", raw.max_memory_mb.map(u64::from), 1 << 20),
    ];
    for (key, value, max) in bounds {
        if let Some(v) = value
            && !(1..=max).contains(&v)
        {
            return Err((
                format!("{section}.{key}"),
                format!("{key} = {v} is out of range; use 1 to {max}"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_section_and_projects() {
        let off = RawCodeMode {
            enabled: Some(false),
            ..Default::default()
        };
        let slow = RawCodeMode {
            cpu_ms: Some(5000),
            ..Default::default()
        };
        let section = RawCodeMode {
            max_calls: Some(20),
            ..Default::default()
        };
        let projects = [("off".to_string(), off), ("slow".to_string(), slow)];
        let c = CodeMode::new(Some(&section), projects.iter().map(|(n, r)| (n, r))).unwrap();
        let other = c.for_project("other").unwrap();
        assert_eq!(other.max_calls, 20);
        assert_eq!(other.cpu, Duration::from_millis(DEFAULT_CPU_MS));
        assert_eq!(c.for_project("off"), None);
        let slow = c.for_project("slow").unwrap();
        assert_eq!((slow.cpu, slow.max_calls), (Duration::from_secs(5), 20));
        assert_eq!(CodeMode::default().for_project("x"), Some(CodeLimits::default()));
    }

    #[test]
    fn a_project_may_turn_it_on_where_the_section_turns_it_off() {
        let section = RawCodeMode {
            enabled: Some(false),
            ..Default::default()
        };
        let on = RawCodeMode {
            enabled: Some(true),
            ..Default::default()
        };
        let projects = [("on".to_string(), on)];
        let c = CodeMode::new(Some(&section), projects.iter().map(|(n, r)| (n, r))).unwrap();
        assert_eq!(c.for_project("x"), None);
        assert!(c.for_project("on").is_some());
    }

    #[test]
    fn script_caps_are_gateway_wide_and_hold_one_script_at_least() {
        let section = RawCodeMode {
            max_scripts: Some(2),
            ..Default::default()
        };
        let c = CodeMode::new(Some(&section), std::iter::empty()).unwrap();
        assert_eq!(c.caps.scripts, 2);
        assert_eq!(c.caps.per_caller, DEFAULT_MAX_SCRIPTS_PER_CALLER);
        let per_project = RawCodeMode {
            max_memory_mb: Some(100),
            ..Default::default()
        };
        let projects = [("p".to_string(), per_project)];
        let (key, message) = CodeMode::new(None, projects.iter().map(|(n, r)| (n, r))).unwrap_err();
        assert_eq!(key, "security.projects.p.code_mode.max_memory_mb");
        assert!(message.contains("gateway-wide"), "{message}");
        let tight = RawCodeMode {
            max_memory_mb: Some(32),
            ..Default::default()
        };
        let (key, _) = CodeMode::new(Some(&tight), std::iter::empty()).unwrap_err();
        assert_eq!(key, "security.code_mode.max_memory_mb");
    }

    #[test]
    fn limits_out_of_range_are_refused_with_their_key() {
        let raw = RawCodeMode {
            parallel: Some(0),
            ..Default::default()
        };
        let (key, message) = CodeMode::new(Some(&raw), std::iter::empty()).unwrap_err();
        assert_eq!(key, "security.code_mode.parallel");
        assert_eq!(message, "parallel = 0 is out of range; use 1 to 64");
    }
}
