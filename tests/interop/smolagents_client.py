"""Drive mcp-gateway with smolagents (its MCP tools come from mcpadapt), a
client nobody here wrote, and look at what its models would send OpenAI.

Usage: python smolagents_client.py URL TOOLKEY ARGUMENTS
Loads the gateway's tools as `ToolCollection.from_mcp` hands them to an
agent, writes each as smolagents' OpenAI-style models put it on the wire
(`get_tool_json_schema`), then runs a discovery with several queries (the
array form of `query`) and TOOLKEY with ARGUMENTS (a JSON object) through
the tools' own `forward`. Prints one JSON line: {"versions", "tools": {NAME:
ENTRY}, "found": [toolKey...], "ran": TEXT}, an ENTRY as converters.py
writes it (`arraysWithoutItems`: OpenAI refuses such a schema, strict or not).
"""
import json
import sys
from importlib.metadata import version

from smolagents import ToolCollection
from smolagents.models import get_tool_json_schema

from converters import entry


def main(url: str, key: str, arguments: str) -> None:
    server = {"url": url, "transport": "streamable-http"}
    with ToolCollection.from_mcp(server, trust_remote_code=True, structured_output=False) as collection:
        tools = {t.name: t for t in collection.tools}
        sent = {name: entry(get_tool_json_schema(t)["function"]["parameters"]) for name, t in tools.items()}
        # Every field is sent: smolagents makes each one it sees required.
        found = tools["tool_discovery"](
            query=["add two numbers", "sum of two integers"], context=None, maxResults=5, servers=None
        )
        ran = tools["tool_execute"](toolKey=key, arguments=arguments, script=None)
    keys = [line.split(" ")[1] for line in found.splitlines() if line.startswith("- ")]
    print(json.dumps({
        "versions": {p: version(p) for p in ["mcp", "smolagents", "mcpadapt"]},
        "tools": sent,
        "found": keys,
        "ran": ran,
    }))


if __name__ == "__main__":
    main(*sys.argv[1:4])
