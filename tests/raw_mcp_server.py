"""An MCP server written by hand, without the SDK, so it can send what the SDK never would: a
tool listing in which some tools are malformed.

    python tests/raw_mcp_server.py
"""

from __future__ import annotations

import json
import sys
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
    if method == "tools/call":
        return {"content": [{"type": "text", "text": f"ok from {request['params']['name']}"}]}
    return None


for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        continue  # a notification
    result = answer(request)
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
    if result is None:
        reply["error"] = {"code": -32601, "message": "method not found"}
    else:
        reply["result"] = result
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
