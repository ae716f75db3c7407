"""N hosts on the official Python MCP SDK (`ClientSession` over `streamable_http_client`, SDK 2.x), each
with its own session to `mcp-resilient serve` (or another gateway), calling `echo` and the
read-only `peek {ms}` in turn until the deadline. A failed call is followed by a ping: a host
whose ping fails too has lost its session, counts it, opens a new session and goes on.

With ERA 2026 (default 2025) the hosts are the SDK's `Client` pinned to revision 2026-07-28
(`mode="2026-07-28"`): no session and no ping at that revision, so a failed call is followed by
`tools/list`, and a host whose `tools/list` fails too counts as having lost its connection.

Usage: py_hosts.py URL HOSTS SECONDS PEEK_MS [ERA]
Environment: MCP_BEARER, a token sent as `Authorization: Bearer` (a gateway that wants one);
TOOL_PREFIX, put before the tool names (a gateway that renames them, e.g. "mock-").
Prints one JSON object: {"calls": [[host, tool, start, end, outcome, detail], ...],
"sessions_lost": N, "sessions": N}. Times are seconds since the epoch.
"""

import asyncio
import json
import os
import sys
import time

from mcp import Client, ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

URL, HOSTS, SECONDS, PEEK_MS = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
ERA = sys.argv[5] if len(sys.argv) > 5 else "2025"
BEARER = os.environ.get("MCP_BEARER")
PREFIX = os.environ.get("TOOL_PREFIX", "")
# One call may wait out an outage (serve's call wait, 10 s) and more: past this, it is failed.
CALL_LIMIT = 30.0


def text_of(result) -> str:
    return "".join(getattr(c, "text", "") or "" for c in result.content)


async def call_in_turn(name: str, call_tool, check, deadline: float, calls: list, turn: int) -> int:
    """Calls `peek` and `echo` in turn until the deadline, recording each call. After a failed call,
    `check()` must answer: if it raises, the connection counts as lost (the caller's except).
    Returns the turn reached, so a new connection goes on from it."""
    while time.time() < deadline:
        turn += 1
        tool, args = (("peek", {"ms": PEEK_MS}) if turn % 2 else ("echo", {"text": f"{name}-{turn}"}))
        start = time.time()
        try:
            result = await asyncio.wait_for(call_tool(PREFIX + tool, args), CALL_LIMIT)
        except Exception as error:  # the call failed; is the connection gone too?
            calls.append([name, tool, start, time.time(), "error", repr(error)[:200]])
            await asyncio.wait_for(check(), CALL_LIMIT)
            continue
        failed = getattr(result, "is_error", None) or getattr(result, "isError", False)
        outcome = "tool_error" if failed else "ok"
        calls.append([name, tool, start, time.time(), outcome, text_of(result)[:300]])
    return turn


async def host(index: int, deadline: float, calls: list, counts: dict) -> None:
    """A 2025-11-25 host: a session, checked with a ping after a failed call."""
    turn = 0
    while time.time() < deadline:
        try:
            # Without a token, the SDK's own default client, as before.
            http = create_mcp_http_client(headers={"Authorization": f"Bearer {BEARER}"}) if BEARER else None
            try:
                async with streamable_http_client(URL, http_client=http) as (read, write):
                    async with ClientSession(read, write) as session:
                        await asyncio.wait_for(session.initialize(), CALL_LIMIT)
                        counts["sessions"] += 1
                        turn = await call_in_turn(f"py{index}", session.call_tool, session.send_ping,
                                                  deadline, calls, turn)
            finally:
                if http is not None:
                    await http.aclose()
        except Exception:
            counts["sessions_lost"] += 1
            await asyncio.sleep(0.05)


async def modern_host(index: int, deadline: float, calls: list, counts: dict) -> None:
    """A 2026-07-28 host: every request stands alone, so 'lost' means a check after a failure failed."""
    turn = 0
    while time.time() < deadline:
        try:
            async with Client(URL, mode="2026-07-28") as client:
                counts["sessions"] += 1
                turn = await call_in_turn(f"py26-{index}", client.call_tool, client.list_tools,
                                          deadline, calls, turn)
        except Exception:
            counts["sessions_lost"] += 1
            await asyncio.sleep(0.05)


async def main() -> None:
    deadline = time.time() + SECONDS
    calls: list = []
    counts = {"sessions_lost": 0, "sessions": 0}
    one = modern_host if ERA == "2026" else host
    await asyncio.gather(*(one(i, deadline, calls, counts) for i in range(HOSTS)))
    print(json.dumps({"calls": calls, **counts}))


asyncio.run(main())
