"""A small MCP server on the official Python SDK (`mcp` 2.3, `MCPServer`, formerly FastMCP), the
upstream "py" of scripts/sdk-hosts/run.sh: two tools, one prompt, one resource, one template.

    py_server.py --transport stdio
    py_server.py --transport http --port N     # Streamable HTTP at /mcp on 127.0.0.1

Over HTTP it prints `LISTENING 127.0.0.1:PORT` on stderr once it accepts (port 0 picks one).

The SDK decides which revisions it speaks (2026-07-28 and the 2025 handshake era, on both
transports); nothing here pins one.
"""

import argparse
import asyncio
import sys

import uvicorn
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("sdk-hosts-py", log_level="WARNING")


@mcp.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.prompt()
def greet(name: str) -> str:
    """A greeting for name."""
    return f"Say hello to {name}."


@mcp.resource("info://about", mime_type="text/plain")
def about() -> str:
    """What this server is."""
    return "sdk-hosts-py: the Python SDK upstream of scripts/sdk-hosts"


@mcp.resource("greeting://{name}")
def greeting(name: str) -> str:
    """A greeting resource per name."""
    return f"Hello, {name}!"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--port", type=int)
    args = parser.parse_args()
    if args.transport == "stdio":
        mcp.run("stdio")
        return
    if args.port is None:
        parser.error("--port is required with --transport http")
    config = uvicorn.Config(mcp.streamable_http_app(), host="127.0.0.1", port=args.port, log_level="warning")
    asyncio.run(serve(uvicorn.Server(config)))


async def serve(server: uvicorn.Server) -> None:
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            return await task
        await asyncio.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    print(f"LISTENING 127.0.0.1:{port}", file=sys.stderr, flush=True)
    await task


if __name__ == "__main__":
    main()
