//! Hybrid search with the real embedding model (all-MiniLM-L6-v2, installed
//! by `scripts/setup` through `mcp-gateway model install`): a paraphrase
//! lexical search misses, embeddings cached across restarts, and what happens
//! when the model is missing or broken.

mod common;

use common::*;
use serde_json::{Value, json};

/// A gateway with the demo server, projects `lexical` (bm25) and `meaning`
/// (hybrid), and the model and cache of `semantic`.
async fn gateway(semantic: &str) -> (Gateway, String, String) {
    let config = format!(
        "[[servers]]\nname = \"demo\"\ncommand = \"{}\"\nargs = [\"demo-server\"]\n\n[search.semantic]\n{semantic}\n",
        bin()
    );
    let gw = Gateway::start(&config).await;
    let mut tokens = Vec::new();
    for (project, search) in [("lexical", "bm25"), ("meaning", "hybrid")] {
        gw.cli(&["project", "create", project, "--search", search]);
        gw.cli(&["grant", "--project", project, "--server", "demo"]);
        tokens.push(gw.issue_token(project));
    }
    let meaning = tokens.pop().unwrap();
    (gw, tokens.pop().unwrap(), meaning)
}

/// The structured result of `tool_discovery` for `query`, as `token`'s project.
async fn discovery(gw: &Gateway, token: &str, query: Value) -> Value {
    let client = gw.client_with_token(token).await.expect("client connects");
    let r = call(&client, "tool_discovery", json!({ "query": query })).await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    r.structured_content.unwrap()
}

fn keys(found: &Value) -> Vec<&str> {
    found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["toolKey"].as_str().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_model_hybrid_projects_get_bm25_and_one_message() {
    let (gw, _, meaning) = gateway("model_dir = \"no-model-here\"").await;
    let found = discovery(&gw, &meaning, json!("convert a temperature")).await;
    assert_eq!(found["provider"], "bm25", "{found}");
    assert_eq!(keys(&found)[0], "demo:convert_temperature", "{found}");
    let notice = found["notice"].as_str().unwrap();
    assert!(
        notice.contains("model install") && notice.ends_with("BM25 answered"),
        "{notice}"
    );
    discovery(&gw, &meaning, json!("convert a temperature")).await;
    let said = gw.log().matches("search: BM25F for every project").count();
    assert_eq!(said, 1, "{}", gw.log());
}

/// With the real model (the `semantic` build).
#[cfg(feature = "semantic")]
mod with_model {
    use std::path::Path;
    use std::time::Duration;

    use super::*;

    fn toml_path(p: &Path) -> String {
        p.display().to_string().replace('\\', "\\\\")
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn hybrid_finds_what_words_miss_and_reuses_embeddings_after_a_restart() {
        let model = repo_path("data/models/all-MiniLM-L6-v2");
        assert!(
            model.join("model.safetensors").is_file(),
            "no model in {}: run scripts/setup",
            model.display()
        );
        let cache = tempfile::tempdir().unwrap();
        let semantic = format!(
            "model_dir = \"{}\"\ncache_path = \"{}\"",
            toml_path(&model),
            toml_path(&cache.path().join("embeddings.db"))
        );
        let (mut gw, lexical, meaning) = gateway(&semantic).await;
        let ready = gw
            .wait_log("tool embeddings ready", Duration::from_secs(60))
            .await
            .unwrap_or_else(|| panic!("embeddings never ready:\n{}", gw.log()));
        assert!(ready.contains("computed=7"), "{ready}");

        // No word of this query is in the tool's name, description or parameters.
        let query = json!("what does the clock say in Tokyo right now");
        let words = discovery(&gw, &lexical, query.clone()).await;
        assert_ne!(keys(&words).first(), Some(&"demo:current_time"), "{words}");
        let found = discovery(&gw, &meaning, query).await;
        assert_eq!(found["provider"], "hybrid", "{found}");
        assert_eq!(keys(&found)[0], "demo:current_time", "{found}");
        let explanation = found["results"][0]["explanation"].as_str().unwrap();
        assert!(explanation.contains("meaning: 0."), "{explanation}");
        // Steps of a task each get their tool.
        let steps = discovery(
            &gw,
            &meaning,
            json!(["fingerprint this string", "turn 451 F into Celsius"]),
        )
        .await;
        let top: Vec<&str> = keys(&steps).into_iter().take(2).collect();
        assert!(
            top.contains(&"demo:sha256") && top.contains(&"demo:convert_temperature"),
            "{steps}"
        );
        gw.stop().await;

        let (gw, _, meaning) = gateway(&semantic).await;
        let ready = gw
            .wait_log("tool embeddings ready", Duration::from_secs(60))
            .await
            .unwrap_or_else(|| panic!("embeddings never ready:\n{}", gw.log()));
        assert!(ready.contains("from_disk=7") && ready.contains("computed=0"), "{ready}");
        let found = discovery(&gw, &meaning, json!("what does the clock say in Tokyo right now")).await;
        assert_eq!(keys(&found)[0], "demo:current_time", "{found}");
    }

    #[test]
    fn a_broken_model_stops_the_gateway_at_start_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("model");
        std::fs::create_dir(&model).unwrap();
        let installed = repo_path("data/models/all-MiniLM-L6-v2");
        for f in ["config.json", "tokenizer.json"] {
            std::fs::copy(installed.join(f), model.join(f)).unwrap();
        }
        std::fs::write(model.join("model.safetensors"), b"truncated download").unwrap();
        let config = dir.path().join("gateway.toml");
        std::fs::write(
            &config,
            format!("[search.semantic]\nmodel_dir = \"{}\"\n", toml_path(&model)),
        )
        .unwrap();
        let out = std::process::Command::new(bin())
            .args(["serve", "--http", "127.0.0.1:0", "--config"])
            .arg(&config)
            .output()
            .unwrap();
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("cannot be used") && stderr.contains("model.safetensors"),
            "{stderr}"
        );
    }
}
