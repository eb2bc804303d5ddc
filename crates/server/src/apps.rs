//! MCP Apps at the upstream edge. A host renders an App only for a tool it
//! listed, and forwards the App's own calls by name, so an App tool's result
//! tells its App the name to call back by: the one the host listed it under,
//! or `tool_execute` with its key when that is how it was called. Its App
//! URIs are named as the caller's resource listing names them.

use rmcp::model::CallToolResult;
use serde_json::json;

use gateway::catalog::{View, apps};
use vocab::wire::{CALL_TOOL_META, EXECUTE, split_key};

/// A call of a tool that carries an App, and how its App calls back.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct AppCall {
    server: String,
    call_back: CallBack,
    /// Whether the caller's listings name App URIs in their server's namespace.
    namespaced: bool,
}

#[derive(Debug, PartialEq, Eq)]
enum CallBack {
    /// By the tool's direct name, as the host listed it.
    Direct(String),
    /// Through `tool_execute`, with this key.
    Execute(String),
}

impl AppCall {
    /// The call of `key` (by its direct name when `direct`, else through
    /// `tool_execute`), if the caller may use it and it carries an App.
    pub(super) fn of(view: &View, key: &str, direct: bool, namespaced: bool) -> Option<Self> {
        if !view.get(key)?.has_app() {
            return None;
        }
        let call_back = if direct {
            CallBack::Direct(view.direct_name(key)?.to_string())
        } else {
            CallBack::Execute(key.to_string())
        };
        Some(Self {
            server: split_key(key)?.0.to_string(),
            call_back,
            namespaced,
        })
    }

    /// Puts the call-back name (`_meta["mcp-gateway/callTool"]`) on the
    /// result, and its App URIs in the namespace the caller's listings use.
    pub(super) fn annotate(self, result: &mut CallToolResult) {
        let meta = result.meta.get_or_insert_with(Default::default);
        if self.namespaced {
            apps::namespace(meta, &self.server);
        } else {
            apps::namespace_claimed(meta, &self.server);
        }
        let call_back = match self.call_back {
            CallBack::Direct(name) => json!({ "name": name }),
            CallBack::Execute(key) => json!({ "name": EXECUTE, "toolKey": key }),
        };
        meta.insert(CALL_TOOL_META.into(), call_back);
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::ContentBlock;
    use serde_json::Value;

    use super::*;

    fn call(call_back: CallBack, namespaced: bool) -> AppCall {
        AppCall {
            server: "index".into(),
            call_back,
            namespaced,
        }
    }

    fn annotated(call: AppCall) -> Value {
        let mut result = CallToolResult::success(vec![ContentBlock::text("ok")]);
        result.meta = Some(serde_json::from_value(json!({ "ui": { "resourceUri": "ui://widget/a.html" } })).unwrap());
        call.annotate(&mut result);
        serde_json::to_value(result.meta.unwrap()).unwrap()
    }

    #[test]
    fn a_direct_call_is_answered_with_its_listed_name() {
        let meta = annotated(call(CallBack::Direct("index__discover_filter".into()), true));
        assert_eq!(meta[CALL_TOOL_META], json!({ "name": "index__discover_filter" }));
        assert_eq!(meta["ui"]["resourceUri"], "ui://mcp-gateway/index/widget/a.html");
    }

    #[test]
    fn a_call_through_tool_execute_is_answered_with_tool_execute_and_its_key() {
        let meta = annotated(call(CallBack::Execute("index:discover_filter".into()), false));
        assert_eq!(
            meta[CALL_TOOL_META],
            json!({ "name": "tool_execute", "toolKey": "index:discover_filter" })
        );
        assert_eq!(
            meta["ui"]["resourceUri"], "ui://widget/a.html",
            "where Apps are not listed, their URIs are the server's own"
        );
    }
}
