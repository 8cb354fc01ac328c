#!/usr/bin/env python3
"""A small fake of the Anthropic Messages API, for driving the real Claude Code CLI in tests.

It listens on 127.0.0.1 only and answers POST /v1/messages (streaming SSE, or one JSON message
when the request does not ask for a stream). The conversation follows a script, a JSON list of
steps read from SCRIPT:

    [{"tool": "Bash", "input": {"command": "docker ps"}}, {"tool": "Write", "input": {...}}, ...]

A request that offers tools and carries the agent's conversation (the main loop) gets the next
step as one `tool_use` block; when the script is done it gets a final text answer. Every
`tool_result` block the CLI sends back is appended to RECORD (JSON lines: the step's index, its
tool_use id, is_error, and the result's text), so a test can assert exactly what the model saw.
Requests without tools (titles, summaries, quota checks) get a short text answer and are only
counted. The server writes its port to PORTFILE once it listens, and stops when the test kills it
or after a fixed number of requests (a bound, so a confused client cannot keep it busy forever).

usage: fake_api.py SCRIPT RECORD PORTFILE
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_REQUESTS = 2000
MODEL = "claude-sonnet-4-5"


class State:
    def __init__(self, script, record):
        self.script = script
        self.record = record
        self.lock = threading.Lock()
        self.requests = 0
        # tool_use id -> step index, for every id handed out.
        self.ids = {}
        self.recorded = set()


def result_text(block):
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text")
    return ""


def sse(handler, event, data):
    payload = "event: %s\ndata: %s\n\n" % (event, json.dumps(data))
    handler.wfile.write(payload.encode())
    handler.wfile.flush()


def message(blocks, stop_reason):
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None

    def log_message(self, fmt, *args):  # quiet: the test reads RECORD, not a log
        pass

    def reply_json(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.reply_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "fake API"}})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        st = self.state
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        with st.lock:
            st.requests += 1
            if st.requests > MAX_REQUESTS:
                self.reply_json(529, {"type": "error", "error": {"type": "overloaded_error", "message": "bound reached"}})
                threading.Thread(target=self.server.shutdown, daemon=True).start()
                return
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            self.reply_json(200, {"input_tokens": 10})
            return
        if not path.endswith("/v1/messages"):
            self.reply_json(404, {"type": "error", "error": {"type": "not_found_error", "message": path}})
            return
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            self.reply_json(400, {"type": "error", "error": {"type": "invalid_request_error", "message": "bad json"}})
            return
        blocks, stop = self.answer(req)
        if req.get("stream"):
            self.stream(blocks, stop)
        else:
            self.reply_json(200, message(blocks, stop))

    def answer(self, req):
        st = self.state
        names = {t.get("name") for t in req.get("tools") or []}
        messages = req.get("messages") or []
        if "Bash" not in names or not messages:
            return [{"type": "text", "text": "ok"}], "end_turn"
        # Record every tool_result of the last user turn, and count how many steps were answered.
        with st.lock:
            answered = 0
            for m in messages:
                if m.get("role") != "user" or not isinstance(m.get("content"), list):
                    continue
                for b in m["content"]:
                    if not isinstance(b, dict) or b.get("type") != "tool_result":
                        continue
                    tid = b.get("tool_use_id")
                    if tid in st.ids:
                        answered = max(answered, st.ids[tid] + 1)
                    if tid in st.ids and tid not in st.recorded:
                        st.recorded.add(tid)
                        line = {
                            "step": st.ids[tid],
                            "id": tid,
                            "is_error": bool(b.get("is_error")),
                            "text": result_text(b),
                        }
                        with open(st.record, "a", encoding="utf-8") as f:
                            f.write(json.dumps(line) + "\n")
            if answered >= len(st.script):
                return [{"type": "text", "text": "done"}], "end_turn"
            step = st.script[answered]
            tid = "toolu_%04d" % answered
            st.ids[tid] = answered
        return [{"type": "tool_use", "id": tid, "name": step["tool"], "input": step["input"]}], "tool_use"

    def stream(self, blocks, stop):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        start = message([], None)
        start["usage"] = {"input_tokens": 10, "output_tokens": 1}
        sse(self, "message_start", {"type": "message_start", "message": start})
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                sse(self, "content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}})
                sse(self, "content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": b["text"]}})
            else:
                head = {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}
                sse(self, "content_block_start", {"type": "content_block_start", "index": i, "content_block": head})
                delta = {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}
                sse(self, "content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta})
            sse(self, "content_block_stop", {"type": "content_block_stop", "index": i})
        sse(self, "message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 10}})
        sse(self, "message_stop", {"type": "message_stop"})
        self.close_connection = True


def main():
    if len(sys.argv) != 4:
        sys.stderr.write(__doc__)
        sys.exit(2)
    with open(sys.argv[1], encoding="utf-8") as f:
        script = json.load(f)
    Handler.state = State(script, sys.argv[2])
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(sys.argv[3] + ".tmp", "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    import os

    os.rename(sys.argv[3] + ".tmp", sys.argv[3])
    server.serve_forever()


if __name__ == "__main__":
    main()
