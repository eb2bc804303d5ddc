"""Run three agent frameworks' MCP schema converters on the gateway's tools, offline.

Usage: python converters.py [FILE]
FILE (or stdin when absent or "-") holds a `tools/list` result, or just its
list of tools, as the gateway sends it (name, description, inputSchema, ...).

Each library turns an MCP tool's inputSchema into what it sends to its
model's API, and each has its own way to spoil a schema (issue 43, item 4):
openai-agents falls back to a non-strict tool when it cannot make the schema
strict; pydantic-ai closes an object that declares no properties
(`additionalProperties: false`, so "must be empty"); google-genai's
`Schema` keeps an object's type but not its `additionalProperties`, and
crashes on a boolean `additionalProperties` (and, converting a whole
list at once, loses every tool to one such crash). (smolagents, which
needs the MCP SDK 1.x, has a venv and a script of its own:
smolagents_client.py.) This script
calls the real conversion code, in-process, with no key and no network:

* openaiAgents: `MCPUtil.to_function_tool(..., convert_schemas_to_strict=True)`
  (what `Agent(mcp_config={"convert_schemas_to_strict": True})` does), then
  the Chat Completions converter that puts the tool on the wire.
* pydanticAi: the `ToolDefinition` its MCP toolset builds (the inputSchema
  unchanged), through the model profile's JSON-schema transformer and
  `_map_tool_definition`, for `OpenAIChatModel` ("openai") and
  `OpenAIResponsesModel` ("openaiResponses"); and for `GoogleModel`
  ("google"), the `parametersJsonSchema` it sends.
* googleGenai: `mcp_to_gemini_tool`, the path an MCP `Tool` or
  `ClientSession` in `tools=[...]` takes, then the Gemini Developer API
  request body built from it (`_GenerateContentParameters_to_mldev`);
  and `mcp_to_gemini_tools` over the whole list, as a `ClientSession` in
  `tools=[...]` converts it (a failure there is in `errors`).

Prints one JSON line: {"versions": {...}, "openaiAgents": {TOOL: ENTRY},
"pydanticAi": {TOOL: {"openai": ENTRY, "openaiResponses": ENTRY, "google":
ENTRY}}, "googleGenai": {TOOL: ENTRY}, "errors": [...]}. An ENTRY holds the
`schema` sent, `strict` where the API has that flag (and openai-agents'
`strictError`, why it fell back), and three lists of JSON pointers into
`schema`, each a node a model cannot fill with arbitrary arguments (or an
API refuses):
`closedEmptyObjects` (an object with no properties and
`additionalProperties: false`: only `{}` fits), `emptyObjects` (an object
with no properties, open or not: Gemini refuses one with "properties: should
be non-empty for OBJECT type", and google-genai drops the openness anyway)
`untyped` (no type at all: OpenAI's strict mode refuses the whole tool,
and Gemini's `Schema` needs a type) and `arraysWithoutItems` (OpenAI refuses
an array schema without `items`, strict or not). A converter that raises is named, with
its error, on stderr and in `errors`, and the exit status is 1.
"""
import copy
import json
import logging
import os
import sys
import traceback
from importlib.metadata import version

# Nothing here talks to a network; make sure no tracing exporter would try.
os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
# openai-agents says why strict conversion failed only when let log tool data.
os.environ.setdefault("OPENAI_AGENTS_DONT_LOG_TOOL_DATA", "0")

from mcp.types import Tool as McpTool  # noqa: E402

PACKAGES = ["mcp", "openai-agents", "openai", "pydantic-ai-slim", "google-genai"]
TYPED = ("type", "anyOf", "any_of", "oneOf", "allOf", "$ref", "enum", "const")


def lint(schema):
    """The nodes of `schema` that no arbitrary arguments fit, by JSON pointer."""
    found = {"closedEmptyObjects": [], "emptyObjects": [], "untyped": [], "arraysWithoutItems": []}

    def walk(node, path):
        if not isinstance(node, dict):
            return
        if not any(k in node for k in TYPED):
            found["untyped"].append(path)
        types = node.get("type")
        types = types if isinstance(types, list) else [types]
        is_object = any(isinstance(t, str) and t.lower() == "object" for t in types)
        if any(isinstance(t, str) and t.lower() == "array" for t in types) and "items" not in node:
            found["arraysWithoutItems"].append(path)
        if is_object and not node.get("properties"):
            found["emptyObjects"].append(path)
            if node.get("additionalProperties") is False:
                found["closedEmptyObjects"].append(path)
        for key in ("properties", "$defs", "defs", "definitions"):
            for name, sub in (node.get(key) or {}).items():
                walk(sub, f"{path}/{key}/{name}")
        for key in ("items", "additionalProperties"):
            walk(node.get(key), f"{path}/{key}")
        for key in ("anyOf", "any_of", "oneOf", "allOf"):
            for i, sub in enumerate(node.get(key) or []):
                walk(sub, f"{path}/{key}/{i}")

    walk(schema, "")
    return found


def entry(schema, **extra):
    return {**extra, "schema": schema, **lint(schema)}


class Captured(logging.Handler):
    """Keeps openai-agents' log lines: its only word on why strict failed."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def openai_agents(tool):
    from agents.mcp.server import MCPServerStdio
    from agents.mcp.util import MCPUtil
    from agents.models.chatcmpl_converter import Converter

    # Built, never started: to_function_tool only asks it for policies.
    server = MCPServerStdio(params={"command": "true"}, name="gateway")
    log = logging.getLogger("openai.agents")
    captured = Captured()
    log.addHandler(captured)
    level = log.level
    log.setLevel(logging.DEBUG)
    try:
        function_tool = MCPUtil.to_function_tool(tool, server, convert_schemas_to_strict=True)
    finally:
        log.removeHandler(captured)
        log.setLevel(level)
    sent = Converter.tool_to_openai(function_tool)["function"]
    why = [m for m in captured.messages if "strict" in m.lower()]
    return entry(sent["parameters"], strict=sent["strict"], strictError=why[-1] if why else None)


def pydantic_ai(tool):
    from pydantic_ai.models import ModelRequestParameters, _customize_tool_def
    from pydantic_ai.models.google import _function_declaration_from_tool
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
    from pydantic_ai.profiles.google import google_model_profile
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.tools import ToolDefinition

    def definition():
        # What MCPToolset.get_tools builds: the inputSchema as it came.
        return ToolDefinition(
            name=tool.name,
            description=tool.description,
            parameters_json_schema=copy.deepcopy(tool.input_schema),
        )

    def prepared(model):
        params = model.customize_request_parameters(ModelRequestParameters(function_tools=[definition()]))
        return params.function_tools[0]

    provider = OpenAIProvider(api_key="offline")
    chat = OpenAIChatModel("gpt-4.1", provider=provider)
    sent = chat._map_tool_definition(prepared(chat), {})["function"]
    responses = OpenAIResponsesModel("gpt-4.1", provider=provider)
    sent_responses = responses._map_tool_definition(prepared(responses), visibility="visible")
    # GoogleModel: the profile's transformer, then parametersJsonSchema.
    transformer = google_model_profile("gemini-2.5-flash")["json_schema_transformer"]
    google = _function_declaration_from_tool(_customize_tool_def(transformer, definition()))
    return {
        # Chat Completions omits `strict` unless the schema qualified.
        "openai": entry(sent["parameters"], strict=sent.get("strict", False)),
        "openaiResponses": entry(sent_responses["parameters"], strict=sent_responses["strict"]),
        "google": entry(google["parameters_json_schema"]),
    }


def google_genai(tool):
    from google import genai
    from google.genai import _common, _mcp_utils, models

    # The conversion alone first: it is what crashes on some schemas.
    _mcp_utils.mcp_to_gemini_tool(tool)
    client = genai.Client(api_key="offline")
    body = models._GenerateContentParameters_to_mldev(
        client._api_client,
        {"model": "gemini-2.5-flash", "contents": "hi", "config": {"tools": [tool]}},
    )
    body.pop("config", None)
    body = _common.encode_unserializable_types(_common.convert_to_dict(body))
    (declaration,) = body["tools"][0]["functionDeclarations"]
    return entry(declaration["parameters"])


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "-"
    listing = json.load(sys.stdin if path == "-" else open(path))
    raw_tools = listing["tools"] if isinstance(listing, dict) else listing
    tools = [McpTool.model_validate(t) for t in raw_tools]
    out = {
        "versions": {p: version(p) for p in PACKAGES},
        "openaiAgents": {},
        "pydanticAi": {},
        "googleGenai": {},
        "errors": [],
    }
    converters = [
        ("openaiAgents", "openai-agents", openai_agents),
        ("pydanticAi", "pydantic-ai-slim", pydantic_ai),
        ("googleGenai", "google-genai", google_genai),
    ]
    for key, package, convert in converters:
        for tool in tools:
            try:
                out[key][tool.name] = convert(tool)
            except Exception as e:  # a converter's own failure is the finding
                message = f"{package} {version(package)} failed to convert {tool.name}: {type(e).__name__}: {e}"
                out["errors"].append(message)
                print(message, file=sys.stderr)
                traceback.print_exc(limit=-3, file=sys.stderr)
    # What a `ClientSession` in google-genai's `tools=[...]` does: the whole
    # list at once, where one tool's failure loses them all.
    from google.genai import _mcp_utils

    try:
        _mcp_utils.mcp_to_gemini_tools(tools)
    except Exception as e:
        message = f"google-genai {version('google-genai')} failed to convert the list: {type(e).__name__}: {e}"
        out["errors"].append(message)
        print(message, file=sys.stderr)
    print(json.dumps(out))
    sys.exit(1 if out["errors"] else 0)


if __name__ == "__main__":
    main()
