//! Credentials in tool traffic: found so a tool call carrying one can be
//! blocked before it reaches a downstream server, and a tool result carrying
//! one can be redacted before it reaches the model.
//!
//! Free text is matched against curated credential formats (gitleaks-style: a
//! distinctive prefix or label, a tight alphabet and length, standing apart from
//! letters and digits but not from `_`, which glues no credential shut),
//! never guessed by entropy, so hashes, ids, UUIDs and Base64 in prose pass.
//! Entropy is used only for a string under a key that names a secret
//! (`"password": …`), where the key has already said what the value is.
//! Nothing here returns or logs a matched value: only its kind and place.
//!
//! The same formats keep credentials out of what the gateway says about a
//! caller's own strings: [`quote`] is how an error, an answer or a log line
//! quotes one, and [`cut_out`] is what a discovery's query is stored as.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::LazyLock;

use regex::{Regex, RegexSet};
use serde_json::{Map, Value};

use vocab::mask::secret_like_name;
use vocab::text::{char_floor, one_line, truncate};
use vocab::wire::QUOTE_CHARS;

/// What kind of credential was found; a short kebab-case word, safe to log (never the match itself).
pub type Kind = &'static str;

/// One credential found in a string: its kind and byte range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leak {
    /// What it is.
    pub kind: Kind,
    /// Where it is in the string, in bytes.
    pub range: Range<usize>,
}

/// Where a credential sits in a JSON value: its kind and JSON Pointer (RFC 6901, e.g.
/// "/headers/Authorization", "" for the root). A credential used as an object key is
/// found at that key's own path, where every key reads redacted: a path is quoted in
/// refusals and logs, so it never carries one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// What it is.
    pub kind: Kind,
    /// The string holding it, as a JSON Pointer.
    pub path: String,
}

/// Kind of a credential-looking string under a secret-like key that no format matched.
const SECRET_FIELD: Kind = "secret-field";
/// Shortest value `looks_like_secret` accepts, in characters.
const MIN_SECRET_CHARS: usize = 12;
/// Least Shannon entropy, bits per character: random tokens score 3.5 to 5, words and repeats less.
const MIN_ENTROPY: f64 = 3.0;

/// How a match must stand apart from the text around it, checked by [`stands_apart`]: a regex
/// word boundary counts `_` as part of a word, so `x_ghp_…` or `id_AKIA…` would pass it glued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Edges {
    /// The pattern says it all (a label, a URL, a key block's armour).
    Pattern,
    /// No ASCII letter or digit just before or after: `_`, `-` and the like separate.
    Apart,
    /// A prefix distinctive enough to count glued to letters too (`xghp_…`), but
    /// nothing alphanumeric just after it (`npm_` and 37 characters is not a token).
    Prefixed,
}

/// The formats `find` knows. On a tie (same start and length) the earlier rule names the kind, so
/// specific formats come before the generic `bearer-token` and `url-password`. A group named `s`
/// marks the credential when the pattern also matches its label or the character after it.
static RULES: LazyLock<Vec<(Kind, Edges, Regex)>> = LazyLock::new(|| {
    [
        // to the END line; without one, the BEGIN line and the Base64 lines after it (`\n`-escaped too)
        (
            "private-key",
            Edges::Pattern,
            concat!(
                r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----",
                r"(?:(?s:.*?)-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----",
                r"|(?:(?:\r?\n|(?:\\r)?\\n)[A-Za-z0-9+/=]+)*)",
            ),
        ),
        ("aws-access-key", Edges::Apart, r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}"),
        // 40 Base64 characters are common; only a label makes them an AWS secret
        (
            "aws-secret-key",
            Edges::Pattern,
            concat!(
                r"(?i:aws[_-]?secret(?:[_-]?access)?(?:[_-]?key)?|secret[_-]?access[_-]?key)",
                r#"[\\"']{0,3}\s*(?::|=>?)\s*[\\"']{0,3}"#,
                r"(?P<s>[A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|$)",
            ),
        ),
        ("github-token", Edges::Prefixed, r"gh[pousr]_[A-Za-z0-9]{36,255}"),
        ("github-token", Edges::Prefixed, r"github_pat_[A-Za-z0-9_]{82}"),
        ("gitlab-token", Edges::Prefixed, r"glpat-[A-Za-z0-9_-]{20,}"),
        (
            "slack-webhook",
            Edges::Pattern,
            r"https://hooks\.slack\.com/services/T[A-Z0-9]{8,}/B[A-Z0-9]{8,}/[A-Za-z0-9]{20,}",
        ),
        ("slack-token", Edges::Prefixed, r"xox[baprs]-[A-Za-z0-9-]{10,}"),
        (
            "google-api-key",
            Edges::Apart,
            r"(?P<s>AIza[0-9A-Za-z_-]{35})(?:[^0-9A-Za-z_-]|$)",
        ),
        ("stripe-key", Edges::Apart, r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{24,}"),
        (
            "anthropic-key",
            Edges::Apart,
            r"sk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_-]{80,}",
        ),
        // `T3BlbkFJ` is "openai" in Base64, inside every classic and most project keys
        (
            "openai-key",
            Edges::Apart,
            concat!(
                r"sk-(?:(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}",
                r"|proj-[A-Za-z0-9_-]{40,})",
            ),
        ),
        ("npm-token", Edges::Prefixed, r"npm_[A-Za-z0-9]{36}"),
        // this gateway's own: `mgw_<id>_<64 hex>` (store::issue_token)
        ("gateway-token", Edges::Prefixed, r"mgw_[0-9]+_[0-9a-f]{64}"),
        // and its admin tokens, which open the console: `mgwa_<id>_<64 hex>` (store::issue_admin_token)
        ("gateway-admin-token", Edges::Prefixed, r"mgwa_[0-9]+_[0-9a-f]{64}"),
        // header and payload are Base64url JSON objects, so both start `{"` = `eyJ`
        (
            "jwt",
            Edges::Apart,
            r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
        ),
        (
            "bearer-token",
            Edges::Pattern,
            concat!(
                r#"(?i:authorization)[\\"']{0,3}\s*[:=]\s*[\\"']{0,3}"#,
                r"(?i:bearer)\s+(?P<s>[A-Za-z0-9_.~+/=-]{20,})",
            ),
        ),
        (
            "url-password",
            Edges::Pattern,
            concat!(
                r#"[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@"'<>\\]*"#,
                r#":(?P<s>[^\s/?#@"'<>\\]+)@[A-Za-z0-9\[]"#,
            ),
        ),
    ]
    .into_iter()
    .map(|(kind, edges, pattern)| (kind, edges, Regex::new(pattern).expect("credential patterns are valid")))
    .collect()
});

/// Every rule at once: for a short text (an argument), one pass that rules
/// out most of them is cheaper than asking each; a long text is faster
/// through each rule's own literal prefilter (`cargo bench --bench security`).
const SHORT_TEXT: usize = 1024;
/// Every rule at once: one pass over a text that holds no credential (most do).
static ANY: LazyLock<RegexSet> =
    LazyLock::new(|| RegexSet::new(RULES.iter().map(|(_, _, re)| re.as_str())).expect("credential patterns are valid"));

/// Lower-case marks of a placeholder, a template variable or an already-redacted value (space-separated).
const PLACEHOLDER_MARKS: &str =
    "changeme change-me change_me dummy example placeholder redacted your- your_ xxxxxx *** ... ${ {{";

/// Credentials in free text, found by their formats alone (no entropy guessing): sorted by start,
/// non-overlapping (on overlap keep the earlier/longer one).
pub fn find(text: &str) -> Vec<Leak> {
    let mut hits: Vec<(Range<usize>, usize, Kind)> = Vec::new();
    let candidates: Vec<usize> = if text.len() <= SHORT_TEXT {
        ANY.matches(text).into_iter().collect()
    } else {
        (0..RULES.len()).collect()
    };
    for rank in candidates {
        let (kind, edges, re) = &RULES[rank];
        let mut at = 0;
        while let Some(caps) = re.captures_at(text, at) {
            let whole = caps.get(0).expect("group 0 is the match");
            let m = caps.name("s").unwrap_or(whole);
            if !stands_apart(text, m.range(), *edges) {
                // a match glued to its neighbours may hide one that starts inside it
                at = whole.start() + text[whole.start()..].chars().next().map_or(1, char::len_utf8);
                continue;
            }
            // a placeholder is documentation, but a key block's Base64 may spell anything
            if *kind == "private-key" || !is_placeholder(m.as_str()) {
                hits.push((m.range(), rank, *kind));
            }
            at = whole.end();
        }
    }
    hits.sort_by_key(|(range, rank, _)| (range.start, Reverse(range.end), *rank));
    let mut leaks: Vec<Leak> = Vec::new();
    for (range, _, kind) in hits {
        // kept leaks are disjoint and sorted, so only the last can overlap
        if leaks.last().is_none_or(|last| range.start >= last.range.end) {
            leaks.push(Leak { kind, range });
        }
    }
    leaks
}

/// Whether the credential at `range` of `text` is not part of a longer word, as `edges` has it.
fn stands_apart(text: &str, range: Range<usize>, edges: Edges) -> bool {
    let alnum = |b: Option<&u8>| b.is_some_and(u8::is_ascii_alphanumeric);
    let (before, after) = (
        alnum(text.as_bytes()[..range.start].last()),
        alnum(text.as_bytes().get(range.end)),
    );
    match edges {
        Edges::Pattern => true,
        Edges::Apart => !before && !after,
        Edges::Prefixed => !after,
    }
}

/// Whether a string value under a secret-like key looks like a real credential: at least 12 chars,
/// no whitespace, high Shannon entropy (>= 3.0 bits/char) and a mix of at least two character
/// classes among lower/upper/digit/symbol, and not a placeholder ("changeme", "xxxxxxxx",
/// "<your-token>", "${VAR}", "****", "REDACTED"...).
pub(crate) fn looks_like_secret(value: &str) -> bool {
    value.chars().count() >= MIN_SECRET_CHARS
        && !value.chars().any(char::is_whitespace)
        && !is_placeholder(value)
        && char_classes(value) >= 2
        && entropy(value) >= MIN_ENTROPY
}

/// Whether `value` is a stand-in for a secret rather than one.
fn is_placeholder(value: &str) -> bool {
    let lower = value.to_lowercase();
    PLACEHOLDER_MARKS.split_whitespace().any(|mark| lower.contains(mark))
        || (value.starts_with('<') && value.ends_with('>'))
        // `$TOKEN`: an environment variable's name
        || value.strip_prefix('$').is_some_and(|name| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })
}

/// How many of lower-case, upper-case, digit and other characters `value` has.
fn char_classes(value: &str) -> usize {
    let classes: [fn(&char) -> bool; 4] = [
        char::is_ascii_lowercase,
        char::is_ascii_uppercase,
        char::is_ascii_digit,
        |c| !c.is_ascii_alphanumeric(),
    ];
    classes.iter().filter(|class| value.chars().any(|c| class(&c))).count()
}

/// Shannon entropy of the characters of `value`, in bits per character.
fn entropy(value: &str) -> f64 {
    let mut counts: HashMap<char, u32> = HashMap::new();
    for c in value.chars() {
        *counts.entry(c).or_default() += 1;
    }
    let total = f64::from(counts.values().sum::<u32>());
    counts
        .values()
        .map(|&n| f64::from(n) / total)
        .map(|p| -p * p.log2())
        .sum()
}

/// Whether a value under a secret-like key is a credential. A header's auth scheme (`Bearer …`) is
/// skipped, or its space would fail the whitespace test.
fn secret_field(value: &str) -> bool {
    let (scheme, rest) = value.split_once(' ').unwrap_or_default();
    let scheme = scheme.to_ascii_lowercase();
    let schemed = matches!(scheme.as_str(), "basic" | "bearer" | "token");
    looks_like_secret(if schemed { rest.trim_start() } else { value })
}

/// Every credential in `value`: every string, object keys included, is searched with `find`; a
/// string under a secret-like key that `find` misses but `looks_like_secret` accepts counts as
/// kind "secret-field" (after a header's `Bearer`/`Basic`/`Token` scheme). Also walks arrays and
/// nested objects.
pub fn scan(value: &Value) -> Vec<Found> {
    let mut found = Vec::new();
    scan_at(value, "", false, &mut found);
    found
}

/// `scan` below `path`; `secret_key` says whether the nearest object key names a secret (arrays pass it on).
fn scan_at(value: &Value, path: &str, secret_key: bool, found: &mut Vec<Found>) {
    match value {
        Value::String(s) => {
            let mut kinds: Vec<Kind> = find(s).into_iter().map(|leak| leak.kind).collect();
            if kinds.is_empty() && secret_key && secret_field(s) {
                kinds.push(SECRET_FIELD);
            }
            found.extend(kinds.into_iter().map(|kind| Found {
                kind,
                path: path.to_owned(),
            }));
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                scan_at(item, &format!("{path}/{i}"), secret_key, found);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                let leaks = find(key);
                let shown = match leaks.is_empty() {
                    true => Cow::Borrowed(key.as_str()),
                    false => Cow::Owned(replaced(key, &leaks, marker)),
                };
                let path = format!("{path}/{}", shown.replace('~', "~0").replace('/', "~1"));
                found.extend(leaks.iter().map(|leak| Found {
                    kind: leak.kind,
                    path: path.clone(),
                }));
                scan_at(item, &path, names_secret(key, &shown), found);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Whether a key names a secret, as sent or as redacted (`[REDACTED:github-token]`
/// names one): either way, so that what [`redact`] leaves, [`scan`] passes.
fn names_secret(key: &str, shown: &str) -> bool {
    secret_like_name(key) || (shown != key && secret_like_name(shown))
}

/// What a redacted credential of `kind` is replaced with.
fn marker(kind: Kind) -> String {
    format!("[REDACTED:{kind}]")
}

/// `text` with each of `leaks` (found in it, in order) replaced by `with(kind)`.
fn replaced(text: &str, leaks: &[Leak], with: impl Fn(Kind) -> String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for leak in leaks {
        out.push_str(&text[at..leak.range.start]);
        out.push_str(&with(leak.kind));
        at = leak.range.end;
    }
    out.push_str(&text[at..]);
    out
}

/// Replaces each credential in `text` (by `find`) with `[REDACTED:<kind>]`; None when there is none.
pub fn redact_text(text: &str) -> Option<(String, Vec<Kind>)> {
    let leaks = find(text);
    if leaks.is_empty() {
        return None;
    }
    let out = replaced(text, &leaks, marker);
    Some((out, leaks.into_iter().map(|leak| leak.kind).collect()))
}

/// `text` with each credential (by `find`) replaced by `[REDACTED:<kind>]`.
pub fn redacted(text: &str) -> String {
    redact_text(text).map_or_else(|| text.to_string(), |(clean, _)| clean)
}

/// `text` with each credential (by `find`) cut out, a space in its place.
/// For what is searched, kept and shown to others but never needs one: a
/// discovery's query describes a capability, and a credential describes
/// none, so it is no loss to search and leaves no trace (not even a marker)
/// in the memory of meanings, the learned terms or the audit log.
pub fn cut_out(text: &str) -> String {
    replaced(text, &find(text), |_| " ".to_string())
}

/// Bytes of a caller's string that [`quote`] reads: past any excerpt it
/// shows, so quoting a megabyte costs what quoting a key does.
const QUOTE_WINDOW: usize = 1024;

/// `text`, a caller's string, as an error, an answer or a log line may
/// quote it: credentials redacted, on one line, at most
/// [`QUOTE_CHARS`] characters (a cut text ends in `…`).
pub fn quote(text: &str) -> String {
    let (start, cut) = head(text, QUOTE_WINDOW);
    let mut line = one_line(&redacted(start));
    if cut {
        line.push('…');
    }
    truncate(&line, QUOTE_CHARS)
}

/// At most the first `max_bytes` of `text`, redacted, and `…` when cut: a
/// log line of a caller's megabyte, say.
pub fn redacted_head(text: &str, max_bytes: usize) -> String {
    let (start, cut) = head(text, max_bytes);
    let mut out = redacted(start);
    if cut {
        out.push('…');
    }
    out
}

/// At most the first `max_bytes` of `text`, and whether it was cut. A cut
/// drops the whole word it falls in: a credential cut short is one `find`
/// no longer knows, and its first half is still a secret. (Every format's
/// secret is one word, or lines that match whole up to the cut.)
fn head(text: &str, max_bytes: usize) -> (&str, bool) {
    if text.len() <= max_bytes {
        return (text, false);
    }
    let window = &text[..char_floor(text, max_bytes)];
    let kept = window.rfind(char::is_whitespace).map_or("", |at| &window[..at]);
    (kept, true)
}

/// Redacts in place every credential `scan` would find in `value` (a whole "secret-field" string
/// becomes `[REDACTED:secret-field]`, a key holding a credential reads `[REDACTED:<kind>]` in
/// it); returns the kinds redacted, in the order `scan` finds them (duplicates kept).
pub fn redact(value: &mut Value) -> Vec<Kind> {
    let mut kinds = Vec::new();
    redact_at(value, false, &mut kinds);
    kinds
}

/// `redact` below `value`; `secret_key` says whether the nearest object key names a secret.
fn redact_at(value: &mut Value, secret_key: bool, kinds: &mut Vec<Kind>) {
    match value {
        Value::String(s) => {
            if let Some((clean, found)) = redact_text(s) {
                *s = clean;
                kinds.extend(found);
            } else if secret_key && secret_field(s) {
                // `find` misses a "secret-field", so the whole string goes
                *s = marker(SECRET_FIELD);
                kinds.push(SECRET_FIELD);
            }
        }
        Value::Array(items) => {
            for item in items {
                redact_at(item, secret_key, kinds);
            }
        }
        Value::Object(map) if map.keys().all(|key| find(key).is_empty()) => {
            for (key, item) in map.iter_mut() {
                redact_at(item, secret_like_name(key), kinds);
            }
        }
        Value::Object(map) => {
            // A key holds a credential: the map is rebuilt in its own order
            // with that key redacted.
            for (key, mut item) in std::mem::take(map) {
                let (shown, found) = redact_text(&key).unwrap_or_else(|| (key.clone(), Vec::new()));
                kinds.extend(found);
                redact_at(&mut item, names_secret(&key, &shown), kinds);
                insert_unique(map, shown, item);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Inserts `item` under `key`, or, when that name is taken (two keys that
/// read the same once redacted), under `key (2)`, `key (3)`…: nothing is
/// lost to a collision.
fn insert_unique(map: &mut Map<String, Value>, key: String, item: Value) {
    let mut unique = key.clone();
    let mut n = 1;
    while map.contains_key(&unique) {
        n += 1;
        unique = format!("{key} ({n})");
    }
    map.insert(unique, item);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    const HEX: &str = "0123456789abcdef";
    const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const B64URL: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    /// `{"alg":"HS256","typ":"JWT"}` and `{"sub":"1234567890"}` in Base64url.
    const JWT_HEAD: &str = concat!("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIi", "OiIxMjM0NTY3ODkwIn0");
    const KEY_BEGIN: &str = concat!("-----BEGIN RSA ", "PRIVATE KEY-----");
    const KEY_END: &str = concat!("-----END RSA ", "PRIVATE KEY-----");

    /// Random-looking text from a fixed seed, so no credential-shaped literal sits in this file.
    fn noise(charset: &str, len: usize, seed: u64) -> String {
        let chars: Vec<char> = charset.chars().collect();
        let mut x = seed;
        let mut next = || {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            chars[(x >> 33) as usize % chars.len()]
        };
        (0..len).map(|_| next()).collect()
    }

    fn alnum(len: usize, seed: u64) -> String {
        noise(ALNUM, len, seed)
    }

    /// What `find` reports in `text`: kinds and matched texts.
    fn found(text: &str) -> Vec<(Kind, &str)> {
        find(text)
            .into_iter()
            .map(|leak| (leak.kind, &text[leak.range]))
            .collect()
    }

    #[test]
    fn finds_each_format() {
        let (team, hook) = (noise(UPPER, 10, 14), noise(UPPER, 10, 15));
        let hook = format!("https://hooks.slack.com/services/T{team}/B{hook}/{}", alnum(24, 16));
        let tokens = [
            ("aws-access-key", format!("AKIA{}", noise(UPPER, 16, 1))),
            ("github-token", format!("ghp_{}", alnum(36, 9))),
            ("github-token", format!("github_pat_{}", alnum(82, 10))),
            ("gitlab-token", format!("glpat-{}", alnum(20, 11))),
            ("slack-token", format!("xoxb-{}-{}", noise(HEX, 12, 12), alnum(24, 13))),
            ("slack-webhook", hook),
            ("google-api-key", format!("AIza{}", noise(B64URL, 35, 17))),
            ("stripe-key", format!("sk_live_{}", alnum(24, 18))),
            ("anthropic-key", format!("sk-ant-api03-{}", noise(B64URL, 90, 19))),
            ("openai-key", format!("sk-{}T3BlbkFJ{}", alnum(20, 20), alnum(20, 21))),
            ("openai-key", format!("sk-proj-{}", noise(B64URL, 48, 22))),
            ("npm-token", format!("npm_{}", alnum(36, 23))),
            ("gateway-token", format!("mgw_17_{}", noise(HEX, 64, 24))),
            ("gateway-admin-token", format!("mgwa_4_{}", noise(HEX, 64, 38))),
            ("jwt", format!("{JWT_HEAD}.{}", noise(B64URL, 43, 25))),
        ];
        for (kind, token) in tokens {
            assert_eq!(found(&format!("see {token} here")), [(kind, token.as_str())]);
        }
        let (s, b, p) = (noise(B64, 40, 2), alnum(32, 3), alnum(16, 4));
        let block = format!("{KEY_BEGIN}\n{}\n{}\n{KEY_END}", alnum(64, 5), alnum(24, 6));
        let unended = format!("{KEY_BEGIN}\n{}\n{}", alnum(64, 7), alnum(24, 8));
        let labelled = [
            ("aws-secret-key", format!("aws_secret_access_key = {s}\n"), &s),
            ("aws-secret-key", format!(r#"{{"secretAccessKey": "{s}"}}"#), &s),
            ("bearer-token", format!("Authorization: Bearer {b}"), &b),
            ("bearer-token", format!(r#""authorization":"bearer {b}""#), &b),
            ("url-password", format!("postgres://admin:{p}@db:5432/app"), &p),
            ("private-key", format!("key:\n{block}\ndone"), &block),
            ("private-key", format!("{unended}\n\nnext paragraph"), &unended),
        ];
        for (kind, text, secret) in &labelled {
            assert_eq!(found(text), [(*kind, secret.as_str())], "{text}");
        }
    }

    #[test]
    fn near_misses_and_ordinary_text_are_not_credentials() {
        let near = [
            format!("XAKIA{} AKIA{}", noise(UPPER, 16, 1), noise(UPPER, 17, 1)),
            format!("value = {}", noise(B64, 40, 2)),
            format!("aws_secret_access_key = {}", noise(B64, 39, 2)),
            format!("ghp_{} ghx_{}", alnum(35, 9), alnum(36, 9)),
            format!("github_pat_{}", alnum(81, 10)),
            format!("glpat-{} xoxz-{}", alnum(19, 11), alnum(20, 13)),
            format!("AIza{} end", alnum(34, 17)),
            format!("sk_live_{} sk_prod_{}", alnum(10, 18), alnum(24, 18)),
            format!("sk-ant-api03-{} sk-{}", alnum(20, 19), alnum(30, 20)),
            format!("npm_{} npm_{}", alnum(35, 23), alnum(37, 23)),
            format!("mgw_1_x mgw_17_{}", noise(HEX, 63, 24)),
            format!("mgwa_1_x mgwa_4_{} mgwa_{}", noise(HEX, 63, 38), noise(HEX, 64, 38)),
            format!("{JWT_HEAD} Bearer {}", alnum(32, 3)),
        ];
        let ordinary = [
            "xoxb-short, https://hooks.slack.com/services/ takes a webhook",
            "a risk-free plan, ask-me-anything",
            "Authorization: Bearer short",
            "postgres://admin:${DB_PASSWORD}@db/app and user:****@host",
            "https://example.com:8080/a@b and ssh://git@github.com",
            "-----BEGIN PUBLIC KEY-----",
            "uuid 123e4567-e89b-12d3-a456-426614174000, commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
            "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855, max_tokens: 1000",
            "the body was SGVsbG8sIHRoaXMgaXMgYSBwbGFpbiBzZW50ZW5jZS4= as sent",
        ];
        for text in near.iter().map(String::as_str).chain(ordinary) {
            assert!(find(text).is_empty(), "{text}");
        }
    }

    // See: issue #71 (a credential glued to a word by `_` passed the regex word boundary).
    #[test]
    fn credentials_glued_to_words_are_found() {
        let gh = format!("ghp_{}", alnum(36, 45));
        let mgw = format!("mgw_17_{}", noise(HEX, 64, 46));
        let akia = format!("AKIA{}", noise(UPPER, 16, 47));
        let google = format!("AIza{}", noise(B64URL, 35, 48));
        let npm = format!("npm_{}", alnum(36, 49));
        let glued = [
            (format!("x_{gh}"), "github-token", &gh),
            (format!("{gh}_x"), "github-token", &gh),
            (format!("tool_{gh}"), "github-token", &gh),
            (format!("x{gh}"), "github-token", &gh),
            (format!("k_{mgw}"), "gateway-token", &mgw),
            (format!("id_{akia}"), "aws-access-key", &akia),
            (format!("{akia}_2"), "aws-access-key", &akia),
            (format!("id_{google} "), "google-api-key", &google),
            (format!("my_{npm}_v2"), "npm-token", &npm),
        ];
        for (text, kind, secret) in &glued {
            assert_eq!(found(text), [(*kind, secret.as_str())], "{text}");
        }
        assert_eq!(
            redacted(&format!("call tool_{gh}")),
            "call tool_[REDACTED:github-token]"
        );
        // Letters and digits still join: a longer run is another string.
        let joined = [
            format!("X{akia} {akia}7"),
            format!("{npm}x"),
            format!("keyAIza{}", noise(B64URL, 35, 48)),
            format!("task-proj-{}", noise(B64URL, 48, 22)),
            format!("desk_live_{}", alnum(24, 18)),
            "snake_case_name_with_many_words max_tokens ghp_short AKIA_prefix npm_install".to_string(),
        ];
        for text in &joined {
            assert!(find(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn overlaps_keep_the_earlier_longer_more_specific_match() {
        let jwt = format!("{JWT_HEAD}.{}", noise(B64URL, 43, 26));
        assert_eq!(found(&format!("Authorization: Bearer {jwt}")), [("jwt", jwt.as_str())]);
        let text = format!("mgw_3_{} then AKIA{}", noise(HEX, 64, 27), noise(UPPER, 16, 28));
        let kinds: Vec<Kind> = find(&text).into_iter().map(|leak| leak.kind).collect();
        assert_eq!(kinds, ["gateway-token", "aws-access-key"]);
    }

    #[test]
    fn secret_values_need_length_entropy_and_mixed_classes() {
        assert!(looks_like_secret(&alnum(32, 29)));
        let not_secret = "hunter2 aaaaaaaaaaaaaaaa abcdefghijklmnop changeme-Changeme-123 xxxxxxxxxxxxxxxxxxxx \
            **************** <your-token-here> ${GITHUB_TOKEN} $OPENAI_API_KEY [REDACTED:secret-field]";
        for value in not_secret.split_whitespace().chain(["correct horse battery staple"]) {
            assert!(!looks_like_secret(value), "{value}");
        }
    }

    #[test]
    fn scan_reports_json_pointers_and_skips_paging_counting_and_prose() {
        let gh = format!("ghp_{}", alnum(36, 30));
        let value = json!({
            "a/b": {"c~d": ["plain", gh.clone()]},
            "headers": {"Authorization": format!("Bearer {}", alnum(32, 31))},
        });
        let at = |kind, path: &str| Found {
            kind,
            path: path.to_string(),
        };
        let expected = [
            at("github-token", "/a~1b/c~0d/1"),
            at(SECRET_FIELD, "/headers/Authorization"),
        ];
        assert_eq!(scan(&value), expected);
        assert_eq!(scan(&json!(gh)), [at("github-token", "")]);
        let value = json!({
            "max_tokens": 1000,
            "nextPageToken": alnum(40, 32),
            "page_token": alnum(40, 33),
            "password_hint": "the name of my first dog",
            "id": "123e4567-e89b-12d3-a456-426614174000",
        });
        assert!(scan(&value).is_empty());
    }

    #[test]
    fn redact_replaces_credentials_and_secret_fields() {
        let gh = format!("ghp_{}", alnum(36, 34));
        let mut value = json!({"note": format!("key {gh}"), "password": alnum(24, 35), "count": 3});
        assert_eq!(scan(&value).len(), 2);
        assert_eq!(redact(&mut value), ["github-token", "secret-field"]);
        let redacted =
            json!({"note": "key [REDACTED:github-token]", "password": "[REDACTED:secret-field]", "count": 3});
        assert_eq!(value, redacted);
        assert!(scan(&value).is_empty(), "redaction is final");
    }

    #[test]
    fn a_credential_as_a_key_is_found_and_redacted_and_no_entry_is_lost() {
        let (a, b) = (format!("ghp_{}", alnum(36, 40)), format!("ghp_{}", alnum(36, 41)));
        let admin = format!("mgwa_2_{}", noise(HEX, 64, 42));
        let mut value = json!({ "scopes": { a.clone(): "repo", b.clone(): "gist" }, "to": { admin.clone(): 1 } });
        let mut found = scan(&value);
        found.sort_by(|x, y| x.path.cmp(&y.path));
        let at = |kind, path: &str| Found {
            kind,
            path: path.to_string(),
        };
        let expected = [
            at("github-token", "/scopes/[REDACTED:github-token]"),
            at("github-token", "/scopes/[REDACTED:github-token]"),
            at("gateway-admin-token", "/to/[REDACTED:gateway-admin-token]"),
        ];
        assert_eq!(found, expected, "paths name the key redacted");
        let mut kinds = redact(&mut value);
        kinds.sort_unstable();
        assert_eq!(kinds, ["gateway-admin-token", "github-token", "github-token"]);
        let scopes = value["scopes"].as_object().unwrap();
        let keys: Vec<&str> = scopes.keys().map(String::as_str).collect();
        assert_eq!(keys, ["[REDACTED:github-token]", "[REDACTED:github-token] (2)"]);
        let mut kept: Vec<&str> = scopes.values().filter_map(Value::as_str).collect();
        kept.sort_unstable();
        assert_eq!(kept, ["gist", "repo"], "two keys that read the same keep both values");
        assert_eq!(value["to"], json!({ "[REDACTED:gateway-admin-token]": 1 }));
        assert!(scan(&value).is_empty(), "redaction is final");
        let all = value.to_string();
        assert!(
            !all.contains(&a[4..]) && !all.contains(&b[4..]) && !all.contains(&admin[7..]),
            "{all}"
        );
    }

    #[test]
    fn quotes_are_short_single_lines_without_credentials() {
        let gh = format!("ghp_{}", alnum(36, 43));
        assert_eq!(quote("fs:read_file"), "fs:read_file");
        assert_eq!(quote(&format!("a\n  b {gh}")), "a b [REDACTED:github-token]");
        let q = quote(&"k".repeat(1 << 20));
        assert!(q.chars().count() <= QUOTE_CHARS, "{q}");
        let q = quote(&format!("see {gh} and {}", "x ".repeat(600)));
        assert!(q.starts_with("see [REDACTED:github-token] and x x"), "{q}");
        assert!(q.ends_with('…') && q.chars().count() <= QUOTE_CHARS, "{q}");
        // A credential the window cuts short is no longer found: its word
        // goes, or its first half would be quoted.
        let cut = format!("{}{gh}", " ".repeat(QUOTE_WINDOW - 20));
        assert_eq!(quote(&cut), "…");
        let line = format!("{gh} {}", "y".repeat(2000));
        assert_eq!(redacted_head(&line, 100), "[REDACTED:github-token]…");
        assert_eq!(redacted_head("short", 100), "short");
    }

    #[test]
    fn credentials_are_cut_out_of_text_that_is_kept() {
        let gh = format!("ghp_{}", alnum(36, 44));
        assert_eq!(
            cut_out(&format!("list repos with {gh} please")),
            "list repos with   please"
        );
        assert_eq!(cut_out("list my repos"), "list my repos");
        assert_eq!(redacted("no secret"), "no secret");
        assert_eq!(redacted(&format!("{gh}!")), "[REDACTED:github-token]!");
    }

    #[test]
    fn redact_text_marks_each_credential() {
        assert_eq!(redact_text("nothing to see"), None);
        let text = format!("id AKIA{}, db https://u:{}@h/x", noise(UPPER, 16, 36), alnum(16, 37));
        let (clean, kinds) = redact_text(&text).expect("two credentials");
        assert_eq!(
            clean,
            "id [REDACTED:aws-access-key], db https://u:[REDACTED:url-password]@h/x"
        );
        assert_eq!(kinds, ["aws-access-key", "url-password"]);
    }
}
