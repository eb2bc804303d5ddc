//! `demo-server --conformance`: the resources, resource template and prompts
//! that the official `@modelcontextprotocol/conformance` server scenarios
//! read, as their descriptions specify them. Behind the gateway they prove
//! that resources, prompts (a 2026-07-28 input request too) and
//! subscriptions pass through unchanged.

use std::collections::BTreeMap;

use rmcp::model::{
    ElicitRequest, ElicitRequestParams, GetPromptRequestParams, GetPromptResponse, GetPromptResult, InputRequest,
    InputRequiredResult, Prompt, PromptArgument, PromptMessage, ReadResourceResult, Resource, ResourceContents,
    ResourceTemplate, Role,
};
use serde_json::{Map, Value, json};

/// A 1×1 PNG.
const PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
/// The resource the subscription scenarios watch.
pub(super) const WATCHED: &str = "test://watched-resource";

/// The scenarios' direct resources.
pub(super) fn resources() -> Vec<Resource> {
    [
        (
            "test://static-text",
            "static-text",
            "text/plain",
            "A static text resource",
        ),
        (
            "test://static-binary",
            "static-binary",
            "image/png",
            "A static binary resource",
        ),
        (
            WATCHED,
            "watched-resource",
            "text/plain",
            "A resource that announces updates",
        ),
    ]
    .into_iter()
    .map(|(uri, name, mime, description)| {
        let mut r = Resource::new(uri, name);
        r.mime_type = Some(mime.into());
        r.description = Some(description.into());
        r
    })
    .collect()
}

/// The scenarios' resource template.
pub(super) fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new("test://template/{id}/data", "template-data")
            .with_description("Data for one id")
            .with_mime_type("application/json"),
    ]
}

/// Reads one of the scenarios' resources, or `None`.
pub(super) fn read(uri: &str) -> Option<ReadResourceResult> {
    let contents = match uri {
        "test://static-text" => {
            ResourceContents::text("This is the content of the static text resource.", uri).with_mime_type("text/plain")
        }
        "test://static-binary" => ResourceContents::blob(PIXEL_PNG, uri).with_mime_type("image/png"),
        WATCHED => ResourceContents::text("Watched resource content.", uri).with_mime_type("text/plain"),
        _ => {
            let id = uri.strip_prefix("test://template/")?.strip_suffix("/data")?;
            let data = json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") });
            ResourceContents::text(data.to_string(), uri).with_mime_type("application/json")
        }
    };
    Some(ReadResourceResult::new(vec![contents]))
}

/// The scenarios' prompts.
pub(super) fn prompts() -> Vec<Prompt> {
    let required = |name: &str, description: &str| {
        PromptArgument::new(name)
            .with_description(description)
            .with_required(true)
    };
    vec![
        Prompt::new("test_simple_prompt", Some("A prompt without arguments"), None),
        Prompt::new(
            "test_prompt_with_arguments",
            Some("A prompt with two required arguments"),
            Some(vec![
                required("arg1", "First test argument"),
                required("arg2", "Second test argument"),
            ]),
        ),
        Prompt::new(
            "test_prompt_with_embedded_resource",
            Some("A prompt that embeds a resource"),
            Some(vec![required("resourceUri", "URI of the resource to embed")]),
        ),
        Prompt::new("test_prompt_with_image", Some("A prompt with an image"), None),
        Prompt::new(
            INPUT_REQUIRED_PROMPT,
            Some("A prompt that first asks its user for context (2026-07-28 input request)"),
            None,
        ),
    ]
}

/// The prompt that answers its first round with an `InputRequiredResult`.
const INPUT_REQUIRED_PROMPT: &str = "test_input_required_result_prompt";

/// `prompts/get` of one of the scenarios' prompts, or `None`: the input
/// prompt asks for context first, then answers with it.
pub(super) fn get_prompt(request: &GetPromptRequestParams) -> Option<GetPromptResponse> {
    if request.name != INPUT_REQUIRED_PROMPT {
        return prompt(&request.name, &request.arguments.clone().unwrap_or_default()).map(Into::into);
    }
    let Some(answer) = request.input_responses.as_ref().and_then(|r| r.get("user_context")) else {
        let schema = serde_json::from_value(json!({
            "type": "object",
            "properties": { "context": { "type": "string" } },
            "required": ["context"]
        }))
        .expect("a valid schema");
        let ask = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: "What context should the prompt use?".into(),
            requested_schema: schema,
        };
        let requests = BTreeMap::from([(
            "user_context".to_string(),
            InputRequest::Elicitation(ElicitRequest::new(ask)),
        )]);
        return Some(GetPromptResponse::InputRequired(
            InputRequiredResult::from_input_requests(requests),
        ));
    };
    let context = answer
        .pointer("/content/context")
        .and_then(Value::as_str)
        .unwrap_or("none");
    let text = format!("Prompt with the context the user gave: {context}");
    Some(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]).into())
}

/// One of the scenarios' plain prompts with `arguments` filled in, or `None`.
fn prompt(name: &str, arguments: &Map<String, Value>) -> Option<GetPromptResult> {
    let arg = |key: &str| arguments.get(key).and_then(Value::as_str).unwrap_or("").to_string();
    let messages = match name {
        "test_simple_prompt" => vec![PromptMessage::new_text(
            Role::User,
            "This is a simple prompt for testing.",
        )],
        "test_prompt_with_arguments" => vec![PromptMessage::new_text(
            Role::User,
            format!("Prompt with arguments: arg1='{}', arg2='{}'", arg("arg1"), arg("arg2")),
        )],
        "test_prompt_with_embedded_resource" => vec![
            PromptMessage::new_resource(
                Role::User,
                arg("resourceUri"),
                Some("text/plain".into()),
                Some("Embedded resource content for testing.".into()),
                None,
                None,
                None,
            ),
            PromptMessage::new_text(Role::User, "Please process the embedded resource above."),
        ],
        "test_prompt_with_image" => vec![
            PromptMessage::new_image(Role::User, &pixel(), "image/png", None, None),
            PromptMessage::new_text(Role::User, "Please analyze the image above."),
        ],
        _ => return None,
    };
    Some(GetPromptResult::new(messages))
}

fn pixel() -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(PIXEL_PNG)
        .expect("a valid constant")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_substitutes_its_id_and_unknown_uris_are_none() {
        let r = serde_json::to_value(read("test://template/123/data").unwrap()).unwrap();
        let text: Value = serde_json::from_str(r["contents"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(
            text,
            json!({"id": "123", "templateTest": true, "data": "Data for ID: 123"})
        );
        assert!(read("test://nothing").is_none());
        assert_eq!(pixel()[..4], [0x89, b'P', b'N', b'G']);
    }
}
