"""A stateless OpenAI-compatible chat server on loopback, for benchmarks (run as a subprocess).

    python benchmarks/loopback_llm.py [--latency SECONDS] [--steps N] [--mode tools|json]

Prints its port on stdout. Each request is answered from what it contains: while it holds fewer
than N-1 tool results, the reply calls lookup_order (then refund_policy); then a final answer.
GET /stats returns the TCP connections accepted and the request body sizes; POST /reset clears.
"""

from __future__ import annotations

import argparse
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

STATS: dict[str, Any] = {"connections": 0, "request_bytes": []}
LOCK = threading.Lock()


def reply_for(body: dict[str, Any], steps: int, mode: str) -> dict[str, Any]:
    done = sum(
        1
        for m in body["messages"]
        if m["role"] == "tool" or (m["role"] == "user" and m["content"].startswith("Result of"))
    )
    if done >= steps - 1:
        content, calls = "Order A100 is refundable.", None
        if mode == "json":
            content = json.dumps({"type": "final", "answer": content})
    else:
        tool = "refund_policy" if done == steps - 2 else "lookup_order"
        code = "A100" if done == 0 else f"N{done:03d}"  # distinct calls: no repeated-call guard
        args = {} if tool == "refund_policy" else {"order_code": code}
        calls = [
            {
                "id": f"call_{done}",
                "type": "function",
                "function": {"name": tool, "arguments": json.dumps(args)},
            }
        ]
        content = None
        if mode == "json":
            content, calls = json.dumps({"type": "tool", "tool": tool, "args": args}), None
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return {
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10},
    }


def serve(latency: float, steps: int, mode: str) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # Like real servers: without it, header and body writes meet delayed ACKs (40 ms).
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with LOCK:
                STATS["connections"] += 1

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            self._json(STATS)

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length", 0)))
            if self.path == "/reset":
                with LOCK:
                    STATS.update(connections=0, request_bytes=[])
                self._json({})
                return
            with LOCK:
                STATS["request_bytes"].append(len(raw))
            time.sleep(latency)
            self._json(reply_for(json.loads(raw), steps, mode))

        def _json(self, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--mode", default="tools")
    args = parser.parse_args()
    server = serve(args.latency, args.steps, args.mode)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
