//! Tool rules from `gateway.toml`: which tools exist for callers at all, and
//! which tags they carry. Compiled once at load (globs via globset, `/regex/flags`
//! via regex), then asked once per tool when a catalog snapshot is built.
//!
//! Semantics (engine spec): rules apply in order; a rule matches a tool when
//! its `server` (if any) is the tool's server, its `tagged` glob (if any)
//! matches one of the tags the security scan gave the tool, and its patterns
//! match the tool name; the first matching rule that sets `enabled` decides; tags accumulate
//! from every matching rule; if any rule has `enabled = true`, the catalog is
//! an allow-list and unmatched tools are disabled.

use globset::{Glob, GlobMatcher};
use regex::{Regex, RegexBuilder};

/// One rule as written in the file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuleSpec {
    /// Patterns: globs, `/regex/flags`, and `!` in front of either to negate.
    pub pattern: Vec<String>,
    /// Only tools of this server.
    pub server: Option<String>,
    /// Enable or disable what matches; absent: tags only.
    pub enabled: Option<bool>,
    /// Tags for what matches; searchable and shown in results.
    pub tags: Vec<String>,
    /// Only tools with a scan tag matching this glob (`suspicious:*`).
    pub tagged: Option<String>,
}

/// Why a pattern was refused: which one, and the reason.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("pattern[{index}] '{pattern}': {reason}")]
pub struct PatternError {
    /// Position in the rule's `pattern` list.
    pub index: usize,
    /// The pattern as written.
    pub pattern: String,
    /// What is wrong.
    pub reason: String,
}

#[derive(Debug, Clone)]
enum Matcher {
    Glob(GlobMatcher),
    Regex(Regex),
}

impl Matcher {
    fn is_match(&self, name: &str) -> bool {
        match self {
            Matcher::Glob(g) => g.is_match(name),
            Matcher::Regex(r) => r.is_match(name),
        }
    }
}

#[derive(Debug, Clone)]
struct Pattern {
    negated: bool,
    matcher: Matcher,
}

#[derive(Debug, Clone)]
struct Rule {
    patterns: Vec<Pattern>,
    server: Option<String>,
    enabled: Option<bool>,
    tags: Vec<String>,
    tagged: Option<GlobMatcher>,
}

/// What the rules say about one tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Whether callers may see and run it at all.
    pub enabled: bool,
    /// Tags from every matching rule, deduplicated, in rule order.
    pub tags: Vec<String>,
    /// The position of the rule that decided `enabled`; `None` when no
    /// rule did (enabled, or disabled as not on an allow-list).
    pub decided_by: Option<usize>,
}

/// Compiled rules.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    rules: Vec<Rule>,
    allow_list: bool,
}

impl Rules {
    /// Compiles rules; the error says which rule and which pattern.
    pub fn compile(specs: &[RuleSpec]) -> Result<Self, (usize, PatternError)> {
        let mut rules = Vec::with_capacity(specs.len());
        for (i, spec) in specs.iter().enumerate() {
            let patterns = spec
                .pattern
                .iter()
                .enumerate()
                .map(|(j, p)| {
                    compile_pattern(p).map_err(|reason| PatternError {
                        index: j,
                        pattern: p.clone(),
                        reason,
                    })
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| (i, e))?;
            if patterns.is_empty() {
                let e = PatternError {
                    index: 0,
                    pattern: String::new(),
                    reason: "a rule needs at least one pattern".into(),
                };
                return Err((i, e));
            }
            let tagged = spec
                .tagged
                .as_deref()
                .map(|t| {
                    Glob::new(t).map(|g| g.compile_matcher()).map_err(|e| {
                        let reason = format!("tagged: invalid glob: {}", e.kind());
                        (
                            i,
                            PatternError {
                                index: 0,
                                pattern: t.to_string(),
                                reason,
                            },
                        )
                    })
                })
                .transpose()?;
            rules.push(Rule {
                patterns,
                server: spec.server.clone(),
                enabled: spec.enabled,
                tags: spec.tags.clone(),
                tagged,
            });
        }
        let allow_list = rules.iter().any(|r| r.enabled == Some(true));
        Ok(Self { rules, allow_list })
    }

    /// The verdict for tool `tool` of server `server`, which the security
    /// scan gave `flagged` tags (they lead the verdict's tags).
    pub fn verdict(&self, server: &str, tool: &str, flagged: &[String]) -> Verdict {
        let mut enabled = None;
        let mut decided_by = None;
        let mut tags: Vec<String> = flagged.to_vec();
        for (i, rule) in self.rules.iter().enumerate() {
            if rule.server.as_deref().is_some_and(|s| s != server)
                || rule
                    .tagged
                    .as_ref()
                    .is_some_and(|g| !flagged.iter().any(|t| g.is_match(t)))
                || !matches(&rule.patterns, tool)
            {
                continue;
            }
            if enabled.is_none() && rule.enabled.is_some() {
                enabled = rule.enabled;
                decided_by = Some(i);
            }
            for tag in &rule.tags {
                if !tags.contains(tag) {
                    tags.push(tag.clone());
                }
            }
        }
        Verdict {
            enabled: enabled.unwrap_or(!self.allow_list),
            tags,
            decided_by,
        }
    }
}

/// The spec's order-sensitive match: the first pattern that matches decides
/// (a negated one excludes, a plain one includes); nothing matching excludes.
/// A rule made only of negations matches every name none of them match, so
/// `["!*delete*"]` reads as "everything but deletes".
fn matches(patterns: &[Pattern], name: &str) -> bool {
    for p in patterns {
        if p.matcher.is_match(name) {
            return !p.negated;
        }
    }
    patterns.iter().all(|p| p.negated)
}

fn compile_pattern(raw: &str) -> Result<Pattern, String> {
    let (negated, body) = match raw.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, raw),
    };
    if body.is_empty() {
        return Err("empty pattern".into());
    }
    let matcher = match regex_parts(body) {
        Some((source, flags)) => {
            let mut b = RegexBuilder::new(source);
            for f in flags.chars() {
                match f {
                    'i' => b.case_insensitive(true),
                    'm' => b.multi_line(true),
                    's' => b.dot_matches_new_line(true),
                    'x' => b.ignore_whitespace(true),
                    'u' => b.unicode(true),
                    other => return Err(format!("unknown regex flag '{other}' (use i, m, s, x or u)")),
                };
            }
            Matcher::Regex(
                b.build()
                    .map_err(|e| format!("invalid regex: {}", e.to_string().lines().last().unwrap_or("")))?,
            )
        }
        None => Matcher::Glob(
            Glob::new(body)
                .map_err(|e| format!("invalid glob: {}", e.kind()))?
                .compile_matcher(),
        ),
    };
    Ok(Pattern { negated, matcher })
}

/// `/source/flags` → (source, flags); anything else is a glob.
fn regex_parts(body: &str) -> Option<(&str, &str)> {
    let rest = body.strip_prefix('/')?;
    let end = rest.rfind('/')?;
    let flags = &rest[end + 1..];
    flags
        .chars()
        .all(|c| c.is_ascii_alphabetic())
        .then_some((&rest[..end], flags))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(pattern: &[&str], server: Option<&str>, enabled: Option<bool>, tags: &[&str]) -> RuleSpec {
        RuleSpec {
            pattern: pattern.iter().map(|s| s.to_string()).collect(),
            server: server.map(str::to_string),
            enabled,
            tags: tags.iter().map(|s| s.to_string()).collect(),
            tagged: None,
        }
    }

    /// (rules, server, tool, enabled, tags)
    type Case<'a> = (&'a Vec<RuleSpec>, &'a str, &'a str, bool, Vec<&'a str>);

    #[test]
    fn table() {
        let deny_deletes = vec![rule(&["*delete*"], None, Some(false), &[])];
        let tags_only = vec![
            rule(&["git*"], None, None, &["vcs"]),
            rule(&["*_pr"], None, None, &["review", "vcs"]),
        ];
        let allow_list = vec![rule(&["read_*", "list_*"], None, Some(true), &["safe"])];
        let first_wins = vec![
            rule(&["*file*"], None, Some(true), &["a"]),
            rule(&["write_*"], None, Some(false), &["b"]),
        ];
        let regex = vec![
            rule(&["/^(create|update)_/"], None, Some(false), &[]),
            rule(&["/ISSUE/i"], None, None, &["issues"]),
        ];
        let negation = vec![rule(&["!*delete*", "*"], Some("gh"), Some(true), &[])];
        let only_negations = vec![rule(&["!*delete*", "!drop_*"], None, None, &["harmless"])];
        let server_specific = vec![rule(&["*"], Some("prod"), Some(false), &["prod"])];
        let cases: Vec<Case> = vec![
            (&deny_deletes, "fs", "delete_file", false, vec![]),
            (&deny_deletes, "fs", "read_file", true, vec![]),
            (&tags_only, "x", "git_create_pr", true, vec!["vcs", "review"]),
            (&tags_only, "x", "search", true, vec![]),
            (&allow_list, "fs", "read_file", true, vec!["safe"]),
            (&allow_list, "fs", "write_file", false, vec![]),
            (&first_wins, "fs", "write_file", true, vec!["a", "b"]),
            (&first_wins, "fs", "write_db", false, vec!["b"]),
            (&regex, "gh", "create_issue", false, vec!["issues"]),
            (&regex, "gh", "get_Issue", true, vec!["issues"]),
            (&regex, "gh", "recreate_x", true, vec![]),
            (&negation, "gh", "delete_repo", false, vec![]),
            (&negation, "gh", "list_repos", true, vec![]),
            (&negation, "other", "list_repos", false, vec![]),
            (&only_negations, "db", "drop_table", true, vec![]),
            (&only_negations, "db", "select", true, vec!["harmless"]),
            (&server_specific, "prod", "query", false, vec!["prod"]),
            (&server_specific, "dev", "query", true, vec![]),
        ];
        for (specs, server, tool, enabled, tags) in cases {
            let v = Rules::compile(specs).unwrap().verdict(server, tool, &[]);
            assert_eq!(v.enabled, enabled, "{server}:{tool} with {specs:?}");
            assert_eq!(v.tags, tags, "{server}:{tool} with {specs:?}");
        }
    }

    #[test]
    fn no_rules_enable_everything() {
        assert_eq!(
            Rules::default().verdict("a", "b", &[]),
            Verdict {
                enabled: true,
                tags: vec![],
                decided_by: None
            }
        );
    }

    /// The verdict names the rule that decided, so an operator can be told why a tool is hidden.
    #[test]
    fn the_first_rule_that_sets_enabled_is_named() {
        let tags_only = rule(&["*"], None, None, &["any"]);
        let hide = rule(&["*delete*"], None, Some(false), &[]);
        let allow = rule(&["*"], None, Some(true), &[]);
        let rules = Rules::compile(&[tags_only, hide, allow]).unwrap();
        assert_eq!(rules.verdict("db", "delete_row", &[]).decided_by, Some(1));
        assert_eq!(rules.verdict("db", "select", &[]).decided_by, Some(2));
        let allow_list = Rules::compile(&[rule(&["read*"], None, Some(true), &[])]).unwrap();
        let v = allow_list.verdict("fs", "write", &[]);
        assert_eq!((v.enabled, v.decided_by), (false, None));
    }

    #[test]
    fn tagged_rules_match_only_flagged_tools() {
        let mut hide = rule(&["*"], None, Some(false), &["hidden"]);
        hide.tagged = Some("suspicious:*".into());
        let rules = Rules::compile(&[hide]).unwrap();
        let flagged = vec!["suspicious:instructions".to_string()];
        let v = rules.verdict("fs", "read", &flagged);
        assert!(!v.enabled);
        assert_eq!(v.tags, ["suspicious:instructions", "hidden"]);
        assert!(rules.verdict("fs", "read", &[]).enabled);
        assert!(rules.verdict("fs", "read", &["ok".into()]).enabled);
    }

    #[test]
    fn bad_patterns_say_which_and_why() {
        let specs = vec![
            rule(&["ok_*"], None, None, &[]),
            rule(&["fine", "/(unclosed/"], None, None, &[]),
        ];
        let (i, e) = Rules::compile(&specs).unwrap_err();
        assert_eq!((i, e.index), (1, 1));
        assert!(e.reason.contains("invalid regex"), "{e}");
        let (_, e) = Rules::compile(&[rule(&["a{b"], None, None, &[])]).unwrap_err();
        assert!(e.reason.contains("invalid glob"), "{e}");
        let (_, e) = Rules::compile(&[rule(&["/x/q"], None, None, &[])]).unwrap_err();
        assert!(e.reason.contains("unknown regex flag 'q'"), "{e}");
        let (_, e) = Rules::compile(&[rule(&[], None, None, &[])]).unwrap_err();
        assert!(e.reason.contains("at least one pattern"), "{e}");
    }
}
