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
from mcp.shared.message import SessionMessage
from pydantic import TypeAdapter

WAIT_SECONDS = 20


class RawLine:
    """A line the SDK writes as it is: the stdio transport asks a message for its JSON, and this
    one answers with anything, so a client can send what no well-behaved client would."""

    def __init__(self, text):
        self.text = text

    def model_dump_json(self, **_):
        return self.text


class RawRequest:
    """A request of any method with any params, sent through ClientSession.send_request (so the
    session stamps it as it stamps its own)."""

    name_param = None

    def __init__(self, method, params):
        self.method = method
        self.params = params

    def model_dump(self, **_):
        data = {"method": self.method}
        if self.params is not None:
            data["params"] = self.params
        return data


def write_file(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


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
    # Error replies the session cannot route (no id): seen on the way in, before the session.
    unrouted = []
    arrived = anyio.Condition()

    async def tap(read, forward):
        async with forward:
            async for message in read:
                inner = getattr(message, "message", None)
                if isinstance(inner, types.JSONRPCError) and inner.id is None:
                    async with arrived:
                        unrouted.append({"code": inner.error.code, "message": inner.error.message})
                        arrived.notify_all()
                await forward.send(message)

    out = {"results": []}
    with open(plan["stderr"], "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), anyio.create_task_group() as taps:
            forward, tapped = anyio.create_memory_object_stream(64)
            taps.start_soon(tap, read, forward)
            async with ClientSession(tapped, write, message_handler=on_message) as session, contextlib.AsyncExitStack() as stack:
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
                        block = desc[desc.rindex("<available_skills>") :]
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
                        write_file(step["path"], step["text"])
                        res = None
                    elif op == "request":
                        # Any method, any params: the answer, or the error the server sent.
                        try:
                            res = {"result": await session.send_request(
                                RawRequest(step["method"], step.get("params")), TypeAdapter(dict)
                            )}
                        except MCPError as e:
                            res = {"error": {"code": e.error.code, "message": e.error.message}}
                    elif op == "raw":
                        # A line that is not a message; the reply has no id to route by.
                        seen_unrouted = len(unrouted)
                        await write.send(SessionMessage(RawLine(step["text"])))
                        with anyio.move_on_after(WAIT_SECONDS):
                            async with arrived:
                                while len(unrouted) <= seen_unrouted:
                                    await arrived.wait()
                        res = unrouted[seen_unrouted:]
                    elif op == "listen_then_change":
                        # Open a subscription, change the skills the moment it is acknowledged,
                        # and count the subscriptions that hear of it, `times` times.
                        heard = 0
                        for i in range(step["times"]):
                            path = step["path"].replace("{i}", str(i))
                            async with listen(session, tools_list_changed=True) as sub:
                                write_file(path, step["text"].replace("{i}", str(i)))
                                if step.get("then_list"):
                                    await session.call_tool("list_skills", {})
                                with anyio.move_on_after(WAIT_SECONDS):
                                    async for event in sub:
                                        if isinstance(event, ToolsListChanged):
                                            heard += 1
                                            break
                        res = {"heard": heard}
                    elif op == "remove":
                        os.remove(step["path"])
                        res = None
                    elif op == "link":
                        os.symlink(step["target"], step["path"])
                        res = None
                    elif op == "wait_list_changed":
                        with anyio.move_on_after(step.get("seconds", WAIT_SECONDS)):
                            async with changed:
                                while list_changed["count"] <= seen:
                                    await changed.wait()
                        seen = list_changed["count"]
                        res = {"list_changed": seen}
                    else:
                        raise SystemExit(f"unknown step {op!r}")
                    out["results"].append(res)
            taps.cancel_scope.cancel()
    out["list_changed"] = list_changed["count"]
    return out


def main():
    with open(sys.argv[1]) as f:
        plan = json.load(f)
    print(json.dumps(anyio.run(run, plan)))


if __name__ == "__main__":
    main()
