"""A small MCP server on the official Python SDK (`mcp` 2.x, `MCPServer`, formerly FastMCP).

Tools:
  echo(text)   returns text
  sleep(ms)    awaits ms milliseconds (the event loop stays free)
  block(ms)    time.sleep(ms) inside an async tool: blocks the event loop, so the server
               answers nothing at all (ping included) until it returns

Usage:
  server.py --port N [--transport http|sse] [--reject 401|403]
  server.py --transport stdio

--transport http  Streamable HTTP at /mcp (default)
--transport sse   legacy HTTP+SSE (2024-11-05): GET /sse, POST /messages/
--transport stdio one session on stdin and stdout (no port)
--reject S        an ASGI middleware answers every request with status S (a server that
                  refuses us: 401 with WWW-Authenticate, or 403)

Prints nothing of its own; uvicorn logs at warning level on stderr.
"""

import argparse
import asyncio
import json
import os
import sys
import time

import uvicorn
from mcp.server.mcpserver import Context, MCPServer

mcp = MCPServer("counterpart-py", log_level="WARNING")
BOOT = f"{os.getpid()}-{time.time_ns()}"


@mcp.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@mcp.tool()
async def sleep(ms: int) -> str:
    """Sleep ms milliseconds without blocking the server."""
    await asyncio.sleep(ms / 1000)
    return f"slept {ms} ms"


@mcp.tool()
async def block(ms: int) -> str:
    """Block the whole server (its event loop) for ms milliseconds."""
    time.sleep(ms / 1000)
    return f"blocked {ms} ms"


@mcp.tool()
def meta(ctx: Context) -> str:
    """The W3C trace context this call carried in its `_meta` (traceparent, tracestate)."""
    got = ctx.request_context.meta
    if got is not None and not isinstance(got, dict):
        got = got.model_dump() if hasattr(got, "model_dump") else dict(got)
    got = got or {}
    return json.dumps({key: got.get(key) for key in ("traceparent", "tracestate")})


@mcp.tool()
def whoami() -> str:
    """This server process's boot id."""
    return BOOT


class Reject:
    """ASGI middleware answering every HTTP request with one status."""

    def __init__(self, app, status: int):
        self.app = app
        self.status = status

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        body = json.dumps({"error": f"rejected with {self.status} by the test middleware"}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        if self.status == 401:
            headers.append((b"www-authenticate", b'Bearer realm="counterpart"'))
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int)
    parser.add_argument("--transport", choices=["http", "sse", "stdio"], default="http")
    parser.add_argument("--reject", type=int, choices=[401, 403])
    parser.add_argument("--tag", help="ignored: marks the process for pkill")
    args = parser.parse_args()
    if args.transport == "stdio":
        mcp.run("stdio")
        return
    if args.port is None:
        parser.error("--port is required with --transport http or sse")
    if args.transport == "http":
        app = mcp.streamable_http_app()
    else:
        app = mcp.sse_app()
    if args.reject:
        app = Reject(app, args.reject)
    config = uvicorn.Config(app, host="127.0.0.1", port=args.port, log_level="warning")
    uvicorn.Server(config).run()


if __name__ == "__main__":
    sys.exit(main())
