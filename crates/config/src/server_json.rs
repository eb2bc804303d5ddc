//! A `server.json` from the MCP Registry to a `[[servers]]` entry, for
//! `mcp-gateway add`: `npm` packages run with `npx`, `pypi` with `uvx`, `oci`
//! with `docker run`, each over stdio; `streamable-http` remotes by URL.
//! Secret inputs never reach the file: they come back as [`Secret`]s, for
//! each project to hold (`mcp-gateway secret set`).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Deserializer};

use super::McpServerEntry;

/// The fields of a `server.json` (schema 2025-09-29 and later) that say how
/// to run the server; the rest (`repository`, `icons`, `_meta`…) is ignored.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerJson {
    /// Reverse-DNS name, e.g. `io.github.brave/brave-search-mcp-server`.
    pub name: String,
    /// Display name.
    #[serde(default)]
    pub title: Option<String>,
    /// What the server is for.
    #[serde(default)]
    pub description: Option<String>,
    /// The server's version (not its packages').
    pub version: String,
    /// Packages that run it locally.
    #[serde(default)]
    pub packages: Vec<Package>,
    /// Endpoints where it already runs.
    #[serde(default)]
    pub remotes: Vec<Transport>,
}

/// One package of a server.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Package {
    /// `npm`, `pypi`, `oci`, `nuget` or `mcpb`.
    pub registry_type: String,
    /// A registry other than the type's public one.
    #[serde(default)]
    pub registry_base_url: Option<String>,
    /// Package name, or image reference for `oci`.
    pub identifier: String,
    /// Package version (an `oci` identifier may carry its tag instead).
    #[serde(default)]
    pub version: Option<String>,
    /// How the package speaks MCP; stdio when absent.
    #[serde(default)]
    pub transport: Option<Transport>,
    /// Arguments for the runtime (`npx`, `uvx`, `docker run`).
    #[serde(default)]
    pub runtime_arguments: Vec<Argument>,
    /// Arguments for the package itself.
    #[serde(default)]
    pub package_arguments: Vec<Argument>,
    /// Environment of the process.
    #[serde(default)]
    pub environment_variables: Vec<KeyValue>,
}

/// A package's transport, or a remote.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Transport {
    /// `stdio`, `streamable-http` or `sse`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The endpoint; may hold `{variable}`s.
    #[serde(default)]
    pub url: Option<String>,
    /// Headers to send.
    #[serde(default)]
    pub headers: Vec<KeyValue>,
    /// The URL's variables.
    #[serde(default)]
    pub variables: BTreeMap<String, Input>,
}

/// A value the server takes: fixed, defaulted, or asked for.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Input {
    /// What it is, for the person asked.
    #[serde(default)]
    pub description: Option<String>,
    /// The server does not work without it.
    #[serde(default)]
    pub is_required: bool,
    /// A credential: never written to `gateway.toml`.
    #[serde(default)]
    pub is_secret: bool,
    /// The value, possibly a template of `{variable}`s.
    #[serde(default, deserialize_with = "scalar")]
    pub value: Option<String>,
    /// Used when nobody gives a value.
    #[serde(default, deserialize_with = "scalar")]
    pub default: Option<String>,
    /// The variables of `value`.
    #[serde(default)]
    pub variables: BTreeMap<String, Input>,
}

/// An environment variable or header.
#[derive(Debug, Clone, Deserialize)]
pub struct KeyValue {
    /// Its name.
    pub name: String,
    /// Its value.
    #[serde(flatten)]
    pub input: Input,
}

/// A command-line argument.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Argument {
    /// `positional` or `named`.
    #[serde(rename = "type")]
    pub kind: String,
    /// A named argument's flag, e.g. `--port`.
    #[serde(default)]
    pub name: Option<String>,
    /// A positional argument's name, for whoever fills it in.
    #[serde(default)]
    pub value_hint: Option<String>,
    /// Its value.
    #[serde(flatten)]
    pub input: Input,
}

/// Strings, numbers and booleans alike, as their text (`"default": 8080`).
fn scalar<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Option::<serde_json::Value>::deserialize(d)? {
        Some(serde_json::Value::String(s)) => Some(s),
        Some(serde_json::Value::Null) | None => None,
        Some(other) => Some(other.to_string()),
    })
}

/// Which way of running the server to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A package of this kind, run over stdio.
    Package(Runtime),
    /// A streamable HTTP remote.
    Remote,
}

/// The kinds of package this gateway runs, each with its runner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    /// An npm package, with `npx`.
    Npm,
    /// A PyPI package, with `uvx`.
    Pypi,
    /// An OCI image, with `docker run`.
    Oci,
}

impl Runtime {
    /// The runtime for a package's `registryType`, if it runs here.
    fn of(registry_type: &str) -> Option<Self> {
        match registry_type {
            "npm" => Some(Self::Npm),
            "pypi" => Some(Self::Pypi),
            "oci" => Some(Self::Oci),
            _ => None,
        }
    }

    /// Its `registryType`.
    fn name(self) -> &'static str {
        match self {
            Self::Npm => "npm",
            Self::Pypi => "pypi",
            Self::Oci => "oci",
        }
    }
}

/// Where a secret goes in the project's connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// An environment variable of a command server.
    Env,
    /// A header of a url server.
    Header,
}

/// A credential the server takes, which each project holds as its own.
#[derive(Debug, Clone, PartialEq)]
pub struct Secret {
    /// Env or header.
    pub place: Place,
    /// The variable's or header's name.
    pub name: String,
    /// What the person is asked for: `name`, or the template's variable.
    pub ask: String,
    /// What it is.
    pub description: Option<String>,
    /// The server does not work without it.
    pub required: bool,
    /// The value with `{ask}` where the answer goes (`Bearer {token}`).
    template: Option<String>,
}

impl Secret {
    /// The header's or variable's value, given the answer to [`Secret::ask`].
    pub fn value(&self, answer: &str) -> String {
        match &self.template {
            Some(t) => t.replace(&format!("{{{}}}", self.ask), answer),
            None => answer.to_string(),
        }
    }
}

/// A `server.json` made into a `[[servers]]` entry.
#[derive(Debug, Clone)]
pub struct Converted {
    /// `command`/`args`/`env`, or `url`/`headers`.
    pub entry: McpServerEntry,
    /// Credentials for each project to set.
    pub secrets: Vec<Secret>,
    /// Whether the gateway connects without a project's credential: not
    /// when one is required.
    pub shared: bool,
    /// What was chosen, e.g. `npm package @brave/brave-search-mcp-server@2.0.58`.
    pub chosen: String,
}

/// Why a `server.json` cannot become an entry.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum Error {
    /// Nothing in it runs here.
    #[error(
        "{server} offers {offered}; this gateway runs npm (npx), pypi (uvx) and oci (docker) packages over stdio, and streamable-http remotes"
    )]
    Unrunnable {
        /// The registry name.
        server: String,
        /// What it offers, in words.
        offered: String,
    },
    /// `--from` asked for something it does not offer.
    #[error("{server} has no {wanted}; it offers {offered}")]
    NotOffered {
        /// The registry name.
        server: String,
        /// What was asked for.
        wanted: String,
        /// What it offers, in words.
        offered: String,
    },
    /// Values that have no default and are not secrets.
    #[error("{server} needs {}: pass --set NAME=VALUE for each", needs.iter().map(|(n, d)| match d { Some(d) => format!("{n} ({d})"), None => n.clone() }).collect::<Vec<_>>().join(", "))]
    Needs {
        /// The registry name.
        server: String,
        /// Each value's name and description.
        needs: Vec<(String, Option<String>)>,
    },
    /// A secret on the command line, which no project secret can fill.
    #[error(
        "{server} takes the secret '{name}' in its command line or URL; the gateway keeps secrets out of gateway.toml and gives them to servers only as env variables or headers"
    )]
    SecretArgument {
        /// The registry name.
        server: String,
        /// The argument.
        name: String,
    },
}

/// Values given on the command line (`--set NAME=VALUE`), by the name of the
/// variable, environment variable, header or argument they fill. A sealed
/// value is a secret whatever the document says: it never reaches the file.
#[derive(Debug, Clone, Default)]
pub struct Given {
    values: BTreeMap<String, String>,
    sealed: BTreeSet<String>,
}

impl Given {
    /// No values.
    pub fn new() -> Self {
        Self::default()
    }

    /// Gives `name` `value`, sealed when `secret` (the caller knows it is
    /// one: it was read from stdin) or when the credential scanner
    /// recognises it, so a key the document forgot to mark `isSecret` is
    /// still kept out of the file.
    pub fn insert(&mut self, name: String, value: String, secret: bool) {
        if secret || !leaks::find(&value).is_empty() {
            self.sealed.insert(name.clone());
        } else {
            self.sealed.remove(&name);
        }
        self.values.insert(name, value);
    }

    /// The value given for `name`, sealed or not.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// The value given for `name`, unless it is sealed: one the file may hold.
    fn plain(&self, name: &str) -> Option<&String> {
        self.values.get(name).filter(|_| !self.sealed.contains(name))
    }

    fn is_sealed(&self, name: &str) -> bool {
        self.sealed.contains(name)
    }
}

impl FromIterator<(String, String)> for Given {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(pairs: I) -> Self {
        let mut given = Self::new();
        for (name, value) in pairs {
            given.insert(name, value, false);
        }
        given
    }
}

/// Makes `doc` an entry, running it the way `from` says, else with its first
/// package that runs here, else its first streamable HTTP remote.
pub fn convert(doc: &ServerJson, from: Option<Source>, given: &Given) -> Result<Converted, Error> {
    let mut packages = doc.packages.iter().filter_map(|p| {
        let stdio = p.transport.as_ref().is_none_or(|t| t.kind == "stdio");
        Runtime::of(&p.registry_type).filter(|_| stdio).map(|r| (p, r))
    });
    let remote = doc.remotes.iter().find(|r| r.kind == "streamable-http");
    let not_offered = |wanted: String| Error::NotOffered {
        server: doc.name.clone(),
        wanted,
        offered: offered(doc),
    };
    let mut fill = Filler {
        given,
        needs: Vec::new(),
        secrets: Vec::new(),
        server: &doc.name,
    };
    let (entry, chosen) = match from {
        Some(Source::Remote) => fill.remote(remote.ok_or_else(|| not_offered("streamable-http remote".into()))?)?,
        Some(Source::Package(wanted)) => match packages.find(|(_, r)| *r == wanted) {
            Some((p, r)) => fill.package(p, r)?,
            None => return Err(not_offered(format!("{} package that runs over stdio", wanted.name()))),
        },
        None => match (packages.next(), remote) {
            (Some((p, r)), _) => fill.package(p, r)?,
            (None, Some(remote)) => fill.remote(remote)?,
            (None, None) => {
                return Err(Error::Unrunnable {
                    server: doc.name.clone(),
                    offered: offered(doc),
                });
            }
        },
    };
    if !fill.needs.is_empty() {
        fill.needs.dedup_by(|a, b| a.0 == b.0);
        return Err(Error::Needs {
            server: doc.name.clone(),
            needs: fill.needs,
        });
    }
    Ok(Converted {
        shared: !fill.secrets.iter().any(|s| s.required),
        secrets: fill.secrets,
        entry: literal(entry),
        chosen,
    })
}

/// The entry as the file must say it: `gateway.toml` reads `${VAR}` from the
/// environment, so a `$` of the server's own must not read as one.
fn literal(mut entry: McpServerEntry) -> McpServerEntry {
    let escape = |s: &mut String| *s = super::interpolate::literal(s);
    entry
        .command
        .iter_mut()
        .chain(entry.url.iter_mut())
        .chain(entry.args.iter_mut())
        .for_each(escape);
    entry
        .env
        .values_mut()
        .chain(entry.headers.values_mut())
        .for_each(escape);
    entry
}

/// "an" before a vowel sound: the type names read as letters (an npm, an sse).
fn article(word: &str) -> &'static str {
    match word {
        "mcpb" | "npm" | "sse" => "an",
        w if w.starts_with(['a', 'e', 'i', 'o', 'u']) => "an",
        _ => "a",
    }
}

/// What a server offers, in words: "an npm package and an sse remote".
fn offered(doc: &ServerJson) -> String {
    let mut parts: Vec<String> = doc
        .packages
        .iter()
        .map(|p| match p.transport.as_ref().map(|t| t.kind.as_str()) {
            None | Some("stdio") => format!("{} {} package", article(&p.registry_type), p.registry_type),
            Some(t) => format!("{} {} package over {t}", article(&p.registry_type), p.registry_type),
        })
        .chain(
            doc.remotes
                .iter()
                .map(|r| format!("{} {} remote", article(&r.kind), r.kind)),
        )
        .collect();
    parts.dedup();
    match parts.len() {
        0 => "no package and no remote".into(),
        1 => parts.remove(0),
        _ => {
            let last = parts.pop().expect("two or more");
            format!("{} and {last}", parts.join(", "))
        }
    }
}

/// Fills inputs in, gathering what is missing and what is secret.
struct Filler<'a> {
    given: &'a Given,
    needs: Vec<(String, Option<String>)>,
    secrets: Vec<Secret>,
    server: &'a str,
}

/// What one input became.
enum Filled {
    /// A value for the file.
    Plain(String),
    /// A credential for each project: `{ask}` is where its answer goes.
    Secret { ask: String, template: Option<String> },
    /// Optional, and not given.
    Absent,
}

impl Filler<'_> {
    /// `key` names the input for `--set` and in errors.
    fn input(&mut self, key: &str, input: &Input) -> Filled {
        // A secret given with `--set` is still the project's, never the file's.
        if let Some(v) = self.given.plain(key).filter(|_| !input.is_secret) {
            return Filled::Plain(v.clone());
        }
        // A sealed value is the whole of what it fills, as a plain one is.
        if !input.is_secret && self.given.is_sealed(key) {
            return Filled::Secret {
                ask: key.to_string(),
                template: None,
            };
        }
        // A secret's `default` is an example ("YOUR_API_KEY"), never a value.
        let template = match input.is_secret {
            true => input.value.clone(),
            false => input.value.clone().or_else(|| input.default.clone()),
        };
        let Some(mut text) = template else {
            return match (input.is_secret, input.is_required) {
                (true, _) => Filled::Secret {
                    ask: key.to_string(),
                    template: None,
                },
                (false, true) => {
                    self.needs.push((key.to_string(), input.description.clone()));
                    Filled::Absent
                }
                (false, false) => Filled::Absent,
            };
        };
        let mut secret = None;
        for (name, var) in &input.variables {
            let slot = format!("{{{name}}}");
            if !text.contains(&slot) {
                continue;
            }
            let is_secret = var.is_secret || self.given.is_sealed(name);
            let value = match is_secret {
                true => None,
                false => (self.given.plain(name).cloned()).or_else(|| var.value.clone().or(var.default.clone())),
            };
            match value {
                Some(v) => text = text.replace(&slot, &v),
                None if is_secret => secret = Some(name.clone()),
                None => self.needs.push((name.clone(), var.description.clone())),
            }
        }
        match secret {
            Some(ask) => Filled::Secret {
                ask,
                template: Some(text),
            },
            None => Filled::Plain(text),
        }
    }

    /// A header or environment variable: into `map`, or a secret.
    fn key_value(&mut self, kv: &KeyValue, place: Place, map: &mut BTreeMap<String, String>) {
        match self.input(&kv.name, &kv.input) {
            Filled::Plain(v) => {
                map.insert(kv.name.clone(), v);
            }
            Filled::Secret { ask, template } => self.secret(place, &kv.name, ask, &kv.input, template),
            Filled::Absent => {}
        }
    }

    /// Sets a credential aside for each project to hold.
    fn secret(&mut self, place: Place, name: &str, ask: String, input: &Input, template: Option<String>) {
        self.secrets.push(Secret {
            place,
            name: name.to_string(),
            ask,
            description: input.description.clone(),
            required: input.is_required,
            template,
        });
    }

    /// Command-line arguments, in order.
    fn arguments(&mut self, arguments: &[Argument]) -> Result<Vec<String>, Error> {
        let mut out = Vec::new();
        for (n, a) in arguments.iter().enumerate() {
            let flag = a.name.as_deref().filter(|_| a.kind == "named");
            let key = flag
                .or(a.value_hint.as_deref())
                .map_or_else(|| format!("argument {}", n + 1), str::to_string);
            let i = &a.input;
            let switch = i.value.is_none() && i.default.is_none() && !i.is_required && !i.is_secret;
            if let Some(flag) = flag.filter(|_| switch && self.given.get(&key).is_none()) {
                out.push(flag.to_string());
                continue;
            }
            match self.input(&key, &a.input) {
                Filled::Plain(v) => out.extend(flag.map(str::to_string).into_iter().chain([v])),
                Filled::Absent => {}
                // `docker run -e NAME={token}`: the container's variable, held
                // by each project; the command line names it only.
                Filled::Secret { ask, template: Some(t) }
                    if matches!(flag, Some("-e" | "--env")) && t.contains('=') =>
                {
                    let (name, value) = t.split_once('=').expect("checked");
                    out.extend([flag.unwrap_or("-e").to_string(), name.to_string()]);
                    self.secret(Place::Env, name, ask, i, Some(value.to_string()));
                }
                Filled::Secret { .. } => {
                    return Err(Error::SecretArgument {
                        server: self.server.to_string(),
                        name: key,
                    });
                }
            }
        }
        Ok(out)
    }

    /// The entry that runs package `p` of `kind`, and what was chosen, in words.
    fn package(&mut self, p: &Package, kind: Runtime) -> Result<(McpServerEntry, String), Error> {
        let mut env = BTreeMap::new();
        for kv in &p.environment_variables {
            self.key_value(kv, Place::Env, &mut env);
        }
        let runtime = self.arguments(&p.runtime_arguments)?;
        let package = self.arguments(&p.package_arguments)?;
        let version = p.version.as_deref().filter(|v| !v.is_empty() && *v != "latest");
        let (command, spec, mut args) = match kind {
            Runtime::Npm => {
                let spec = match version {
                    Some(v) => format!("{}@{v}", p.identifier),
                    None => p.identifier.clone(),
                };
                // npx asks before installing unless told yes; nobody answers a child.
                let mut args: Vec<String> = ["-y", "--yes"]
                    .iter()
                    .all(|y| !runtime.iter().any(|a| a == y))
                    .then(|| "-y".to_string())
                    .into_iter()
                    .collect();
                if let Some(url) = p
                    .registry_base_url
                    .as_deref()
                    .filter(|u| !u.contains("registry.npmjs.org"))
                {
                    args.extend(["--registry".into(), url.to_string()]);
                }
                ("npx", spec, args)
            }
            Runtime::Pypi => {
                let spec = match version {
                    Some(v) => format!("{}=={v}", p.identifier),
                    None => p.identifier.clone(),
                };
                let mut args = Vec::new();
                if let Some(url) = p.registry_base_url.as_deref().filter(|u| !u.contains("pypi.org")) {
                    args.extend(["--default-index".into(), url.to_string()]);
                }
                ("uvx", spec, args)
            }
            Runtime::Oci => {
                // An identifier may carry its tag or digest; else the version is the tag.
                let tagged = p
                    .identifier
                    .rsplit('/')
                    .next()
                    .is_some_and(|last| last.contains([':', '@']));
                let spec = match version {
                    Some(v) if !tagged => format!("{}:{v}", p.identifier),
                    _ => p.identifier.clone(),
                };
                let mut args = vec!["run".to_string()];
                for (flag, long) in [("-i", "--interactive"), ("--rm", "--rm")] {
                    if !runtime.iter().any(|a| a == flag || a == long) {
                        args.push(flag.into());
                    }
                }
                // The container sees only the variables `-e` names.
                let secret_env = self.secrets.iter().filter(|s| s.place == Place::Env).map(|s| &s.name);
                for name in env.keys().chain(secret_env) {
                    if !runtime.iter().any(|a| a == name || a.starts_with(&format!("{name}="))) {
                        args.extend(["-e".to_string(), name.clone()]);
                    }
                }
                ("docker", spec, args)
            }
        };
        args.extend(runtime);
        args.push(spec.clone());
        args.extend(package);
        let entry = McpServerEntry {
            command: Some(command.into()),
            args,
            env,
            ..Default::default()
        };
        Ok((entry, format!("{} package {spec}", p.registry_type)))
    }

    /// The entry that reaches remote `r`, and what was chosen, in words.
    fn remote(&mut self, r: &Transport) -> Result<(McpServerEntry, String), Error> {
        let url = r.url.clone().unwrap_or_default();
        let url = match self.input(
            "url",
            &Input {
                value: Some(url),
                variables: r.variables.clone(),
                is_required: true,
                ..Default::default()
            },
        ) {
            Filled::Plain(url) => url,
            Filled::Secret { ask, .. } => {
                return Err(Error::SecretArgument {
                    server: self.server.to_string(),
                    name: ask,
                });
            }
            Filled::Absent => String::new(),
        };
        let mut headers = BTreeMap::new();
        for kv in &r.headers {
            self.key_value(kv, Place::Header, &mut headers);
        }
        let chosen = format!("streamable-http remote {url}");
        let entry = McpServerEntry {
            url: Some(url),
            headers,
            ..Default::default()
        };
        Ok((entry, chosen))
    }
}

#[cfg(test)]
mod tests;
