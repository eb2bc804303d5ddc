//! Secrets (and e-mail addresses) in text shown to people: a URL's password and secret-looking
//! parameters masked wherever a URL is logged, stored as a server's last
//! error or shown by the CLI and the console, and the key names that mark a
//! secret (shared with the `leaks` crate).
//!
//! A user name stays (`postgres://gw:***@db/gw`): it tells the operator which
//! account, and is not the secret.

use std::sync::LazyLock;

use regex::Regex;

/// What a masked value reads as.
pub(crate) const MASK: &str = "***";

/// Whole words that make a key name a secret (too short or too common to match inside other words).
const SECRET_WORDS: &[&str] = &["auth", "creds", "pass", "pwd", "session", "token"];
/// The same for a URL's parameters, which also name API keys and signatures
/// in one short word (`?key=`, Azure's `?sig=`, S3's `X-Amz-Signature`).
const URL_SECRET_WORDS: &[&str] = &["key", "sig", "signature"];
/// Parts of a key's words run together that make it a secret (`x-api-key` → `xapikey`).
#[rustfmt::skip]
const SECRET_PARTS: &[&str] = &[
    "password", "passwd", "passphrase", "secret", "credential", "authorization", "bearer", "cookie", "apikey",
    "accesskey", "privatekey", "signingkey", "encryptionkey", "accesstoken", "refreshtoken", "authtoken", "idtoken",
    "sessionid",
];
/// Words that make a key about paging, counting or describing a secret rather than holding one.
#[rustfmt::skip]
const NOT_SECRET_WORDS: &[&str] = &[
    "count", "cursor", "endpoint", "expiration", "expires", "expiry", "file", "hint", "len", "length", "limit", "max",
    "min", "name", "next", "num", "offset", "page", "path", "prev", "previous", "remaining", "tokens", "total", "ttl",
    "type", "uri", "url", "used", "id", "ids",
];
/// The same, for keys written as one lower-case word.
#[rustfmt::skip]
const NOT_SECRET_PARTS: &[&str] = &["pagetoken", "nexttoken", "maxtokens", "tokencount", "tokentype", "tokensused"];

/// Whether a JSON object key names a secret (password, secret, token, api_key, apiKey, access_key,
/// private_key, client_secret, authorization, credential(s), passphrase, bearer, session/cookie,
/// x-api-key ...), normalising case and `-`/`_`/camelCase. Keys about paging or counting are not
/// secrets: page_token, next_token, nextPageToken, cursor, max_tokens, token_count, tokens_used,
/// token_type, etc.
pub fn secret_like_name(key: &str) -> bool {
    names_secret(key, &[])
}

/// [`secret_like_name`], where `extra` are more whole words that name a secret.
///
/// It runs on every key of every call's arguments and result (`leaks::scan`),
/// so the lists are slices, not text split on each call.
fn names_secret(key: &str, extra: &[&str]) -> bool {
    let words = words(key);
    let joined = words.concat();
    let has_word = |list: &[&str]| words.iter().any(|word| list.contains(&word.as_str()));
    let has_part = |list: &[&str]| list.iter().any(|part| joined.contains(part));
    // An id names a secret without being one (`token_id`, `keyId`), but a session id is the session.
    let vetoed = !joined.contains("sessionid") && (has_word(NOT_SECRET_WORDS) || has_part(NOT_SECRET_PARTS));
    !vetoed && (has_word(SECRET_WORDS) || has_word(extra) || has_part(SECRET_PARTS))
}

/// A key's words, lower-cased: split at anything not a letter or digit and at camelCase humps
/// (`nextPageToken`, `APIKey`).
fn words(key: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = key.chars().peekable();
    let mut prev: Option<char> = None;
    while let Some(c) = chars.next() {
        let next = chars.peek();
        // `tT`, `2T`, or an acronym's last capital before a lower-case letter (`APIKey`)
        let hump = c.is_uppercase()
            && prev.is_some_and(|p| {
                p.is_lowercase() || p.is_ascii_digit() || (p.is_uppercase() && next.is_some_and(|n| n.is_lowercase()))
            });
        if (hump || !c.is_alphanumeric()) && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        }
        prev = Some(c);
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// `url` with its password and the values of secret-looking query and
/// fragment parameters as [`MASK`]; the scheme, user name, host, path and
/// every other parameter stay as written, so the operator can tell which
/// server it is. Text that is not a URL comes back unchanged.
pub fn url(url: &str) -> String {
    let Some(scheme) = url.find("://") else {
        return url.to_string();
    };
    let (head, rest) = url.split_at(scheme + 3);
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    // The host cannot hold an '@', so the last one in the authority ends the
    // user information. A password pasted with a raw '/', '?' or '#' ends the
    // authority early; a ':' followed by no port shows it, and then the user
    // information runs to the last '@'.
    let userinfo_end = authority.rfind('@').or_else(|| {
        let password = !authority.starts_with('[')
            && authority
                .split_once(':')
                .is_some_and(|(_, port)| !port.bytes().all(|b| b.is_ascii_digit()));
        password.then(|| rest.rfind('@')).flatten()
    });
    let mut out = String::with_capacity(url.len());
    out.push_str(head);
    let rest = match userinfo_end {
        Some(at) => {
            let userinfo = &rest[..at];
            match userinfo.split_once(':') {
                Some((user, _password)) => {
                    out.push_str(user);
                    out.push(':');
                    out.push_str(MASK);
                }
                None => out.push_str(userinfo),
            }
            out.push('@');
            &rest[at + 1..]
        }
        None => rest,
    };
    let (host, tail) = rest.split_at(rest.find(['/', '?', '#']).unwrap_or(rest.len()));
    out.push_str(host);
    let (before_fragment, fragment) = match tail.split_once('#') {
        Some((before, fragment)) => (before, Some(fragment)),
        None => (tail, None),
    };
    let (path, query) = match before_fragment.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (before_fragment, None),
    };
    out.push_str(path);
    // A fragment may carry parameters too (an OAuth implicit grant's `#access_token=`).
    for (mark, params) in [('?', query), ('#', fragment)] {
        if let Some(params) = params {
            out.push(mark);
            mask_params(params, &mut out);
        }
    }
    out
}

/// `a=1&token=x` as `a=1&token=***` onto `out`.
fn mask_params(params: &str, out: &mut String) {
    for (i, pair) in params.split('&').enumerate() {
        if i > 0 {
            out.push('&');
        }
        match pair.split_once('=') {
            Some((name, value)) if !value.is_empty() && names_secret(name, URL_SECRET_WORDS) => {
                out.push_str(name);
                out.push('=');
                out.push_str(MASK);
            }
            _ => out.push_str(pair),
        }
    }
}

/// `text` with every URL in it masked by [`url`]: error texts of HTTP
/// clients and transports quote the URL they failed on
/// (`error sending request for url (http://alice:…@host/mcp)`).
pub fn urls_in(text: &str) -> String {
    // Most texts (every access log line) hold no URL: one substring search
    // is a fraction of the regex's pass.
    if !text.contains("://") {
        return text.to_string();
    }
    // Any scheme (http, postgres, redis, wss …), up to whitespace or a quote.
    static URL: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#"(?-u:\b)[A-Za-z][A-Za-z0-9+.-]*://[^\s"<>`]+"#).expect("regex"));
    URL.replace_all(text, |caps: &regex::Captures<'_>| {
        let found = &caps[0];
        let (inner, after) = found.split_at(url_end(found));
        url(inner) + after
    })
    .into_owned()
}

/// Where a URL found in prose ends: punctuation after it belongs to the
/// sentence, and so does a `)` that closes a parenthesis opened before it.
fn url_end(found: &str) -> usize {
    let mut end = found.len();
    loop {
        let kept = &found[..end];
        let closes_outer = kept.ends_with(')') && kept.matches(')').count() > kept.matches('(').count();
        match kept.chars().last() {
            Some('.' | ',' | ';' | ':' | '!' | '?' | '\'') => end -= 1,
            Some(')') if closes_outer => end -= 1,
            _ => return end,
        }
    }
}

/// Shown instead of an e-mail address.
pub const EMAIL_HIDDEN: &str = "[email hidden]";

static EMAIL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}").unwrap());

/// `text` with each e-mail address replaced: people's addresses are not
/// for the model or the logs (the Index built-in's cards, syntheses and
/// error snippets).
pub fn hide_emails(text: &str) -> String {
    EMAIL.replace_all(text, EMAIL_HIDDEN).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_are_told_from_paging_and_counting() {
        let secret = "password DB_PASSWORD secret token access_token accessToken GITHUB_TOKEN api_key apiKey API_KEY \
            x-api-key X-Api-Key access_key aws_secret_access_key privateKey client_secret Authorization credentials \
            passphrase bearer sessionId session_id Set-Cookie pwd";
        let not_secret = "page_token next_token nextPageToken pageToken cursor max_tokens maxTokens token_count \
            tokens_used token_type password_hint tokenizer author bypass token_url tokenId key_id secret_ids";
        for key in secret.split_whitespace() {
            assert!(secret_like_name(key), "{key}");
        }
        for key in not_secret.split_whitespace().chain([""]) {
            assert!(!secret_like_name(key), "{key}");
        }
    }

    #[test]
    fn a_urls_password_and_secret_parameters_are_masked() {
        let cases = [
            (
                "http://alice:hunter2@127.0.0.1:9/mcp?api_key=sk-live-XYZ&x=1",
                "http://alice:***@127.0.0.1:9/mcp?api_key=***&x=1",
            ),
            ("postgres://gw:s3cret@db:5432/gw", "postgres://gw:***@db:5432/gw"),
            ("postgres://gw@db/gw", "postgres://gw@db/gw"),
            (
                "postgresql://db/gw?user=x&password=y&sslmode=require",
                "postgresql://db/gw?user=x&password=***&sslmode=require",
            ),
            // every name that holds a secret, in any case; names that only describe one stay
            (
                "https://h/p?KEY=a&Token=b&access_token=c&client_secret=d&sig=e&X-Amz-Signature=f&auth=g&pwd=h",
                "https://h/p?KEY=***&Token=***&access_token=***&client_secret=***&sig=***&X-Amz-Signature=***&auth=***&pwd=***",
            ),
            (
                "https://h/p?token_type=bearer&key_id=7&page_token=2&author=me&q=key",
                "https://h/p?token_type=bearer&key_id=7&page_token=2&author=me&q=key",
            ),
            (
                "https://h/cb#access_token=a&state=s",
                "https://h/cb#access_token=***&state=s",
            ),
            // a path with an '@' is not user information
            (
                "https://registry.example/@scope/pkg?v=1",
                "https://registry.example/@scope/pkg?v=1",
            ),
            ("https://u:p@ss@h/", "https://u:***@h/"),
            // a password pasted unencoded; a port is not one
            ("postgres://gw:pa/s?s#@db/gw", "postgres://gw:***@db/gw"),
            ("https://h:8443/@scope/pkg", "https://h:8443/@scope/pkg"),
            ("http://[::1]:8080/@x", "http://[::1]:8080/@x"),
            ("https://example.com/mcp", "https://example.com/mcp"),
            ("not a url", "not a url"),
        ];
        for (raw, shown) in cases {
            assert_eq!(url(raw), shown, "{raw}");
        }
    }

    #[test]
    fn urls_in_free_text_are_masked_and_the_text_around_them_kept() {
        let text = "cannot connect to http://alice:hunter2@127.0.0.1:9/mcp?api_key=sk-live-XYZ&x=1: \
            error sending request for url (http://alice:hunter2@127.0.0.1:9/mcp?api_key=sk-live-XYZ&x=1).";
        assert_eq!(
            urls_in(text),
            "cannot connect to http://alice:***@127.0.0.1:9/mcp?api_key=***&x=1: \
             error sending request for url (http://alice:***@127.0.0.1:9/mcp?api_key=***&x=1)."
        );
        assert_eq!(
            urls_in("'postgres://gw:pw@db/gw' and \"https://h/w?token=t\", see https://h/a_(b)"),
            "'postgres://gw:***@db/gw' and \"https://h/w?token=***\", see https://h/a_(b)"
        );
        assert_eq!(urls_in("no links here: a://"), "no links here: a://");
    }
}
