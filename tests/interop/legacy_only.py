"""Serves an `MCPServer` (official Python SDK 2.x) over stdio in the 2025
(session) generation only: `MCPServer.run()` lets the client's first request
pick the generation; the handshake-only loop refuses 2026-07-28 (there is no
public switch). Shared by the test servers' `--legacy` mode."""
import anyio

from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server


def run(mcp) -> None:
    async def serve() -> None:
        low = mcp._lowlevel_server  # noqa: SLF001
        async with stdio_server() as (read, write), low.lifespan(low) as state:
            await serve_loop(low, read, write, lifespan_state=state, init_options=low.create_initialization_options())

    anyio.run(serve)
