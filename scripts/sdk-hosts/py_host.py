"""A host on the official Python SDK (`mcp` 2.3, `Client`): connects to a server, runs the
steps of scripts/sdk-hosts/run.sh and prints one JSON line per step.

    py_host.py MODE UPSTREAM CALLS_JSON --url URL
    py_host.py MODE UPSTREAM CALLS_JSON --stdio CMD [ARG]...

MODE is the Client's `mode`: `auto` (its default: `server/discover`, then `initialize` on a legacy
server) or `legacy` (the `initialize` handshake, 2025-11-25). UPSTREAM names the entry of
CALLS_JSON whose tools and prompts are called. Lines: {"step": ..., "ok": bool, "error": ...};
the first is the connect step, with the negotiated "revision".
"""

import asyncio
import json
import sys

import anyio
from mcp import Client, StdioServerParameters

STEP_TIMEOUT = 20


def emit(step: str, ok: bool, error: str | None = None, **extra) -> None:
    print(json.dumps({"step": step, "ok": ok, "error": error, **extra}), flush=True)


def describe(e: BaseException) -> str:
    """One line: the exception's type and its message's first lines."""
    if isinstance(e, BaseExceptionGroup) and e.exceptions:
        return describe(e.exceptions[0])
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    return f"{type(e).__name__}: {' | '.join(lines[:4])}"[:400]


def tool_text(result) -> str:
    return "".join(getattr(c, "text", "") or "" for c in result.content)


async def step(name: str, action) -> object:
    try:
        with anyio.fail_after(STEP_TIMEOUT):
            value = await action()
    except Exception as e:  # the step's outcome is the report, whatever it is
        emit(name, False, describe(e))
        return None
    emit(name, True)
    return value


async def run(client: Client, calls: dict) -> None:
    tools = await step("tools/list", client.list_tools)
    listed = {t.name for t in tools.tools} if tools else set()
    for name, args in calls["tools"].items():
        if tools is not None and name not in listed:
            emit(f"tools/call {name}", False, "not listed")
            continue

        async def call(name=name, args=args):
            result = await client.call_tool(name, args)
            if result.is_error:
                raise RuntimeError(f"isError: {tool_text(result)[:300]}")
            return result

        await step(f"tools/call {name}", call)
    await step("prompts/list", client.list_prompts)
    for name, args in calls["prompts"].items():
        await step(f"prompts/get {name}", lambda name=name, args=args: client.get_prompt(name, args))
    resources = await step("resources/list", client.list_resources)
    await step("resources/templates/list", client.list_resource_templates)
    if resources is not None and resources.resources:
        uri = str(resources.resources[0].uri)
        await step("resources/read", lambda: client.read_resource(uri))
    else:
        emit("resources/read", False, "no resource listed")


async def main() -> int:
    mode, upstream, calls_file, how, *target = sys.argv[1:]
    calls = json.load(open(calls_file))[upstream]
    server = target[0] if how == "--url" else StdioServerParameters(command=target[0], args=target[1:])
    connected = False
    try:
        # One deadline for the whole run: a Client's task groups must be entered and left in
        # the same cancel scope, so the connect step has no scope of its own.
        with anyio.fail_after(STEP_TIMEOUT * 20):
            async with Client(server, mode=mode, read_timeout_seconds=STEP_TIMEOUT) as client:
                connected = True
                emit("connect", True, revision=client.protocol_version)
                await run(client, calls)
    except Exception as e:
        emit("connect" if not connected else "close", False, describe(e))
        return 1
    return 0

if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
