//! The conversion, on made-up documents for each rule and on six real ones
//! (`tests/registry/`, with their sources).

use super::*;

fn doc(json: serde_json::Value) -> ServerJson {
    serde_json::from_value(json).unwrap()
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn given(pairs: &[(&str, &str)]) -> Given {
    map(pairs).into_iter().collect()
}

#[test]
fn an_npm_package_runs_with_npx_and_its_secret_is_each_projects() {
    let d = doc(serde_json::json!({
        "name": "io.github.x/search", "version": "1.0.0",
        "packages": [{ "registryType": "npm", "identifier": "@x/search", "version": "1.2.3",
            "transport": { "type": "stdio" },
            "packageArguments": [{ "type": "named", "name": "--port", "default": 8080 },
                { "type": "named", "name": "--stdio" }],
            "environmentVariables": [
                { "name": "X_KEY", "isRequired": true, "isSecret": true, "default": "YOUR_KEY" },
                { "name": "X_MODE", "default": "fast" },
                { "name": "X_OPTIONAL" } ] }]
    }));
    let c = convert(&d, None, &Given::new()).unwrap();
    assert_eq!(c.entry.command.as_deref(), Some("npx"));
    assert_eq!(c.entry.args, ["-y", "@x/search@1.2.3", "--port", "8080", "--stdio"]);
    assert_eq!(c.entry.env, map(&[("X_MODE", "fast")]));
    assert_eq!(c.secrets.len(), 1);
    assert_eq!((c.secrets[0].place, c.secrets[0].ask.as_str()), (Place::Env, "X_KEY"));
    assert_eq!(c.secrets[0].value("k"), "k", "the example default is never the value");
    assert_eq!(c.chosen, "npm package @x/search@1.2.3");
}

#[test]
fn a_header_template_asks_only_for_its_secret_variable() {
    let d = doc(serde_json::json!({
        "name": "com.example/api", "version": "2",
        "remotes": [{ "type": "streamable-http", "url": "https://{region}.example.com/mcp",
            "variables": { "region": { "default": "eu" } },
            "headers": [{ "name": "Authorization", "isRequired": true, "isSecret": true,
                "value": "Bearer {token}", "variables": { "token": { "isSecret": true } } }] }]
    }));
    let c = convert(&d, None, &Given::new()).unwrap();
    assert_eq!(c.entry.url.as_deref(), Some("https://eu.example.com/mcp"));
    assert!(c.entry.headers.is_empty());
    assert_eq!(c.secrets[0].ask, "token");
    assert_eq!(c.secrets[0].value("t0k"), "Bearer t0k");
    let c = convert(&d, None, &given(&[("region", "us")])).unwrap();
    assert_eq!(c.entry.url.as_deref(), Some("https://us.example.com/mcp"));
}

#[test]
fn a_required_value_without_default_is_named_not_guessed() {
    let d = doc(serde_json::json!({
        "name": "io.github.x/files", "version": "1",
        "packages": [{ "registryType": "pypi", "identifier": "x-files", "version": "0.4",
            "packageArguments": [{ "type": "positional", "valueHint": "root_dir", "isRequired": true,
                "description": "folder to serve" }] }]
    }));
    let err = convert(&d, None, &Given::new()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "io.github.x/files needs root_dir (folder to serve): pass --set NAME=VALUE for each"
    );
    let c = convert(&d, None, &given(&[("root_dir", "/srv")])).unwrap();
    assert_eq!(c.entry.command.as_deref(), Some("uvx"));
    assert_eq!(c.entry.args, ["x-files==0.4", "/srv"]);
}

#[test]
fn an_oci_image_passes_its_variables_by_name() {
    let d = doc(serde_json::json!({
        "name": "io.github.x/db", "version": "1",
        "packages": [{ "registryType": "oci", "identifier": "ghcr.io/x/db", "version": "1.0",
            "environmentVariables": [{ "name": "DB_URL", "isSecret": true, "isRequired": true },
                { "name": "DB_LOG", "value": "info" }] }]
    }));
    let c = convert(&d, None, &Given::new()).unwrap();
    assert_eq!(c.entry.command.as_deref(), Some("docker"));
    assert_eq!(
        c.entry.args,
        ["run", "-i", "--rm", "-e", "DB_LOG", "-e", "DB_URL", "ghcr.io/x/db:1.0"]
    );
    assert_eq!(c.entry.env, map(&[("DB_LOG", "info")]));
}

#[test]
fn what_cannot_run_here_is_refused_with_what_is_offered() {
    let d = doc(serde_json::json!({
        "name": "io.github.x/app", "version": "1",
        "packages": [{ "registryType": "mcpb", "identifier": "https://x/app.mcpb" },
            { "registryType": "npm", "identifier": "x-app", "transport": { "type": "streamable-http", "url": "http://localhost:3000/mcp" } }],
        "remotes": [{ "type": "sse", "url": "https://x/sse" }]
    }));
    assert_eq!(
        convert(&d, None, &Given::new()).unwrap_err().to_string(),
        "io.github.x/app offers an mcpb package, an npm package over streamable-http and an sse remote; this gateway runs npm (npx), pypi (uvx) and oci (docker) packages over stdio, and streamable-http remotes"
    );
    assert_eq!(
        convert(&d, Some(Source::Package(Runtime::Pypi)), &Given::new())
            .unwrap_err()
            .to_string(),
        "io.github.x/app has no pypi package that runs over stdio; it offers an mcpb package, an npm package over streamable-http and an sse remote"
    );
}

/// A real document from `tests/registry/`.
fn real(file: &str) -> ServerJson {
    let path = format!("{}/../../tests/registry/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The entry as `gateway.toml` text, parsed back the way `check` reads it.
fn checked(name: &str, c: &Converted) -> crate::ServerConfig {
    let text = crate::entry_toml(name, None, None, c.shared, &c.entry).unwrap();
    let config = crate::Config::parse(&text, "added", std::path::Path::new("/")).unwrap();
    config.servers.into_iter().find(|s| s.name == name).unwrap()
}

#[test]
fn brave_runs_with_npx_and_each_project_holds_its_key() {
    let c = convert(&real("brave-npm.json"), None, &Given::new()).unwrap();
    assert_eq!(c.entry.command.as_deref(), Some("npx"));
    assert_eq!(c.entry.args, ["-y", "@brave/brave-search-mcp-server@2.1.3"]);
    assert!(c.entry.env.is_empty(), "the key never reaches the file");
    let key = &c.secrets[..];
    assert_eq!(key.len(), 1);
    assert_eq!(
        (key[0].place, key[0].name.as_str(), key[0].required),
        (Place::Env, "BRAVE_API_KEY", true)
    );
    let server = checked("brave", &c);
    assert!(matches!(server.transport, crate::Transport::Stdio { .. }));
    assert!(!server.shared, "it will not start without a project's key");
}

#[test]
fn serena_runs_with_uvx_in_the_registrys_order() {
    let c = convert(&real("serena-pypi.json"), None, &Given::new()).unwrap();
    assert_eq!(c.entry.command.as_deref(), Some("uvx"));
    // runtimeArguments, the package, packageArguments: as the registry documents them.
    assert_eq!(
        c.entry.args,
        [
            "-p",
            "3.13",
            "start-mcp-server",
            "--project-from-cwd",
            "--context",
            "desktop-app",
            "serena-agent==1.5.3"
        ]
    );
    let c = convert(&real("serena-pypi.json"), None, &given(&[("--context", "ide")])).unwrap();
    assert!(
        c.entry.args.windows(2).any(|w| w == ["--context", "ide"]),
        "{:?}",
        c.entry.args
    );
    assert!(c.secrets.is_empty());
}

#[test]
fn terraform_passes_its_token_by_name_and_keeps_the_rest() {
    let c = convert(&real("terraform-oci.json"), None, &Given::new()).unwrap();
    assert_eq!(c.entry.command.as_deref(), Some("docker"));
    assert_eq!(
        c.entry.args,
        [
            "run",
            "-i",
            "--rm",
            "-e",
            "TFE_ADDRESS=https://app.terraform.io",
            "-e",
            "TFE_TOKEN",
            "-e",
            "ENABLE_TF_OPERATIONS=false",
            "docker.io/hashicorp/terraform-mcp-server:1.2.0"
        ]
    );
    let token = &c.secrets[0];
    assert_eq!(
        (token.place, token.name.as_str(), token.ask.as_str()),
        (Place::Env, "TFE_TOKEN", "token")
    );
    assert_eq!(token.value("t-1"), "t-1");
    assert!(!token.required);
    assert!(c.shared, "an optional token leaves a shared connection");
    let c = convert(
        &real("terraform-oci.json"),
        None,
        &given(&[("address", "https://tfe.example.com")]),
    )
    .unwrap();
    assert!(
        c.entry
            .args
            .contains(&"TFE_ADDRESS=https://tfe.example.com".to_string())
    );
}

#[test]
fn apify_is_a_url_server_whose_authorization_each_project_sets() {
    let c = convert(&real("apify-remote.json"), None, &Given::new()).unwrap();
    assert_eq!(c.entry.url.as_deref(), Some("https://mcp.apify.com/"));
    assert!(c.entry.headers.is_empty());
    assert_eq!(c.secrets[0].place, Place::Header);
    assert_eq!(c.secrets[0].name, "Authorization");
    assert!(matches!(checked("apify", &c).transport, crate::Transport::Http { .. }));
    assert_eq!(
        convert(
            &real("apify-remote.json"),
            Some(Source::Package(Runtime::Npm)),
            &Given::new()
        )
        .unwrap_err()
        .to_string(),
        "com.apify/apify-mcp-server has no npm package that runs over stdio; it offers a streamable-http remote"
    );
}

#[test]
fn github_offers_its_image_first_and_its_remote_on_request() {
    let mut doc = real("github-oci-remote.json");
    // As published: the release fills its template in.
    doc.packages[0].identifier = doc.packages[0].identifier.replace("${VERSION}", "1.0.0");
    let c = convert(&doc, None, &Given::new()).unwrap();
    assert_eq!(
        c.entry.args,
        [
            "run",
            "-i",
            "--rm",
            "-p",
            "127.0.0.1:8085:8085",
            "-e",
            "GITHUB_OAUTH_CALLBACK_PORT=8085",
            "-e",
            "GITHUB_PERSONAL_ACCESS_TOKEN",
            "ghcr.io/github/github-mcp-server:1.0.0"
        ]
    );
    let c = convert(&doc, Some(Source::Remote), &Given::new()).unwrap();
    assert_eq!(c.entry.url.as_deref(), Some("https://api.githubcopilot.com/mcp/"));
    assert_eq!(
        (c.secrets[0].name.as_str(), c.secrets[0].required),
        ("Authorization", false)
    );
}

#[test]
fn coverctl_offers_only_bundles_and_is_refused() {
    let err = convert(&real("coverctl-mcpb.json"), None, &Given::new()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "io.github.klarlabs-studio/coverctl offers an mcpb package; this gateway runs npm (npx), pypi (uvx) and oci (docker) packages over stdio, and streamable-http remotes"
    );
}

#[test]
fn a_dollar_of_the_servers_own_stays_a_dollar() {
    let d = doc(serde_json::json!({
        "name": "io.github.x/price", "version": "1",
        "packages": [{ "registryType": "npm", "identifier": "x-price", "version": "1",
            "packageArguments": [{ "type": "named", "name": "--currency", "value": "${USD}" }] }]
    }));
    let c = convert(&d, None, &Given::new()).unwrap();
    match checked("price", &c).transport {
        crate::Transport::Stdio { args, .. } => assert_eq!(args, ["-y", "x-price@1", "--currency", "${USD}"]),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_piped_or_recognised_key_is_a_secret_the_document_did_not_mark() {
    let d = doc(serde_json::json!({
        "name": "io.github.x/keys", "version": "1",
        "remotes": [{ "type": "streamable-http", "url": "https://keys.example.com/mcp",
            "headers": [{ "name": "X-Api-Key", "isRequired": true },
                { "name": "Authorization", "value": "Bearer {token}", "variables": { "token": {} } },
                { "name": "X-Region", "default": "eu" }] }]
    }));
    let github = format!("ghp_{}", "a1B2c3D4e5".repeat(4));
    let mut given = Given::new();
    given.insert("X-Api-Key".into(), "piped".into(), true);
    given.insert("token".into(), github.clone(), false);
    given.insert("X-Region".into(), "us".into(), false);
    let c = convert(&d, None, &given).unwrap();
    assert_eq!(
        c.entry.headers,
        map(&[("X-Region", "us")]),
        "only the plain value is the file's"
    );
    let asked: Vec<_> = c.secrets.iter().map(|s| (s.name.as_str(), s.ask.as_str())).collect();
    assert_eq!(asked, [("X-Api-Key", "X-Api-Key"), ("Authorization", "token")]);
    assert_eq!(c.secrets[1].value(&github), format!("Bearer {github}"));
    assert!(!c.shared, "a required key sealed for each project");
}
