"""Drive mcp-gateway with the official MCP Python SDK (2.x), a client nobody here wrote.

Usage: python python_client.py URL MODE   (MODE: legacy | auto)
Prints one JSON line with what it saw; exits non-zero on the first failed check.
"""
import asyncio
import json
import sys

from mcp import Client


async def main(url: str, mode: str) -> None:
    async with Client(url, mode=mode) as client:
        tools = (await client.list_tools()).tools
        names = [t.name for t in tools]
        # The meta-tools, then the tools that carry an MCP App, by their direct names.
        assert names[:2] == ["tool_discovery", "tool_execute"], names
        assert all("__" in n for n in names[2:]), names

        found = await client.call_tool("tool_discovery", {"query": ["add two numbers", "sum"], "maxResults": 5})
        assert not found.is_error, found
        results = found.structured_content["results"]
        keys = [r["toolKey"] for r in results]
        assert "everything:get-sum" in keys, keys

        run = await client.call_tool("tool_execute", {"toolKey": "everything:get-sum", "arguments": {"a": 2, "b": 40}})
        assert not run.is_error, run
        text = " ".join(c.text for c in run.content if getattr(c, "type", "") == "text")
        assert "42" in text, text

        bad = await client.call_tool("tool_execute", {"toolKey": "everything:get-sum", "arguments": {"a": "two"}})
        assert bad.is_error, bad
        assert bad.structured_content["error"]["code"] == "TOOL_VALIDATION_ERROR", bad.structured_content

        resources = (await client.list_resources()).resources
        assert resources, "resources pass through"
        first = str(resources[0].uri)
        read = await client.read_resource(first)
        assert read.contents, read

        print(json.dumps({"protocol": client.protocol_version, "tools": names, "found": keys[:3], "resources": len(resources)}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
