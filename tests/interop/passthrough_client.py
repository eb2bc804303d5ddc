"""The official MCP Python SDK (2.x) as the gateway's client, on the rest of
MCP beside tools: a prompt of a 2025 server (`everything:completable-prompt`),
completions of its arguments (the second narrowed by the first) and of a
resource template's, and `logging/setLevel`, which only the 2025 generation has.

Usage: python passthrough_client.py URL MODE   (MODE: legacy | 2026-07-28)
Prints one JSON line of what came back; a refused request gives its error code.
"""
import asyncio
import json
import sys

from mcp_types import PromptReference, ResourceTemplateReference

from mcp import Client
from mcp.shared.exceptions import MCPError

PROMPT = "everything:completable-prompt"


async def outcome(request):
    try:
        return await request
    except MCPError as e:
        return {"error": e.error.code, "message": e.error.message}


async def main(url: str, mode: str) -> None:
    async with Client(url, mode=mode) as client:
        prompt = await outcome(client.get_prompt(PROMPT, {"department": "Engineering", "name": "Alice"}))
        department = await outcome(client.complete(PromptReference(name=PROMPT), {"name": "department", "value": "E"}))
        lead = await outcome(
            client.complete(PromptReference(name=PROMPT), {"name": "name", "value": "A"}, {"department": "Engineering"})
        )
        template = ResourceTemplateReference(uri="demo://resource/dynamic/text/{resourceId}")
        resource = await outcome(client.complete(template, {"name": "resourceId", "value": "7"}))
        unknown = await outcome(client.complete(PromptReference(name="everything:no-such-prompt"), {"name": "x", "value": ""}))
        level = await outcome(client.set_logging_level("debug"))
        values = lambda r: r["message"] if isinstance(r, dict) else r.completion.values
        print(json.dumps({
            "protocol": client.protocol_version,
            "completions": client.server_capabilities.completions is not None,
            "prompt": prompt["message"] if isinstance(prompt, dict) else prompt.messages[0].content.text,
            "department": values(department),
            "lead": values(lead),
            "resource": values(resource),
            "unknown": unknown,
            "setLevel": level if isinstance(level, dict) else "ok",
        }))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
