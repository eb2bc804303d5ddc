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

from mcp_types import ListRootsResult

import legacy_only
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import ListRoots, Resolve

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


if __name__ == "__main__":
    if "--legacy" in sys.argv[1:]:
        legacy_only.run(mcp)
    else:
        mcp.run()
