"""A stateless OpenAI-compatible chat server on loopback, for benchmarks (run as a subprocess).

    python benchmarks/loopback_llm.py [--latency SECONDS] [--steps N] [--mode tools|json]
                                      [--token-delay SECONDS] [--answer-words N]

Prints its port on stdout. Each request is answered from what it contains: while it holds fewer
than N-1 tool results, the reply calls lookup_order (then refund_policy); then a final answer
(of --answer-words words). With --token-delay the final answer is generated at that pace, a word
a token: a streamed request ("stream": true) gets each word as a server-sent event as it is
made, any other the whole reply once the last is. GET /stats returns the TCP connections
accepted and the request body sizes; POST /reset clears.
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


ANSWER = "Order A100 is refundable."
FILLER = "It was delivered 12 days ago, within the 30-day window, so a full refund applies."


def answer_text(words: int) -> str:
    """ANSWER, then FILLER's words again and again up to `words` words."""
    extra = (FILLER.split() * (words // len(FILLER.split()) + 1))[: max(0, words - 4)]
    return " ".join([ANSWER, *extra])


def reply_for(body: dict[str, Any], steps: int, mode: str, answer: str = ANSWER) -> dict[str, Any]:
    done = sum(
        1
        for m in body["messages"]
        if m["role"] == "tool" or (m["role"] == "user" and m["content"].startswith("Result of"))
    )
    if done >= steps - 1:
        content, calls = answer, None
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


def chunks(reply: dict[str, Any]) -> list[dict[str, Any]]:
    """The reply as Chat Completions chunks: the content a word at a time, then the rest."""
    message = reply["choices"][0]["message"]
    content = message.get("content") or ""
    words = [w + " " for w in content.split(" ")]
    words[-1] = words[-1].rstrip(" ")
    pieces = [{"content": word} for word in words if word] if content else []
    if message.get("tool_calls"):
        pieces.append(
            {"tool_calls": [dict(c, index=i) for i, c in enumerate(message["tool_calls"])]}
        )
    finish = reply["choices"][0]["finish_reason"]
    return [
        *({"choices": [{"index": 0, "delta": piece, "finish_reason": None}]} for piece in pieces),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
        {"choices": [], "usage": reply["usage"]},
    ]


def write_events(out: Any, events: list[dict[str, Any]], token_delay: float) -> None:
    """Server-sent events in HTTP chunks, each word's after `token_delay` (its making)."""
    for event in [*(f"data: {json.dumps(e)}\n\n" for e in events), "data: [DONE]\n\n"]:
        if '"content"' in event:
            time.sleep(token_delay)
        data = event.encode()
        out.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        out.flush()
    out.write(b"0\r\n\r\n")


def serve(
    latency: float, steps: int, mode: str, token_delay: float = 0.0, words: int = 4
) -> ThreadingHTTPServer:
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
            body = json.loads(raw)
            reply = reply_for(body, steps, mode, answer_text(words))
            tokens = len((reply["choices"][0]["message"].get("content") or "").split())
            if body.get("stream") is True:
                self._events(chunks(reply))
                return
            time.sleep(token_delay * tokens)  # generated in full before it is sent
            self._json(reply)

        def _events(self, events: list[dict[str, Any]]) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            write_events(self.wfile, events, token_delay)

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
    parser.add_argument("--token-delay", type=float, default=0.0)
    parser.add_argument("--answer-words", type=int, default=4)
    args = parser.parse_args()
    server = serve(args.latency, args.steps, args.mode, args.token_delay, args.answer_words)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
