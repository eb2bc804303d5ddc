//! Discovery results as cards (each also as Markdown and as an HTML
//! `<section>` built from escaped text) and a one-line summary: pure
//! functions of the API's answer and the VibeChecks. Intent payloads are
//! cut short and e-mail addresses never leave this module.

use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;
use serde_json::{Value, json};

use super::protocol::{Intent, Match, Pagination};
use super::vibecheck::{Status, VibeCheck};
use vocab::mask::hide_emails;
use vocab::text::{escape_html, one_line, truncate};

/// Longest intent payload shown on a card.
const PAYLOAD_CHARS: usize = 160;
/// Longest self-introduction shown on a card.
const INTRO_CHARS: usize = 200;
/// Intents listed per card.
const INTENTS_SHOWN: usize = 5;
/// Matches named in the summary line.
pub(super) const NAMES_SHOWN: usize = 3;
/// Longest name in the summary line.
const NAME_CHARS: usize = 40;

/// `[label](href)` in a VibeCheck synthesis.
static MARKDOWN_LINK: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\[([^\]\n]+)\]\(([^)\s]+)\)").unwrap());

/// Removes what must not reach the model: the e-mail field, and addresses
/// inside names, introductions, intents and reasonings.
pub(super) fn redact(m: &mut Match) {
    m.user.email = None;
    m.user.name = hide_emails(&m.user.name);
    if let Some(intro) = &mut m.user.intro {
        *intro = hide_emails(intro);
    }
    for mi in &mut m.intents {
        redact_intent(&mut mi.intent);
        for r in &mut mi.reasonings {
            *r = hide_emails(r);
        }
    }
}

/// Hides the e-mail addresses in an intent's text (a generated intent's too).
pub(super) fn redact_intent(intent: &mut Intent) {
    intent.payload = hide_emails(&intent.payload);
    if let Some(summary) = &mut intent.summary {
        *summary = hide_emails(summary);
    }
}

/// One match, ready to render.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Card {
    /// Who.
    pub header: Header,
    /// Why they match.
    pub body: Body,
    /// What the user can do next.
    pub actions: Vec<Action>,
    /// The same card in Markdown.
    pub markup: String,
    /// The same card as an HTML `<section>`, every piece of text escaped
    /// (only `http(s)` links of the synthesis become anchors).
    pub html: String,
}

/// Card header.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Header {
    /// The person's name.
    pub title: String,
    /// Their introduction, shortened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subtitle: Option<String>,
    /// The first badge (`"3 intents"`), for renderers that show one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub badge: Option<String>,
    /// Every badge, including error states such as `"VibeCheck unavailable"`.
    pub badges: Vec<String>,
    /// Avatar image the widget may load: an `https` URL from one of
    /// `[index] avatar_origins` (declared in the widget's CSP), or a
    /// `data:image/` URL; absent otherwise (the widget shows `initials`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub avatar: Option<String>,
    /// Up to two initials for a placeholder avatar.
    pub initials: String,
    /// Their user ID.
    pub user_id: String,
}

/// Card body.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Body {
    /// The shared intents as a numbered list.
    pub context: String,
    /// Key figures.
    pub stats: Vec<Stat>,
    /// The VibeCheck paragraph (Markdown with links), or why there is none.
    pub vibecheck: String,
    /// Whether `vibecheck` is a real synthesis.
    pub vibecheck_available: bool,
}

/// A labelled figure.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Stat {
    /// What it counts.
    pub label: String,
    /// The figure.
    pub value: Value,
}

/// A suggested next step.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Action {
    /// Button text.
    pub label: String,
    /// What it does.
    pub hint: String,
    /// Machine name.
    pub action: String,
    /// What it acts on.
    pub payload: Value,
}

/// The card of `m`; `check` is its VibeCheck. `avatar_allowed` says whether
/// the widget may load an `https` avatar URL (its origin is declared).
pub(super) fn card(m: &Match, check: &VibeCheck, avatar_allowed: impl Fn(&str) -> bool) -> Card {
    let user = &m.user;
    let title = one_line(&hide_emails(user.name.trim()));
    let title = if title.is_empty() {
        "Unknown collaborator".to_string()
    } else {
        title
    };
    let n = m.intents.len();
    let mut badges = Vec::new();
    if n > 0 {
        badges.push(format!("{n} {}", if n == 1 { "intent" } else { "intents" }));
    }
    let (vibecheck, available) = match check.status {
        Status::Ok => (hide_emails(check.synthesis.trim()), true),
        Status::Skipped => ("No VibeCheck for your own profile.".to_string(), false),
        Status::Empty | Status::Failed => {
            badges.push("VibeCheck unavailable".to_string());
            ("VibeCheck summary unavailable.".to_string(), false)
        }
    };
    let intents: Vec<String> = m
        .intents
        .iter()
        .take(INTENTS_SHOWN)
        .map(|mi| {
            let text = mi.intent.summary.as_deref().unwrap_or(&mi.intent.payload);
            truncate(&one_line(&hide_emails(text)), PAYLOAD_CHARS)
        })
        .collect();
    let more = (n > INTENTS_SHOWN).then(|| format!("… and {} more", n - INTENTS_SHOWN));
    let context = if n == 0 {
        NO_INTENTS.to_string()
    } else {
        let mut lines: Vec<String> = intents
            .iter()
            .enumerate()
            .map(|(i, text)| format!("{}. {}", i + 1, escape_markdown(text)))
            .collect();
        lines.extend(more.clone());
        lines.join("\n")
    };
    let stats = vec![
        Stat {
            label: "Shared intents".into(),
            value: json!(n),
        },
        Stat {
            label: "Total stake".into(),
            value: json!((m.total_stake * 100.0).round() / 100.0),
        },
    ];
    let subtitle = user
        .intro
        .as_deref()
        .map(|i| truncate(&one_line(&hide_emails(i)), INTRO_CHARS))
        .filter(|i| !i.is_empty());
    let payload = json!({ "userId": user.id });
    let actions = vec![
        Action {
            label: "Connect".into(),
            hint: "Start a connection workflow".into(),
            action: "connect".into(),
            payload: payload.clone(),
        },
        Action {
            label: "Save".into(),
            hint: "Save this match for later review".into(),
            action: "save".into(),
            payload,
        },
    ];
    let header = Header {
        initials: initials(&title),
        badge: badges.first().cloned(),
        badges,
        subtitle,
        avatar: user
            .avatar
            .as_deref()
            .map(str::trim)
            .filter(|a| a.starts_with("data:image/") || avatar_allowed(a))
            .map(str::to_string),
        user_id: user.id.clone(),
        title,
    };
    let markup = markup(&header, &context, &stats, &vibecheck);
    let html = html(&header, &intents, more.as_deref(), &stats, &vibecheck);
    Card {
        header,
        body: Body {
            context,
            stats,
            vibecheck,
            vibecheck_available: available,
        },
        actions,
        markup,
        html,
    }
}

/// Shown when a match shares no intents (yet).
const NO_INTENTS: &str = "No shared intents found yet.";

/// The card as `<section class="index-card">`: every text escaped, no
/// attribute but the user id, the link targets and `rel`.
fn html(header: &Header, intents: &[String], more: Option<&str>, stats: &[Stat], vibecheck: &str) -> String {
    let mut h = format!(
        "<section class=\"index-card\" data-user-id=\"{}\"><h3>{}",
        escape_html(&header.user_id),
        escape_html(&header.title)
    );
    if !header.badges.is_empty() {
        h.push_str(&format!(" <small>({})</small>", escape_html(&header.badges.join(", "))));
    }
    h.push_str("</h3>");
    if let Some(subtitle) = &header.subtitle {
        h.push_str(&format!("<p>{}</p>", escape_html(subtitle)));
    }
    if intents.is_empty() {
        h.push_str(&format!("<p>{NO_INTENTS}</p>"));
    } else {
        h.push_str("<ol>");
        for intent in intents {
            h.push_str(&format!("<li>{}</li>", escape_html(intent)));
        }
        h.push_str("</ol>");
        if let Some(more) = more {
            h.push_str(&format!("<p>{}</p>", escape_html(more)));
        }
    }
    h.push_str("<ul>");
    for s in stats {
        h.push_str(&format!(
            "<li>{}: {}</li>",
            escape_html(&s.label),
            escape_html(&s.value.to_string())
        ));
    }
    h.push_str(&format!("</ul><p><em>{}</em></p></section>", linked_html(vibecheck)));
    h
}

/// Escaped text whose Markdown links with an `http(s)` target become
/// anchors; any other link keeps only its label. Lines break with `<br>`.
fn linked_html(text: &str) -> String {
    let anchor = |label: &str, href: &str| {
        format!(
            "<a href=\"{}\" rel=\"noopener noreferrer\">{}</a>",
            escape_html(href),
            escape_html(label)
        )
    };
    linked(text, escape_html, anchor).replace('\n', "<br>")
}

/// The card in Markdown: every text another person wrote (name,
/// introduction, intents in `context`) escaped, so none becomes a link or
/// markup in a client that renders it; the synthesis keeps its `http(s)`
/// links, as the HTML card does.
fn markup(header: &Header, context: &str, stats: &[Stat], vibecheck: &str) -> String {
    let mut md = format!("### {}", escape_markdown(&header.title));
    if !header.badges.is_empty() {
        md.push_str(&format!(" ({})", header.badges.join(", ")));
    }
    if let Some(subtitle) = &header.subtitle {
        md.push_str(&format!("\n{}", escape_markdown(subtitle)));
    }
    md.push_str(&format!("\n{context}"));
    for s in stats {
        md.push_str(&format!("\n- {}: {}", s.label, s.value));
    }
    md.push_str(&format!("\n\n_{}_", linked_markdown(vibecheck)));
    md
}

/// Escaped Markdown whose links with an `http(s)` target stay links (their
/// labels escaped); any other link keeps only its label.
fn linked_markdown(text: &str) -> String {
    linked(text, escape_markdown, |label, href| {
        format!("[{}]({href})", escape_markdown(label))
    })
}

/// `text`, escaped by `escape`, with its Markdown links to `http(s)`
/// targets made by `link(label, href)` and any other link left as its label.
fn linked(text: &str, escape: fn(&str) -> String, link: impl Fn(&str, &str) -> String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for found in MARKDOWN_LINK.captures_iter(text) {
        let (whole, label, href) = (&found[0], &found[1], &found[2]);
        let start = found.get(0).map_or(at, |w| w.start());
        out.push_str(&escape(&text[at..start]));
        match web_link(href) {
            true => out.push_str(&link(label, href)),
            false => out.push_str(&escape(label)),
        }
        at = start + whole.len();
    }
    out.push_str(&escape(&text[at..]));
    out
}

/// Whether a link's target is a web page (`http(s)`), the only kind a card links to.
fn web_link(href: &str) -> bool {
    let lower = href.to_ascii_lowercase();
    lower.starts_with("https://") || lower.starts_with("http://")
}

/// `"Ada Lovelace"` → `"AL"`; `"ada"` → `"A"`.
pub(super) fn initials(name: &str) -> String {
    name.split_whitespace()
        .filter_map(|w| w.chars().find(|c| c.is_alphanumeric()))
        .take(2)
        .flat_map(char::to_uppercase)
        .collect()
}

/// Where to go from this page: flags, page numbers, and the exact arguments
/// for the neighbouring pages (with the resolved intent IDs, so following a
/// page never creates intents again).
pub(super) fn page_hint(pagination: &Pagination, arguments: &Value) -> Value {
    let page = pagination.page;
    let with_page = |p: u64| {
        let mut a = arguments.clone();
        a["page"] = json!(p);
        a
    };
    json!({
        "hasNext": pagination.has_next,
        "hasPrev": pagination.has_prev,
        "nextPage": pagination.has_next.then_some(page + 1),
        "prevPage": (pagination.has_prev && page > 1).then(|| page - 1),
        "nextArguments": pagination.has_next.then(|| with_page(page + 1)),
        "prevArguments": (pagination.has_prev && page > 1).then(|| with_page(page - 1)),
    })
}

/// What the summary line reports.
#[derive(Debug, Clone)]
pub(super) struct Facts {
    /// Intents created from the input (`None`: existing intents were used).
    pub generated: Option<usize>,
    /// Intents matched from.
    pub intents: usize,
    /// Matches on this page.
    pub matches: usize,
    /// Page position.
    pub pagination: Pagination,
    /// Matches whose VibeCheck is missing.
    pub unavailable: usize,
    /// Matches that had a VibeCheck attempted.
    pub checked: usize,
    /// Fresh intents whose matches may still be computed.
    pub still_arriving: bool,
    /// The matches' names (card titles), best first; the first
    /// [`NAMES_SHOWN`] are named.
    pub names: Vec<String>,
}

/// `Ada, Grace and Alan`, or `Ada, Grace, Alan and 9 more`: the first
/// [`NAMES_SHOWN`] of `total` matches, each on one line, cut to
/// [`NAME_CHARS`] and Markdown-escaped (a name cannot become a link).
pub(super) fn first_names(names: &[String], total: usize) -> String {
    let shown: Vec<String> = names
        .iter()
        .take(NAMES_SHOWN)
        .map(|n| escape_markdown(&truncate(&one_line(n), NAME_CHARS)))
        .collect();
    let more = total.saturating_sub(shown.len());
    match (shown.split_last(), more) {
        (None, _) => String::new(),
        (Some((only, [])), 0) => only.clone(),
        (Some((last, rest)), 0) => format!("{} and {last}", rest.join(", ")),
        (Some(_), more) => format!("{} and {more} more", shown.join(", ")),
    }
}

/// Backslash before each character that starts Markdown or HTML markup
/// (`#` and `!` too: a heading, an image).
fn escape_markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' | '!' | '(' | ')'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `Generated 2 intents · Found 3 matches · page 1 (more on page 2) · VibeCheck …`.
pub(super) fn summary(f: &Facts) -> String {
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut parts = Vec::new();
    match f.generated {
        Some(n) => parts.push(format!("Generated {} from your input", plural(n, "intent", "intents"))),
        None => parts.push(format!(
            "Used {}",
            plural(f.intents, "existing intent", "existing intents")
        )),
    }
    let found = plural(f.matches, "match", "matches");
    parts.push(match first_names(&f.names, f.matches) {
        names if names.is_empty() => format!("Found {found}"),
        names => format!("Found {found}: {names}"),
    });
    let p = &f.pagination;
    let mut page = format!("page {} (up to {} per page", p.page, p.limit);
    if p.has_next {
        page.push_str(&format!("; more on page {}", p.page + 1));
    }
    if p.has_prev && p.page > 1 {
        page.push_str(&format!("; previous is page {}", p.page - 1));
    }
    if !p.has_next {
        page.push_str("; no further pages");
    }
    page.push(')');
    parts.push(page);
    if f.checked > 0 {
        if f.unavailable == 0 {
            parts.push(format!(
                "VibeCheck summaries attached for {}",
                if f.checked == 1 {
                    "the match".into()
                } else {
                    format!("all {}", f.checked)
                }
            ));
        } else {
            parts.push(format!(
                "VibeCheck unavailable for {}",
                plural(f.unavailable, "candidate", "candidates")
            ));
        }
    }
    if f.still_arriving {
        parts.push("matches for new intents may still be arriving; call again in a few seconds".into());
    }
    let mut text = parts.join(" · ");
    if f.matches > 0 {
        text.push_str(". Cards follow.");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Intent, MatchedIntent, User};

    fn a_match(name: &str, intents: usize) -> Match {
        Match {
            user: User {
                id: "u1".into(),
                name: name.into(),
                email: Some("ada@example.com".into()),
                avatar: None,
                intro: Some("Engineer; write to ada@example.com".into()),
            },
            total_stake: 12.345,
            intents: (0..intents)
                .map(|i| MatchedIntent {
                    intent: Intent {
                        id: format!("i{i}"),
                        payload: format!("{} contact me at x.y@mail.example.org", "long text ".repeat(30)),
                        summary: None,
                        created_at: "2025-12-01T00:00:00.000Z".into(),
                        extra: Default::default(),
                    },
                    total_stake: 1.0,
                    reasonings: vec![],
                })
                .collect(),
            extra: Default::default(),
        }
    }

    fn check(status: Status, synthesis: &str) -> VibeCheck {
        VibeCheck {
            target_user_id: "u1".into(),
            synthesis: synthesis.into(),
            character_limit: None,
            status,
        }
    }

    #[test]
    fn a_card_has_header_body_actions_and_markup() {
        let c = card(
            &a_match("Ada Lovelace", 2),
            &check(
                Status::Ok,
                "You could [build engines](https://index.network/intents/i0) together.",
            ),
            |_| false,
        );
        assert_eq!(c.header.title, "Ada Lovelace");
        assert_eq!(c.header.initials, "AL");
        assert_eq!(c.header.badge.as_deref(), Some("2 intents"));
        assert_eq!(c.header.badges, vec!["2 intents"]);
        assert!(c.body.vibecheck_available);
        assert_eq!(c.body.stats[1].value, json!(12.35));
        assert_eq!(c.actions[0].payload, json!({ "userId": "u1" }));
        assert!(c.markup.starts_with("### Ada Lovelace (2 intents)\n"));
        assert!(
            c.markup
                .ends_with("_You could [build engines](https://index.network/intents/i0) together._")
        );
        assert!(c.markup.contains("\n- Shared intents: 2\n- Total stake: 12.35"));
    }

    /// Issue #72 (1): what another person wrote never becomes a link or
    /// markup in the Markdown card; the synthesis keeps its web links only.
    #[test]
    fn markdown_cards_escape_what_people_wrote() {
        let mut m = a_match("[x](https://evil.example) <b>Eve</b>", 1);
        m.user.intro = Some("![pixel](https://evil.example/p.png) # Boss".into());
        m.intents[0].intent.summary = Some("[click](https://evil.example/i) *now*".into());
        let c = card(
            &m,
            &check(
                Status::Ok,
                "See [her work](https://index.network/u) or [this](javascript:alert(1)).",
            ),
            |_| false,
        );
        let md = &c.markup;
        assert!(
            md.starts_with("### \\[x\\]\\(https://evil.example\\) \\<b\\>Eve\\</b\\>"),
            "{md}"
        );
        assert!(
            md.contains("\n\\!\\[pixel\\]\\(https://evil.example/p.png\\) \\# Boss\n"),
            "{md}"
        );
        assert!(
            md.contains("1. \\[click\\]\\(https://evil.example/i\\) \\*now\\*"),
            "{md}"
        );
        // (The link's target stops at its first `)`; what is left is text.)
        assert!(
            md.ends_with("_See [her work](https://index.network/u) or this\\)._"),
            "{md}"
        );
        assert!(!md.contains("](https://evil") && !md.contains("<b>"), "{md}");
    }

    #[test]
    fn payloads_are_cut_and_emails_never_shown() {
        let c = card(&a_match("Ada", 7), &check(Status::Ok, "mail ada@example.com"), |_| {
            false
        });
        let all = serde_json::to_string(&c).unwrap();
        assert!(
            !all.contains("@example.com") && !all.contains("@mail.example.org"),
            "{all}"
        );
        assert!(all.contains(vocab::mask::EMAIL_HIDDEN));
        let first = c.body.context.lines().next().unwrap();
        assert!(first.chars().count() <= PAYLOAD_CHARS + 3, "{first}");
        assert!(c.body.context.ends_with("… and 2 more"));
    }

    #[test]
    fn missing_vibecheck_is_a_badge_not_an_error() {
        let c = card(&a_match("", 1), &check(Status::Failed, ""), |_| false);
        assert_eq!(c.header.title, "Unknown collaborator");
        assert_eq!(c.header.badges, vec!["1 intent", "VibeCheck unavailable"]);
        assert_eq!(c.body.vibecheck, "VibeCheck summary unavailable.");
        let own = card(&a_match("Me", 1), &check(Status::Skipped, ""), |_| false);
        assert_eq!(own.header.badges, vec!["1 intent"]);
    }

    #[test]
    fn page_hints_carry_the_next_arguments() {
        let p = Pagination {
            page: 2,
            limit: 10,
            has_next: true,
            has_prev: true,
        };
        let hint = page_hint(&p, &json!({ "intentIds": ["i"], "page": 2, "limit": 10 }));
        assert_eq!(hint["nextPage"], 3);
        assert_eq!(hint["prevPage"], 1);
        assert_eq!(
            hint["nextArguments"],
            json!({ "intentIds": ["i"], "page": 3, "limit": 10 })
        );
        let last = page_hint(
            &Pagination {
                has_next: false,
                has_prev: false,
                page: 1,
                ..p
            },
            &json!({}),
        );
        assert_eq!(last["nextPage"], Value::Null);
        assert_eq!(last["prevArguments"], Value::Null);
    }

    #[test]
    fn summaries_say_what_happened() {
        let pagination = Pagination {
            page: 1,
            limit: 50,
            has_next: true,
            has_prev: false,
        };
        let s = summary(&Facts {
            generated: Some(2),
            intents: 2,
            matches: 3,
            pagination,
            unavailable: 1,
            checked: 3,
            still_arriving: false,
            names: vec!["Ada Lovelace".into(), "Grace Hopper".into(), "Alan Turing".into()],
        });
        assert_eq!(
            s,
            "Generated 2 intents from your input · Found 3 matches: Ada Lovelace, Grace Hopper and Alan Turing · page 1 (up to 50 per page; more on page 2) · VibeCheck unavailable for 1 candidate. Cards follow."
        );
        let empty = summary(&Facts {
            generated: None,
            intents: 1,
            matches: 0,
            pagination: Pagination {
                has_next: false,
                ..pagination
            },
            unavailable: 0,
            checked: 0,
            still_arriving: true,
            names: vec![],
        });
        assert!(
            empty
                .starts_with("Used 1 existing intent · Found 0 matches · page 1 (up to 50 per page; no further pages)")
        );
        assert!(empty.ends_with("call again in a few seconds"));
    }

    #[test]
    fn the_summary_names_the_first_few_matches() {
        let names = |v: &[&str]| v.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        assert_eq!(first_names(&[], 0), "");
        assert_eq!(first_names(&names(&["Ada"]), 1), "Ada");
        assert_eq!(first_names(&names(&["Ada", "Grace"]), 2), "Ada and Grace");
        assert_eq!(
            first_names(&names(&["Ada", "Grace", "Alan", "Edsger"]), 12),
            "Ada, Grace, Alan and 9 more"
        );
        // One line, bounded, and never markup.
        let hostile = names(&[&format!("[click](https://evil.example)\n<b>{}", "x".repeat(100))]);
        let named = first_names(&hostile, 1);
        assert!(
            named.starts_with("\\[click\\]\\(https://evil.example\\) \\<b\\>x"),
            "{named}"
        );
        assert!(!named.contains('\n') && named.chars().count() < 60, "{named}");
    }

    #[test]
    fn html_snippets_are_built_from_escaped_text() {
        let mut m = a_match("<script>alert(1)</script> & \"Bob\"", 6);
        m.user.id = "u1\"><img src=x onerror=alert(1)>".into();
        m.user.intro = Some("<b>bold</b> intro".into());
        m.intents[0].intent.summary = Some("<iframe src=javascript:alert(1)>".into());
        let vibe = "Try [this](javascript:void) or [<b>that</b>](https://index.network/x?a=1&b=\"2\")\n<img src=x>";
        let c = card(&m, &check(Status::Ok, vibe), |_| false);
        let h = &c.html;
        assert!(
            h.starts_with(
                "<section class=\"index-card\" data-user-id=\"u1&quot;&gt;&lt;img src=x onerror=alert(1)&gt;\"><h3>"
            ),
            "{h}"
        );
        assert!(h.ends_with("</em></p></section>"), "{h}");
        for raw in [
            "<script",
            "<img",
            "<iframe",
            "<b>",
            "javascript:void",
            "href=\"javascript",
            "@example",
        ] {
            assert!(!h.contains(raw), "{raw} in {h}");
        }
        assert!(
            h.contains(
                "<h3>&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Bob&quot; <small>(6 intents)</small></h3>"
            ),
            "{h}"
        );
        assert!(
            h.contains("<ol><li>&lt;iframe src=javascript:alert(1)&gt;</li><li>"),
            "{h}"
        );
        assert!(h.contains("<p>… and 1 more</p>"), "{h}");
        assert!(h.contains("<li>Total stake: 12.35</li>"), "{h}");
        assert!(
            h.contains("<em>Try this or <a href=\"https://index.network/x?a=1&amp;b=&quot;2&quot;\" rel=\"noopener noreferrer\">&lt;b&gt;that&lt;/b&gt;</a><br>&lt;img src=x&gt;</em>"),
            "{h}"
        );
        let none = card(&a_match("Ada", 0), &check(Status::Failed, ""), |_| false);
        assert!(
            none.html.contains("<p>No shared intents found yet.</p>"),
            "{}",
            none.html
        );
    }

    #[test]
    fn avatars_only_from_declared_origins() {
        let with = |url: &str| {
            let mut m = a_match("Ada", 1);
            m.user.avatar = Some(url.into());
            card(&m, &check(Status::Ok, "x"), |u| {
                u.starts_with("https://cdn.example.com/")
            })
            .header
            .avatar
        };
        assert_eq!(
            with("https://cdn.example.com/a.png").as_deref(),
            Some("https://cdn.example.com/a.png")
        );
        assert_eq!(with("https://elsewhere.example/a.png"), None);
        assert_eq!(
            with("data:image/png;base64,AAAA").as_deref(),
            Some("data:image/png;base64,AAAA")
        );
        assert_eq!(with("  "), None);
    }

    #[test]
    fn initials_of_names() {
        assert_eq!(initials("ada lovelace byron"), "AL");
        assert_eq!(initials("  ada "), "A");
        assert_eq!(initials(""), "");
    }
}
