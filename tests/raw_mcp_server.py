"""An MCP server written by hand, without the SDK, so it can send what the SDK never would: a
tool listing in which some tools are malformed, and a 50 MB result.

    python tests/raw_mcp_server.py                    # over stdio
    python tests/raw_mcp_server.py http PORT json|sse # streamable HTTP on 127.0.0.1:PORT/mcp

With RAW_MCP_BIG set, the listing is 30 well-formed tools and 3.4 MB long.
Over HTTP, replies are one JSON body (`json`) or an event stream (`sse`); the `huge` tool's
result is 50 MB sent in 64 KB writes, and when the client goes away before the end, how many
bytes had been sent is written to $RAW_MCP_SENT.
"""

from __future__ import annotations

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}
TOOLS: list[Any] = [
    {"name": "good", "description": "A well-formed tool.", "inputSchema": SCHEMA},
    {"name": 5, "description": "A name that is a number.", "inputSchema": SCHEMA},
    {"name": "no_schema", "description": "No inputSchema at all."},
    {"name": "odd_description", "description": ["not", "text"], "inputSchema": SCHEMA},
    "not even an object",
    {"name": "also_good", "inputSchema": SCHEMA},
]
if os.environ.get("RAW_MCP_BIG"):  # a listing of 3.4 MB: 30 tools, each with a 7,000-value enum
    ENUM = [f"value-{i:06d}" for i in range(7000)]
    BIG = {"type": "object", "properties": {"q": {"type": "string", "enum": ENUM}}}
    TOOLS = [{"name": f"t{n}", "description": "d" * 1000, "inputSchema": BIG} for n in range(30)]


def answer(request: dict[str, Any]) -> dict[str, Any] | None:
    method = request.get("method")
    if method == "initialize":
        return {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "1"},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call" and request["params"]["name"] == "huge":
        return {"content": [{"type": "text", "text": "HUGE" + "a" * 50 * 2**20}]}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": f"ok from {request['params']['name']}"}]}
    return None


def reply_to(request: dict[str, Any]) -> bytes:
    result = answer(request)
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
    if result is None:
        reply["error"] = {"code": -32601, "message": "method not found"}
    else:
        reply["result"] = result
    return json.dumps(reply).encode()


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["content-length"])))
        if "id" not in request:  # a notification
            self.send_response(202)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        body = reply_to(request)
        if FORM == "sse":
            body = b"event: message\ndata: " + body + b"\n\n"
        self.send_response(200)
        kind = "text/event-stream" if FORM == "sse" else "application/json"
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.send_body(body)

    def send_body(self, body: bytes) -> None:
        sent = 0
        try:
            for start in range(0, len(body), 65536):
                self.wfile.write(body[start : start + 65536])
                sent += len(body[start : start + 65536])
        except OSError:  # the client went away
            if path := os.environ.get("RAW_MCP_SENT"):
                # Whole or not at all: the test polls for the file, and an empty one it
                # caught between open() and write() read as no number (seen under load).
                with open(f"{path}.part", "w", encoding="utf-8") as record:
                    record.write(str(sent))
                os.replace(f"{path}.part", path)

    def do_GET(self) -> None:  # no stream for server-initiated messages
        self.send_response(405)
        self.send_header("content-length", "0")
        self.end_headers()

    do_DELETE = do_GET

    def log_message(self, *_: Any) -> None:
        pass


FORM = sys.argv[3] if len(sys.argv) > 3 else "json"

if len(sys.argv) > 2 and sys.argv[1] == "http":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), Handler).serve_forever()

for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        continue  # a notification
    sys.stdout.write(reply_to(request).decode() + "\n")
    sys.stdout.flush()
