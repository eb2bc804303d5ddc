//! The environment of a stdio server: a short allow-list of the gateway's
//! own, what the server's `env_passthrough` names, then its `env`.
//!
//! A child never sees the whole environment, as with the official MCP SDKs'
//! stdio clients (TypeScript `getDefaultEnvironment`, Python
//! `get_default_environment`): the gateway runs with its token, the key that
//! seals every project's credentials, database passwords and cloud keys, and
//! any child may turn hostile.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};

use config::is_gateway_variable;

/// What every child inherits when the gateway has it: the SDKs' Unix list
/// (`HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER`), plus the locale and
/// the temporary folder, which programs need to read text and write files.
const INHERITED: [&str; 9] = [
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LANGUAGE", "TMPDIR",
];

/// Locale variables (`LC_ALL`, `LC_CTYPE`, ...) are inherited by this prefix.
const LOCALE_PREFIX: &str = "LC_";

/// The child's environment: the parent's variables that are on the
/// allow-list or in `passthrough` (minus the gateway's own), then `own`
/// (the server's `env`, with a project's credentials), which wins.
///
/// `own` is passed as written, even for a gateway variable: its values are
/// the operator's, not inherited ones. Allow-listed values that start with
/// `()` are dropped, as the SDKs do: they are exported shell functions.
pub(super) fn child_environment(
    parent: impl IntoIterator<Item = (OsString, OsString)>,
    passthrough: &[String],
    own: &BTreeMap<String, String>,
) -> Vec<(OsString, OsString)> {
    let mut env: BTreeMap<OsString, OsString> = parent
        .into_iter()
        .filter(|(name, value)| {
            let Some(name) = name.to_str() else { return false };
            if is_gateway_variable(name) {
                return false;
            }
            let allowed = (INHERITED.contains(&name) || name.starts_with(LOCALE_PREFIX)) && !is_function(value);
            allowed || passthrough.iter().any(|p| p == name)
        })
        .collect();
    env.extend(own.iter().map(|(k, v)| (k.into(), v.into())));
    env.into_iter().collect()
}

/// Whether a value is a shell function exported by bash (`() { …; }`).
fn is_function(value: &OsStr) -> bool {
    value.as_encoded_bytes().starts_with(b"()")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parent() -> Vec<(OsString, OsString)> {
        [
            ("PATH", "/usr/bin:/bin"),
            ("HOME", "/home/op"),
            ("LANG", "de_DE.UTF-8"),
            ("LC_TIME", "C"),
            ("TMPDIR", "/tmp/op"),
            ("MCP_GATEWAY_TOKEN", "mgw_1_x"),
            ("MCP_GATEWAY_SECRET_KEY", "k"),
            ("RUST_LOG", "debug"),
            ("PGPASSWORD", "pw"),
            ("AWS_SECRET_ACCESS_KEY", "cloud"),
            ("SHELL", "() { :; }; echo pwned"),
            ("EXTRA", "extra"),
        ]
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect()
    }

    fn names(env: &[(OsString, OsString)]) -> Vec<&str> {
        env.iter().map(|(k, _)| k.to_str().unwrap()).collect()
    }

    #[test]
    fn a_child_inherits_only_the_allow_list() {
        let env = child_environment(parent(), &[], &BTreeMap::new());
        assert_eq!(names(&env), ["HOME", "LANG", "LC_TIME", "PATH", "TMPDIR"]);
    }

    #[test]
    fn passthrough_adds_names_but_never_the_gateways_own() {
        let passthrough = ["PGPASSWORD", "EXTRA", "MCP_GATEWAY_SECRET_KEY", "RUST_LOG", "ABSENT"].map(String::from);
        let env = child_environment(parent(), &passthrough, &BTreeMap::new());
        assert_eq!(
            names(&env),
            ["EXTRA", "HOME", "LANG", "LC_TIME", "PATH", "PGPASSWORD", "TMPDIR"]
        );
    }

    #[test]
    fn the_servers_own_env_wins_and_is_passed_as_written() {
        let own = BTreeMap::from([
            ("HOME".to_string(), "/srv/child".to_string()),
            ("RUST_LOG".to_string(), "warn".to_string()),
            ("API_KEY".to_string(), "abc".to_string()),
        ]);
        let env = child_environment(parent(), &[], &own);
        let get = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.to_str().unwrap());
        assert_eq!(get("HOME"), Some("/srv/child"));
        assert_eq!(get("RUST_LOG"), Some("warn"), "set by the operator, not inherited");
        assert_eq!(get("API_KEY"), Some("abc"));
        assert_eq!(env.iter().filter(|(k, _)| k == "HOME").count(), 1);
    }
}
