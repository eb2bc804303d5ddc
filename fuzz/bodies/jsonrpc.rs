// The path of an upstream message up to the downstream call: the JSON-RPC
// check every HTTP body and stdio line gets, then for `tools/call` of a
// meta-tool its arguments, a BM25 search over real tool catalogs
// (`benches/data/catalog`) for `tool_discovery`, and the tool's inputSchema
// check for `tool_execute`. Nothing may panic.
//
// Shared by fuzz/fuzz_targets and tests/suite/fuzz_seeds.rs (which runs the seeds).

use std::sync::{Arc, LazyLock};

use mcp_gateway::access::Grants;
use mcp_gateway::catalog::{Snapshot, View};
use mcp_gateway::gateway::{DiscoverArgs, ExecuteArgs, OneOrMany, parse_args};
use mcp_gateway::rank::local;
use mcp_gateway::search::Request;
use rmcp::model::Tool;
use rules::Rules;
use serde_json::Value;

const CATALOGS: [&str; 3] = [
    include_str!("../../benches/data/catalog/github.json"),
    include_str!("../../benches/data/catalog/filesystem.json"),
    include_str!("../../benches/data/catalog/stripe.json"),
];

static VIEW: LazyLock<View> = LazyLock::new(|| {
    let servers: Vec<(String, Vec<Tool>)> = CATALOGS
        .iter()
        .map(|c| {
            let c: Value = serde_json::from_str(c).unwrap();
            let tools = serde_json::from_value(c["tools"].clone()).unwrap();
            (c["server"].as_str().unwrap().to_string(), tools)
        })
        .collect();
    let snapshot = Snapshot::build(servers.iter().map(|(s, t)| (s.as_str(), None, &t[..])), &Rules::default()).unwrap();
    View::new(Arc::new(snapshot), Arc::new(Grants::all_of(servers.iter().map(|(s, _)| s.as_str()))))
});

pub(crate) fn one(body: &[u8]) {
    let Ok(envelope) = mcp_gateway::server::parse_jsonrpc(body) else { return };
    if !envelope.is_request() {
        return;
    }
    // What passes the guard goes to rmcp, which parses it whole.
    let Ok(message) = serde_json::from_slice::<Value>(body) else { return };
    if message["method"] != "tools/call" {
        return;
    }
    let arguments = message["params"]["arguments"].as_object().cloned();
    match message["params"]["name"].as_str() {
        Some("tool_discovery") => {
            let Ok(args) = parse_args::<DiscoverArgs>(arguments) else { return };
            let queries = match args.query {
                OneOrMany::One(q) => vec![q],
                OneOrMany::Many(qs) => qs,
            };
            let request = Request {
                queries,
                context: args.context,
                limit: args.max_results.unwrap_or(10).clamp(1, 50) as usize,
                prior: None,
            };
            for hit in local::bm25(&VIEW, &request) {
                assert!(VIEW.get(&hit.key).is_some(), "discovery found what execute refuses");
            }
        }
        Some("tool_execute") => {
            let Ok(args) = parse_args::<ExecuteArgs>(arguments) else { return };
            if let Some(entry) = VIEW.get(&args.tool_key) {
                let _ = entry.check_arguments(&args.arguments.unwrap_or(Value::Null));
            }
        }
        _ => {}
    }
}
