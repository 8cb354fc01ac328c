"""Drive `tiershim mcp` with the official Python MCP client (the `mcp` package, pinned in
scripts/test-deps.sh) through stdio_client and ClientSession, following a plan of steps.

Usage: drive.py PLAN.json. The plan names the server command, its environment and working
directory, a file for the server's stderr, and the steps. The result of every step is printed
as one JSON document on stdout; the Rust integration tests (tests/it/mcp.rs) make the
assertions. Waiting for a notification is bounded and event-driven: nothing here sleeps.
"""

import json
import os
import sys

import anyio
import mcp.types as types
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client

WAIT_SECONDS = 20


def dump(model):
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def tool_result(r):
    text = "\n".join(c.text for c in r.content if getattr(c, "type", None) == "text")
    return {"is_error": bool(r.is_error), "text": text, "structured": r.structured_content}


async def run(plan):
    list_changed = {"count": 0}
    changed = anyio.Condition()

    async def on_message(message):
        if isinstance(message, types.ToolListChangedNotification):
            async with changed:
                list_changed["count"] += 1
                changed.notify_all()

    params = StdioServerParameters(
        command=plan["command"][0], args=plan["command"][1:], env=plan.get("env"), cwd=plan.get("cwd")
    )
    out = {"results": []}
    with open(plan["stderr"], "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as session:
                init = await session.initialize()
                out["server"] = {
                    "name": init.server_info.name,
                    "version": init.server_info.version,
                    "protocol": init.protocol_version,
                    "instructions": init.instructions,
                    "capabilities": dump(init.capabilities),
                }
                seen = 0
                for step in plan["steps"]:
                    op = step["op"]
                    if op == "list_tools":
                        r = await session.list_tools()
                        res = [dump(t) for t in r.tools]
                    elif op == "call":
                        try:
                            res = tool_result(await session.call_tool(step["tool"], step.get("args", {})))
                        except MCPError as e:
                            res = {"protocol_error": {"code": e.error.code, "message": e.error.message}}
                    elif op == "prompts":
                        res = [dump(p) for p in (await session.list_prompts()).prompts]
                    elif op == "prompt":
                        r = await session.get_prompt(step["name"])
                        res = [m.content.text for m in r.messages]
                    elif op == "write":
                        os.makedirs(os.path.dirname(step["path"]), exist_ok=True)
                        with open(step["path"], "w") as f:
                            f.write(step["text"])
                        res = None
                    elif op == "remove":
                        os.remove(step["path"])
                        res = None
                    elif op == "wait_list_changed":
                        with anyio.move_on_after(WAIT_SECONDS):
                            async with changed:
                                while list_changed["count"] <= seen:
                                    await changed.wait()
                        seen = list_changed["count"]
                        res = {"list_changed": seen}
                    else:
                        raise SystemExit(f"unknown step {op!r}")
                    out["results"].append(res)
    out["list_changed"] = list_changed["count"]
    return out


def main():
    with open(sys.argv[1]) as f:
        plan = json.load(f)
    print(json.dumps(anyio.run(run, plan)))


if __name__ == "__main__":
    main()
