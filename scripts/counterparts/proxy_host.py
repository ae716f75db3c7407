"""A host written by others in front of `mcp-resilient proxy`: the official Python SDK's
`ClientSession` over `stdio_client` launches the proxy exactly as a host launches any stdio server,
with the Python SDK's own server (server.py) upstream over Streamable HTTP. The upstream is
SIGKILLed and restarted while the host's session stays open; then the host leaves with a call
in flight on a blocked server, and `leave_s` is how long the proxy took to go (the SDK closes
stdin, waits 2 s, then terminates it).

Usage: proxy_host.py BIN SERVER_PY PORT [proxy flags…]
BIN is the binary, or a command line that runs it as a host's configuration would write it
(`"npx -y mcp-resilient"`, `"uvx --from mcp-resilient-cli mcp-resilient"`: scripts/dist/test.sh);
PROXY_ENV (JSON) adds variables to the environment the SDK gives it; PROXY_CWD is its folder.
Prints one JSON object with what the host saw; exit 0 when every step behaved.
"""

import asyncio
import json
import os
import shlex
import socket
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def start_server(server_py: str, port: int) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, server_py, "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"server on {port} did not start")


def text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def main() -> int:
    bin_, server_py, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    extra = sys.argv[4:]
    out: dict = {}
    server = start_server(server_py, port)
    launch = shlex.split(bin_)
    params = StdioServerParameters(
        command=launch[0],
        args=[*launch[1:], "proxy", "--name", "py", *extra, "--url", f"http://127.0.0.1:{port}/mcp"],
        env=json.loads(os.environ["PROXY_ENV"]) if "PROXY_ENV" in os.environ else None,
        cwd=os.environ.get("PROXY_CWD"),
    )
    # The proxy's log (stderr) goes to PROXY_LOG if set, else it is dropped.
    errlog = open(os.environ.get("PROXY_LOG", os.devnull), "w")
    ok = True
    try:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                out["host_protocol"] = init.protocol_version
                out["server_info"] = init.server_info.name if init.server_info else None
                tools = await session.list_tools()
                out["tools"] = sorted(t.name for t in tools.tools)
                out["before"] = text(await session.call_tool("echo", {"text": "before"}))
                boot1 = text(await session.call_tool("whoami", {}))

                # SIGKILL the upstream; restart it 1 s later while a call is waiting.
                server.kill()
                server.wait()
                killed = time.time()

                async def restart():
                    await asyncio.sleep(1.0)
                    return await asyncio.to_thread(start_server, server_py, port)

                restarted, during = await asyncio.gather(
                    restart(), session.call_tool("echo", {"text": "during"}))
                server = restarted
                out["during"] = {"is_error": bool(during.is_error), "text": text(during),
                                 "s_after_kill": round(time.time() - killed, 2)}
                out["after"] = text(await session.call_tool("echo", {"text": "after"}))
                boot2 = text(await session.call_tool("whoami", {}))
                out["new_process"] = boot1 != boot2

                # A long outage: the call waits call_wait, then reads as a sentence.
                server.kill()
                server.wait()
                t = time.time()
                down = await session.call_tool("echo", {"text": "down"})
                out["down"] = {"is_error": bool(down.is_error), "text": text(down),
                               "s": round(time.time() - t, 2)}
                server = await asyncio.to_thread(start_server, server_py, port)
                deadline = time.time() + 30
                while True:
                    back = await session.call_tool("echo", {"text": "back"})
                    if not back.is_error or time.time() > deadline:
                        break
                out["back"] = text(back)

                # Leave with a call in flight on a server whose event loop is blocked (it
                # answers nothing for 8 s, the session DELETE included): the proxy must be gone
                # before the SDK's 2 s grace ends, not killed at its end.
                blocked = asyncio.create_task(session.call_tool("block", {"ms": 8000}))
                await asyncio.sleep(0.5)
                leaving = time.time()
        out["host_left"] = "ok"
        out["leave_s"] = round(time.time() - leaving, 2)
        blocked.cancel()
    finally:
        server.kill()
        server.wait()
    ok = (out.get("before") == "before" and out.get("after") == "after" and out.get("new_process")
          and out.get("down", {}).get("is_error") and out.get("back") == "back"
          and (out["during"]["text"] == "during" or out["during"]["is_error"])
          and out.get("leave_s", 99) < 2)
    out["ok"] = bool(ok)
    print(json.dumps(out, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
