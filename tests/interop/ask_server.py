"""A downstream MCP server (stdio) written with the official Python SDK 2.x,
whose tool asks its user before it acts: `confirm_delete(count)`.

Over a 2026-07-28 connection it answers the first round with an
`InputRequiredResult` (an elicitation, and a `requestState` the SDK seals to
this tool and these arguments); the client's retry carries the answer. Over a
2025 (session) connection it sends `elicitation/create` mid-call instead.
Either way the answer decides: "deleted N files" or "kept the files".
With `--legacy` it speaks only the 2025 (session) generation.
"""
import json
import sys


from mcp_types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field

import legacy_only
from mcp.server.mcpserver import Context, MCPServer

mcp = MCPServer("ask")
CONFIRM = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Delete the files?"}},
    "required": ["confirm"],
}


class Confirm(BaseModel):
    confirm: bool = Field(title="Delete the files?")


@mcp.tool()
async def confirm_delete(count: int, ctx: Context) -> str | InputRequiredResult:
    """Delete `count` files, after asking the user."""
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        answer = await ctx.elicit(f"Delete {count} files?", Confirm)
        ok = answer.action == "accept" and answer.data.confirm
        return f"deleted {count} files" if ok else "kept the files"
    if ctx.request_state is None:
        return InputRequiredResult(
            input_requests={
                "confirm": ElicitRequest(
                    params=ElicitRequestFormParams(message=f"Delete {count} files?", requested_schema=CONFIRM)
                )
            },
            request_state=json.dumps({"count": count}),
        )
    state = json.loads(ctx.request_state)
    reply = (ctx.input_responses or {}).get("confirm")
    ok = isinstance(reply, ElicitResult) and reply.action == "accept" and bool((reply.content or {}).get("confirm"))
    return f"deleted {state['count']} files" if ok else "kept the files"


if __name__ == "__main__":
    if "--legacy" in sys.argv[1:]:
        legacy_only.run(mcp)
    else:
        mcp.run()
