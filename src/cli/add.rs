//! `add NAME`: a server from the MCP Registry, as a `[[servers]]` entry
//! appended to the config, checked before anything is written. Its secrets
//! become a project's own credentials (`secret set`), asked for or named.
//!
//! The registry's document is another party's text: a string of it with a
//! control character is refused, the file must read as before plus one
//! `[[servers]]` entry, and what is shown of it is escaped.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};

use super::credentials::{check_kind, name_value, open_store, project};
use crate::mcp_registry::{self, Client, MAX_NAME_CHARS};
use config::server_json::{self, Converted, Given, Place, Runtime, Secret, Source};
use config::{self, Config};
use credentials::CredentialKind;
use gateway::operator::{Actor, Operator};
use gateway::vault::Vault;
use vocab::text::escape_control;

/// `add`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  mcp-gateway add io.github.brave/brave-search-mcp-server --project research
      npx -y @brave/brave-search-mcp-server@…; asks for BRAVE_API_KEY, stored for research only
  mcp-gateway add com.apify/apify-mcp-server --from remote --as apify
      its streamable HTTP endpoint; each project sets its own Authorization header
  mcp-gateway add io.github.oraios/serena@1.5.3 --dry-run
      print the entry, write nothing
  MCP_GATEWAY_REGISTRY=https://registry.example.com mcp-gateway add internal.example/crm

Nothing is written when the name or version is unknown, the server offers
nothing this gateway runs (mcpb, sse), a value is missing, or the result
would not pass `check`. A running gateway picks the new entry up by itself.")]
pub struct AddArgs {
    /// The server's name in the registry, e.g.
    /// `io.github.brave/brave-search-mcp-server`, and `@VERSION` for one
    /// other than the latest.
    #[arg(value_name = "NAME[@VERSION]")]
    name: String,
    /// Run it from this (default: its first npm, pypi or oci package that
    /// runs over stdio, else its streamable HTTP remote).
    #[arg(long, value_enum)]
    from: Option<From>,
    /// Its name in the config (default: the last part of the registry name).
    #[arg(long = "as", value_name = "SERVER")]
    as_name: Option<String>,
    /// A value it takes, by name: a URL or template variable, an env
    /// variable, a header or an argument (repeat). A secret given here is
    /// stored for --project, never written. VALUE `-` reads stdin.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// Grant this project the server and store its secrets for it (asked
    /// for on a terminal, or given with --set).
    #[arg(long)]
    project: Option<String>,
    /// The registry: the official one, or a private sub-registry serving the same API.
    #[arg(long, env = mcp_registry::URL_ENV, default_value = mcp_registry::DEFAULT_URL)]
    registry: String,
    /// Print the entry and what it needs; write and store nothing.
    #[arg(long)]
    dry_run: bool,
}

/// How to run the server.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum From {
    /// Its npm package, with npx.
    Npm,
    /// Its PyPI package, with uvx.
    Pypi,
    /// Its OCI image, with docker run.
    Oci,
    /// Its streamable HTTP endpoint.
    Remote,
}

impl From {
    fn source(self) -> Source {
        match self {
            Self::Npm => Source::Package(Runtime::Npm),
            Self::Pypi => Source::Package(Runtime::Pypi),
            Self::Oci => Source::Package(Runtime::Oci),
            Self::Remote => Source::Remote,
        }
    }
}

/// Runs `add`: `path` is the config file written (created from the
/// default when it does not exist yet).
pub(super) async fn run(path: Option<PathBuf>, a: AddArgs) -> anyhow::Result<ExitCode> {
    // Registry names have no `@`, so the first one starts a version.
    let (wanted, version) = match a.name.split_once('@') {
        Some((name, version)) => (name, Some(version)),
        None => (a.name.as_str(), None),
    };
    for (what, text) in [("name", Some(wanted)), ("version", version)] {
        if let Some(text) = text
            && (text.is_empty() || text.chars().count() > MAX_NAME_CHARS || text.chars().any(char::is_control))
        {
            bail!("a {what} is 1 to {MAX_NAME_CHARS} characters, without control characters");
        }
    }
    let path = path.unwrap_or_else(|| PathBuf::from("gateway.toml"));
    if path.extension().is_some_and(|e| e == "json") {
        bail!(
            "{} is an mcpServers JSON file; `add` writes TOML (convert it first: mcp-gateway import {0} > gateway.toml)",
            path.display()
        );
    }
    let current = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => config::EMBEDDED_DEFAULT.to_string(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let shown = path.display().to_string();
    let base = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let before = Config::parse(&current, &shown, base).context("fix the config before adding to it")?;

    let mut given = Given::new();
    for set in &a.set {
        // Piped in, as a key is (`echo KEY | … --set NAME=-`): a secret.
        let piped = set.split_once('=').is_some_and(|(_, v)| v == "-");
        let (name, value) = name_value(set)?;
        given.insert(name, value, piped);
    }
    let listed = Client::new(&a.registry)?.server(wanted, version).await?;
    let doc = &listed.server;
    let shown_doc = format!("{} {}", escape_control(&doc.name), escape_control(&doc.version));
    match listed.status.as_deref() {
        Some("deleted") => bail!("{shown_doc} was deleted from the registry"),
        Some("deprecated") => eprintln!("note: {shown_doc} is deprecated in the registry"),
        _ => {}
    }
    let converted = server_json::convert(doc, a.from.map(From::source), &given)
        .map_err(|e| anyhow::anyhow!(escape_control(&e.to_string())))?;
    let name = match &a.as_name {
        Some(n) => n.clone(),
        None => config::server_name(doc.name.rsplit('/').next().unwrap_or(&doc.name)),
    };
    config::check_server_name(&name).map_err(anyhow::Error::msg)?;
    if before.servers.iter().any(|s| s.name == name) {
        bail!("{shown} already has a server named '{name}'; choose another with --as NAME");
    }

    let (comments, entry) = entry_text(&name, doc, &converted)?;
    let block = format!("{comments}{entry}");
    let mut text = current.clone();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push('\n');
    text.push_str(&block);
    let after = Config::parse(&text, &shown, base)
        .map_err(|e| anyhow::anyhow!("the entry would not pass check, so nothing was written:\n{e}\n\n{block}"))?;
    // The checks above keep the document's text in its strings; this one
    // does not depend on them.
    config::check_appended(&current, &text, &entry).map_err(|why| {
        anyhow::anyhow!(
            "the entry would change {shown} beyond one new [[servers]] entry ({why}), so nothing was written"
        )
    })?;
    let server = after.servers.iter().find(|s| s.name == name).expect("just added");

    // The project first: nobody types a key for a project that is not there.
    let project = match &a.project {
        Some(p) => Some(project(&*open_store(&before)?, p)?),
        None => None,
    };
    let answers = answers(&converted.secrets, &given, a.project.is_some(), !a.dry_run)?;
    for (secret, value) in &answers {
        check_kind(server, kind(secret.place), &secret.name, value)?;
    }
    if a.dry_run {
        print!("{block}");
        name_secrets(&name, &converted.secrets, a.project.as_deref());
        return Ok(ExitCode::SUCCESS);
    }

    write_atomically(&path, &text)?;
    println!(
        "added '{name}' to {shown}: {} ({} {})",
        converted.chosen, doc.name, doc.version
    );
    super::print_check(&after);
    if let Some(p) = &project {
        let store = open_store(&after)?;
        Operator::new(&store).grant(&Actor::Cli, &p.name, &name, None, true)?;
        println!("granted server '{name}' to project '{}'", p.name);
        let vault = Vault::new(store.clone());
        for (secret, value) in &answers {
            vault.set(p, &name, kind(secret.place), &secret.name, value)?;
            println!(
                "project '{}': {} {} set for '{name}'",
                p.name,
                kind(secret.place).as_str(),
                secret.name
            );
        }
    }
    let unanswered: Vec<Secret> = converted
        .secrets
        .iter()
        .filter(|s| !answers.iter().any(|(a, _)| a.name == s.name))
        .cloned()
        .collect();
    name_secrets(&name, &unanswered, a.project.as_deref());
    Ok(ExitCode::SUCCESS)
}

/// The comment that says where the entry came from and what each project
/// must set, and the entry. Refuses a document whose text for either holds
/// a control character.
fn entry_text(name: &str, doc: &server_json::ServerJson, converted: &Converted) -> anyhow::Result<(String, String)> {
    let title = doc.title.as_deref().or(Some(doc.name.as_str())).filter(|t| *t != name);
    let description = doc.description.as_deref().map(vocab::text::one_line);
    let e = &converted.entry;
    let values = (e.command.iter().chain(&e.url).chain(&e.cwd).chain(&e.args))
        .chain(e.env.iter().chain(&e.headers).flat_map(|(k, v)| [k, v]));
    for (what, text) in [
        ("name", &doc.name),
        ("version", &doc.version),
        ("package", &converted.chosen),
    ]
    .into_iter()
    .chain(values.map(|v| ("value", v)))
    {
        refuse_control(what, text)?;
    }
    for (what, text) in [("title", title), ("description", description.as_deref())] {
        refuse_control(what, text.unwrap_or_default())?;
    }
    for s in &converted.secrets {
        refuse_control("secret", &s.name)?;
        refuse_control("secret", &s.value(&s.ask))?;
    }
    let mut comments = format!(
        "# From the MCP Registry: {} {} ({}).\n",
        doc.name, doc.version, converted.chosen
    );
    for s in &converted.secrets {
        comments.push_str(&format!(
            "# Each project sets its own {} {}: {}\n",
            kind(s.place).as_str(),
            s.name,
            secret_command(name, s, "PROJECT")
        ));
    }
    let entry = config::entry_toml(name, title, description.as_deref(), converted.shared, e)?;
    Ok((comments, entry))
}

/// Refuses the registry's `text` when it holds a control character: in a
/// `#` line a newline starts TOML of the document's choosing, and anywhere
/// an escape code rewrites what the operator reads.
fn refuse_control(what: &str, text: &str) -> anyhow::Result<()> {
    if text.chars().any(char::is_control) {
        bail!(
            "the registry's {what} '{}' holds a control character; nothing was written",
            escape_control(text)
        );
    }
    Ok(())
}

fn kind(place: Place) -> CredentialKind {
    match place {
        Place::Env => CredentialKind::Env,
        Place::Header => CredentialKind::Header,
    }
}

/// The `secret set` that stores `s` for `project`, its value read from stdin.
fn secret_command(server: &str, s: &Secret, project: &str) -> String {
    let flag = match s.place {
        Place::Env => "--env",
        Place::Header => "--header",
    };
    let value = match s.value("-") {
        v if v == "-" => "-".to_string(),
        // A template (`Bearer {token}`) is typed whole.
        _ => format!("'{}'", s.value(&format!("<{}>", s.ask))),
    };
    format!(
        "mcp-gateway secret set --project {project} --server {server} {flag} {}={value}",
        s.name
    )
}

/// Each secret's value: given with `--set` (by what it asks for), else asked
/// for when there is a `project` to hold it, `prompt` allows and standard
/// input is a terminal. Unanswered ones are left out, to be named.
fn answers(secrets: &[Secret], given: &Given, project: bool, prompt: bool) -> anyhow::Result<Vec<(Secret, String)>> {
    let terminal = project && prompt && std::io::stdin().is_terminal();
    let mut out = Vec::new();
    for s in secrets {
        let answer = match given.get(&s.ask).or_else(|| given.get(&s.name)) {
            Some(v) => Some(v.to_string()),
            None if terminal => {
                let about = (s.description.as_deref())
                    .map(|d| format!(" ({})", escape_control(d)))
                    .unwrap_or_default();
                let typed = rpassword::prompt_password(format!("{}{about}, empty to skip: ", s.ask))
                    .context("reading a secret from the terminal")?;
                Some(typed.trim().to_string()).filter(|t| !t.is_empty())
            }
            None => None,
        };
        if let Some(answer) = answer {
            if !project {
                bail!(
                    "--set {} is a secret: it is stored for a project, so add --project NAME",
                    s.ask
                );
            }
            out.push((s.clone(), s.value(&answer)));
        }
    }
    Ok(out)
}

/// Says which secrets each project still has to set, and how.
fn name_secrets(server: &str, secrets: &[Secret], project: Option<&str>) {
    if secrets.is_empty() {
        return;
    }
    println!("\n'{server}' takes credentials that each project holds as its own:");
    for s in secrets {
        let need = if s.required { "required" } else { "optional" };
        let about = (s.description.as_deref())
            .map(|d| escape_control(&vocab::text::one_line(d)))
            .unwrap_or_default();
        println!("  {} {} ({need}) {about}", kind(s.place).as_str(), s.name);
        println!("    {}", secret_command(server, s, project.unwrap_or("PROJECT")));
    }
}

/// Replaces `path` with `text` in one step: a reader (the running gateway's
/// reload) sees the old file or the new one, never half of it.
fn write_atomically(path: &Path, text: &str) -> anyhow::Result<()> {
    let tmp = path.with_extension(format!("toml.add-{}", std::process::id()));
    let result = (|| {
        std::fs::write(&tmp, text)?;
        if let Ok(meta) = std::fs::metadata(path) {
            std::fs::set_permissions(&tmp, meta.permissions())?;
        }
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(|| format!("cannot write {}", path.display()))
}
