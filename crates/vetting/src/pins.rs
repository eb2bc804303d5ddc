//! Pinning: the definition of each tool is trusted on first sight and
//! hashed; a later change to it, a new tool on a pinned server, or a
//! finding set to hold waits for an operator. Pure: what to do with one tool,
//! given what the store remembers of it.

use rmcp::model::Tool;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use config::security::{OnNewTool, OnSuspicious, OnToolChange, SecurityConfig};

use crate::scan::Finding;

/// What a client is told about a tool, as pinned: the fields that change
/// what the model reads or sends (`_meta` and `execution` are not).
pub fn definition(tool: &Tool) -> Value {
    let mut d = Map::new();
    d.insert("name".into(), Value::String(tool.name.to_string()));
    let mut put = |key: &str, v: Option<Value>| {
        if let Some(v) = v.filter(|v| !v.is_null()) {
            d.insert(key.into(), v);
        }
    };
    put("title", tool.title.clone().map(Value::String));
    put(
        "description",
        tool.description.as_deref().map(|s| Value::String(s.into())),
    );
    put("inputSchema", Some(Value::Object((*tool.input_schema).clone())));
    put(
        "outputSchema",
        tool.output_schema.as_ref().map(|o| Value::Object((**o).clone())),
    );
    put(
        "annotations",
        tool.annotations.as_ref().and_then(|a| serde_json::to_value(a).ok()),
    );
    Value::Object(d)
}

/// The definition as canonical JSON: keys sorted at every level, no spaces,
/// so a server that merely reorders keys has not changed anything.
pub fn canonical(definition: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&m[k]))).collect())
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(definition).to_string()
}

/// SHA-256 of the canonical definition, hex.
pub fn hash(canonical: &str) -> String {
    Sha256::digest(canonical.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Why a tool waits for an operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Its definition is not the one pinned.
    Changed,
    /// It appeared on a server whose tools were already pinned.
    New,
    /// A scan finding that holds.
    Suspicious(Finding),
}

impl Reason {
    /// As stored.
    pub fn word(self) -> &'static str {
        match self {
            Reason::Changed => "changed",
            Reason::New => "new",
            Reason::Suspicious(f) => f.tag(),
        }
    }

    /// From its stored word.
    pub fn from_word(word: &str) -> Option<Self> {
        match word {
            "changed" => Some(Reason::Changed),
            "new" => Some(Reason::New),
            tag => Finding::from_tag(tag).map(Reason::Suspicious),
        }
    }

    /// For the sentence a held call answers with.
    pub fn sentence(self) -> &'static str {
        match self {
            Reason::Changed => "its server changed its definition after it was approved",
            Reason::New => "it appeared on a server whose tools were already approved",
            Reason::Suspicious(f) => f.reason(),
        }
    }
}

/// What the store remembers of one tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Known<'a> {
    /// The hash of its pinned definition.
    pub pinned: Option<&'a str>,
    /// The hash an operator rejected.
    pub rejected: Option<&'a str>,
    /// Whether its server has any pinned tool (else this is first sight).
    pub server_pinned: bool,
}

/// What to do with one tool as listed now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// It is the pinned definition.
    Trusted,
    /// Pin it now (first sight, or a change the policy lets through).
    Pin {
        /// The change it replaces, for logs and metrics (`warn`, `accept`).
        changed: Option<OnToolChange>,
    },
    /// Hide and refuse it until an operator approves.
    Hold(Vec<Reason>),
    /// An operator rejected this very definition.
    Rejected,
}

/// Whether `finding` holds under `policy`: as set, or by default hidden
/// characters only.
pub fn holds(policy: Option<OnSuspicious>, finding: Finding) -> bool {
    match policy {
        Some(OnSuspicious::Hold) => true,
        Some(OnSuspicious::Tag) => false,
        None => finding == Finding::HiddenText,
    }
}

/// The decision for a tool with definition `hash` and scan `findings`.
pub fn decide(config: &SecurityConfig, known: Known, hash: &str, findings: &[Finding]) -> Decision {
    if known.pinned == Some(hash) {
        return Decision::Trusted;
    }
    if known.rejected == Some(hash) {
        return Decision::Rejected;
    }
    let mut reasons = Vec::new();
    let mut changed = None;
    match (known.pinned, config.on_tool_change) {
        (Some(_), OnToolChange::Hold) => reasons.push(Reason::Changed),
        (Some(_), policy) => changed = Some(policy),
        (None, _) if known.server_pinned && config.on_new_tool == OnNewTool::Hold => reasons.push(Reason::New),
        (None, _) => {}
    }
    reasons.extend(
        findings
            .iter()
            .filter(|f| holds(config.on_suspicious, **f))
            .map(|f| Reason::Suspicious(*f)),
    );
    if reasons.is_empty() {
        Decision::Pin { changed }
    } else {
        Decision::Hold(reasons)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(description: &str) -> Tool {
        Tool::new(
            "t",
            description.to_string(),
            json!({"type": "object"}).as_object().unwrap().clone(),
        )
    }

    #[test]
    fn the_hash_follows_what_the_model_reads_and_not_key_order() {
        let a = tool("Adds");
        let h = |t: &Tool| hash(&canonical(&definition(t)));
        assert_eq!(h(&a), h(&a.clone()));
        assert_ne!(h(&a), h(&tool("Adds, and reads ~/.ssh/id_rsa")));
        let mut b = a.clone();
        b.input_schema = json!({"type": "object", "properties": {"x": {"type": "string", "description": "x"}}})
            .as_object()
            .unwrap()
            .clone()
            .into();
        let mut c = a.clone();
        c.input_schema = json!({"properties": {"x": {"description": "x", "type": "string"}}, "type": "object"})
            .as_object()
            .unwrap()
            .clone()
            .into();
        assert_ne!(h(&a), h(&b));
        assert_eq!(h(&b), h(&c));
        assert_eq!(h(&a).len(), 64);
    }

    #[test]
    fn decisions_follow_the_policy() {
        let on = |change, new, suspicious| SecurityConfig {
            on_tool_change: change,
            on_new_tool: new,
            on_suspicious: suspicious,
            ..Default::default()
        };
        let default = SecurityConfig::default();
        let first = Known::default();
        let pinned = Known {
            pinned: Some("old"),
            server_pinned: true,
            ..Default::default()
        };
        let fresh = Known {
            server_pinned: true,
            ..Default::default()
        };
        let hidden = [Finding::HiddenText];
        let steering = [Finding::Instructions];
        let cases: Vec<(&SecurityConfig, Known, &str, &[Finding], Decision)> = vec![
            (&default, first, "h", &[], Decision::Pin { changed: None }),
            (&default, pinned, "old", &hidden, Decision::Trusted),
            (&default, pinned, "new", &[], Decision::Hold(vec![Reason::Changed])),
            (&default, fresh, "h", &[], Decision::Pin { changed: None }),
            (
                &default,
                first,
                "h",
                &hidden,
                Decision::Hold(vec![Reason::Suspicious(Finding::HiddenText)]),
            ),
            (&default, first, "h", &steering, Decision::Pin { changed: None }),
            (
                &default,
                Known {
                    rejected: Some("bad"),
                    ..pinned
                },
                "bad",
                &[],
                Decision::Rejected,
            ),
        ];
        for (config, known, hash, findings, want) in cases {
            assert_eq!(
                decide(config, known, hash, findings),
                want,
                "{known:?} {hash} {findings:?}"
            );
        }
        let warn = on(OnToolChange::Warn, OnNewTool::Accept, None);
        assert_eq!(
            decide(&warn, pinned, "new", &[]),
            Decision::Pin {
                changed: Some(OnToolChange::Warn)
            }
        );
        let strict = on(OnToolChange::Accept, OnNewTool::Hold, Some(OnSuspicious::Hold));
        assert_eq!(decide(&strict, fresh, "h", &[]), Decision::Hold(vec![Reason::New]));
        assert_eq!(
            decide(&strict, first, "h", &steering),
            Decision::Hold(vec![Reason::Suspicious(Finding::Instructions)])
        );
        let lax = on(OnToolChange::Hold, OnNewTool::Accept, Some(OnSuspicious::Tag));
        assert_eq!(decide(&lax, first, "h", &hidden), Decision::Pin { changed: None });
    }

    #[test]
    fn reasons_round_trip_through_their_words() {
        for r in [Reason::Changed, Reason::New, Reason::Suspicious(Finding::HtmlComment)] {
            assert_eq!(Reason::from_word(r.word()), Some(r));
        }
    }
}
