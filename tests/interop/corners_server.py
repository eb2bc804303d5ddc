"""A downstream MCP server (stdio) written with the official Python SDK 2.x
for the corners of MCP beside tools (issue 76):

- `where()` needs its client's roots (a `ListRoots` resolver): over a
  2026-07-28 connection it asks in an `InputRequiredResult`, over a 2025
  session with `roots/list` mid-call; either way only from a client that
  declared roots, else the SDK refuses ("did not declare the roots capability").
- `chatty()` logs "step one" at debug and "step two" at info mid-call, then
  answers "done". At 2026-07-28 the SDK sends them only for a request that
  names a log level in its `_meta`.

With `--legacy` it speaks only the 2025 (session) generation.
"""
import sys
from typing import Annotated

import anyio
from mcp_types import ListRootsResult

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import ListRoots, Resolve
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server

mcp = MCPServer("corners")


def roots() -> ListRoots:
    return ListRoots()


@mcp.tool()
async def where(found: Annotated[ListRootsResult, Resolve(roots)]) -> str:
    """The client's roots, by URI."""
    return " ".join(str(r.uri) for r in found.roots) or "no roots"


@mcp.tool()
async def chatty(ctx: Context) -> str:
    """Logs two steps, then answers."""
    await ctx.debug("step one")
    await ctx.info("step two")
    return "done"


async def serve_legacy_only() -> None:
    # As ask_server.py: the handshake-only loop refuses 2026-07-28.
    low = mcp._lowlevel_server  # noqa: SLF001
    async with stdio_server() as (read, write), low.lifespan(low) as state:
        await serve_loop(low, read, write, lifespan_state=state, init_options=low.create_initialization_options())


if __name__ == "__main__":
    if "--legacy" in sys.argv[1:]:
        anyio.run(serve_legacy_only)
    else:
        mcp.run()
