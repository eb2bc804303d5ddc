"""The official MCP Python SDK (2.x) as the gateway's client, answering a
downstream tool's question: `tool_execute` of TOOLKEY with {"count": 40},
the user answering ANSWER (yes|no) to whatever the tool asks.

Usage: python ask_client.py URL MODE TOOLKEY ANSWER [CALLS]   (MODE: legacy | 2026-07-28;
ANSWER: yes | no | none, a client that declares no elicitation capability;
CALLS: how many such calls to make at once over the one session, default 1)
Prints one JSON line: the protocol, the (first) result text, every result's
text, and what the user was asked.
"""
import asyncio
import json
import sys

from mcp_types import ElicitResult

from mcp import Client


async def main(url: str, mode: str, tool_key: str, answer: bool, calls: int) -> None:
    asked = []

    async def on_elicit(context, params) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"confirm": answer})

    callback = None if answer is None else on_elicit
    async with Client(url, mode=mode, elicitation_callback=callback) as client:
        call = lambda: client.call_tool("tool_execute", {"toolKey": tool_key, "arguments": {"count": 40}})
        results = await asyncio.gather(*(call() for _ in range(calls)))
        texts = [" ".join(c.text for c in r.content if getattr(c, "type", "") == "text") for r in results]
        result = results[0]
        error = (result.structured_content or {}).get("error", {}).get("code") if result.is_error else None
        print(json.dumps({"protocol": client.protocol_version, "isError": result.is_error, "text": texts[0], "texts": texts, "code": error, "asked": asked}))


if __name__ == "__main__":
    answer = {"yes": True, "no": False, "none": None}[sys.argv[4]]
    calls = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], answer, calls))
