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

import contextlib
import xml.etree.ElementTree as ET

import anyio
import mcp.types as types
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.client.subscriptions import ToolsListChanged, listen

WAIT_SECONDS = 20


def dump(model):
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def tool_result(r):
    text = "\n".join(c.text for c in r.content if getattr(c, "type", None) == "text")
    return {"is_error": bool(r.is_error), "text": text, "structured": r.structured_content}


async def run(plan):
    list_changed = {"count": 0}
    changed = anyio.Condition()

    async def count_one():
        async with changed:
            list_changed["count"] += 1
            changed.notify_all()

    async def on_message(message):
        # A notification sent on a subscriptions/listen stream carries its id and reaches
        # follow() too; count each notification once.
        if isinstance(message, types.ToolListChangedNotification):
            meta = (message.params.meta if message.params else None) or {}
            if "io.modelcontextprotocol/subscriptionId" not in meta:
                await count_one()

    async def follow(subscription):
        async for event in subscription:
            if isinstance(event, ToolsListChanged):
                await count_one()

    params = StdioServerParameters(
        command=plan["command"][0], args=plan["command"][1:], env=plan.get("env"), cwd=plan.get("cwd")
    )
    out = {"results": []}
    with open(plan["stderr"], "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as session, contextlib.AsyncExitStack() as stack:
                if plan.get("protocol") == "stateless":
                    # 2026-07-28: server/discover instead of initialize; list_changed arrives on
                    # a subscriptions/listen stream.
                    await session.discover()
                    subscription = await stack.enter_async_context(listen(session, tools_list_changed=True))
                    tasks = await stack.enter_async_context(anyio.create_task_group())
                    tasks.start_soon(follow, subscription)
                    stack.callback(tasks.cancel_scope.cancel)
                else:
                    await session.initialize()
                info = session.server_info
                out["server"] = {
                    "name": info.name if info else None,
                    "version": info.version if info else None,
                    "protocol": session.protocol_version,
                    "instructions": session.instructions,
                    "capabilities": dump(session.server_capabilities) if session.server_capabilities else None,
                }
                seen = 0
                for step in plan["steps"]:
                    op = step["op"]
                    if op == "list_tools":
                        r = await session.list_tools()
                        res = [dump(t) for t in r.tools]
                    elif op == "skill_xml":
                        # The `skill` tool's <available_skills>, read by an XML parser: it must
                        # be well-formed whatever the skills say.
                        tools = (await session.list_tools()).tools
                        desc = next(t.description for t in tools if t.name == "skill")
                        block = desc[desc.index("<available_skills>") :]
                        res = [
                            {child.tag: child.text for child in skill}
                            for skill in ET.fromstring(block).findall("skill")
                        ]
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
