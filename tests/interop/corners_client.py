"""The official MCP Python SDK (2.x) as the gateway's client, on a
downstream's roots and log messages (tests/interop/corners_server.py):
`tool_execute` of SERVER:where, the client answering roots/list with
file:///srv/project-x (or declaring no roots), then of SERVER:chatty with
log messages asked for from `info` up (`logging/setLevel` on a 2025
session, the per-request level at 2026-07-28).

Usage: python corners_client.py URL MODE SERVER ROOTS   (MODE: legacy | 2026-07-28;
ROOTS: yes | no)
Prints one JSON line: the protocol, each result's text, and the log messages.
"""
import asyncio
import json
import sys

from mcp_types import ListRootsResult, Root

from mcp import Client


async def main(url: str, mode: str, server: str, roots: bool) -> None:
    logged = []

    async def on_roots(context) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri="file:///srv/project-x", name="project x")])

    async def on_log(params) -> None:
        logged.append({"level": params.level, "data": params.data})

    options = {"list_roots_callback": on_roots} if roots else {}
    async with Client(url, mode=mode, logging_callback=on_log, log_level="info", **options) as client:
        if mode == "legacy":
            await client.set_logging_level("info")
        text = lambda r: " ".join(c.text for c in r.content if getattr(c, "type", "") == "text")
        where = await client.call_tool("tool_execute", {"toolKey": f"{server}:where", "arguments": {}})
        chatty = await client.call_tool("tool_execute", {"toolKey": f"{server}:chatty", "arguments": {}})
        # Notifications ride the call's stream ahead of its answer; a beat for the callback.
        await asyncio.sleep(0.2)
        print(json.dumps({"protocol": client.protocol_version, "where": text(where), "chatty": text(chatty), "logged": logged}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "yes"))
