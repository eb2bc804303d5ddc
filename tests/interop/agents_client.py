"""Drive mcp-gateway over stdio with openai-agents' MCP client
(`MCPServerStdio`), as an agent starts it: a fresh gateway, then at once a
tool_execute of TOOLKEY with ARGUMENTS (a JSON object).

Usage: python agents_client.py GATEWAY CONFIG TOOLKEY ARGUMENTS [TIMEOUT]
TIMEOUT is the client's per-request timeout in seconds (openai-agents'
default, 5, when absent). Prints one JSON line: {"version", "tools",
"text", "isError", "firstAnswerMs"} (from connecting to the call's answer).
"""
import asyncio
import json
import os
import sys
import time
from importlib.metadata import version

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")

from agents.mcp import MCPServerStdio  # noqa: E402


async def main(gateway: str, config: str, key: str, arguments: str, timeout: float) -> None:
    params = {"command": gateway, "args": ["serve", "--config", config]}
    started = time.monotonic()
    async with MCPServerStdio(params=params, client_session_timeout_seconds=timeout) as server:
        tools = [t.name for t in await server.list_tools()]
        result = await server.call_tool("tool_execute", {"toolKey": key, "arguments": arguments})
        elapsed = time.monotonic() - started
    text = " ".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    print(json.dumps({
        "version": version("openai-agents"),
        "tools": tools,
        "text": text,
        "isError": bool(result.isError if hasattr(result, "isError") else result.is_error),
        "firstAnswerMs": round(elapsed * 1000),
    }))


if __name__ == "__main__":
    args = sys.argv[1:]
    asyncio.run(main(*args[:4], float(args[4]) if len(args) > 4 else 5.0))
