"""Run one code-mode script through mcp-gateway with the official MCP Python SDK.

Usage: python script_client.py (URL | stdio:GATEWAY_BINARY:CONFIG) SCRIPT_FILE KEY...
Waits until tool_discovery finds every KEY (a server's tools reach the catalog
a moment after it starts), then prints the script's structuredContent
({result, logs, calls}) as one JSON line.
"""
import asyncio
import json
import sys

from mcp import Client, StdioServerParameters


async def main(target: str, script_file: str, keys: list[str]) -> None:
    if target.startswith("stdio:"):
        _, command, config = target.split(":")
        server = StdioServerParameters(command=command, args=["serve", "--config", config])
    else:
        server = target
    with open(script_file) as f:
        script = f.read()
    async with Client(server) as client:
        tools = (await client.list_tools()).tools
        execute = next(t for t in tools if t.name == "tool_execute")
        assert "script" in execute.input_schema["properties"], execute
        for key in keys:
            query = key.split(":")[1].replace("-", " ").replace("_", " ")
            for tries in range(101):
                found = await client.call_tool("tool_discovery", {"query": query, "maxResults": 50})
                if any(r["toolKey"] == key for r in found.structured_content["results"]):
                    break
                assert tries < 100, f"{key} never appeared"
                await asyncio.sleep(0.2)
        result = await client.call_tool("tool_execute", {"script": script})
        assert not result.is_error, result
        print(json.dumps(result.structured_content))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
