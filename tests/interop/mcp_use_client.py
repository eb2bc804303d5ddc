"""Drive mcp-gateway with mcp-use (Python), a client nobody here wrote.

Usage: python mcp_use_client.py URL TOOLKEY ARGUMENTS
mcp-use looks for OAuth metadata before it connects to any HTTP server, a
server that needs no token too (it logs an error when it finds none, and
goes on). Connects, lists the tools and runs TOOLKEY with ARGUMENTS (a JSON
object). Prints one JSON line: {"version", "tools", "text", "oauth"}, where
`oauth` says whether mcp-use went on with an OAuth sign-in or a token.
"""
import asyncio
import json
import os
import sys
from importlib.metadata import version

# Nothing here may reach a network: no usage reports.
os.environ.setdefault("MCP_USE_ANONYMIZED_TELEMETRY", "false")

from mcp_use import MCPClient  # noqa: E402


async def main(url: str, key: str, arguments: str) -> None:
    client = MCPClient.from_dict({"mcpServers": {"gateway": {"url": url}}})
    session = await client.create_session("gateway")
    try:
        tools = [t.name for t in await session.list_tools()]
        result = await session.call_tool("tool_execute", {"toolKey": key, "arguments": arguments})
        connector = session.connector
        oauth = connector._oauth is not None or connector._auth is not None  # noqa: SLF001
    finally:
        await client.close_all_sessions()
    print(json.dumps({
        "version": version("mcp-use"),
        "tools": tools,
        "text": " ".join(c.text for c in result.content if getattr(c, "type", "") == "text"),
        "oauth": oauth,
    }))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
