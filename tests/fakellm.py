"""A loopback HTTP server that speaks the OpenAI and Anthropic wire formats from a script.

It checks each request's shape the way the real APIs do (a tool call without its result, a
missing max_tokens, roles out of order...) and answers 400 for a bad one, recording why, so a
test can assert no request was malformed. It counts TCP connections, to prove reuse.
"""

from __future__ import annotations

import json
import re
import select
import socket
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # a dict (sent as JSON), or bytes/str sent as they are
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering
    trickle: float | None = None  # send the body one byte per this many seconds
    trickle_head: float | None = None  # send the status line and headers that way
    # Asked to stream, a 200 with a completion body is sent as server-sent events, one text
    # piece (a word) or argument piece per event, each after `token_delay` seconds. `events`
    # replaces those with exactly these (each a full "event: ...\ndata: ...\n\n" or
    # "data: ...\n\n"); `cut_after` drops the connection after that many, mid-reply.
    token_delay: float = 0.0
    events: list[str] | None = None
    cut_after: int | None = None


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # a client that hung up on purpose (a deadline, a size limit): not news
        super().handle_error(request, client_address)


class FakeLLM:
    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Seen] = []
        self.violations: list[str] = []
        self.connections = 0
        self.abandoned = 0  # replies whose client hung up before they were sent (or finished)
        # Imitate servers that refuse parts of a request (llama.cpp, Ollama, vLLM).
        # response_format forms answered with a 500: json_schema, json_object_schema (json_object
        # with a schema, which llama-cpp-python takes and OpenAI would not), json_object
        self.refuse_formats: set[str] = set()
        self.refuse_tools: Reply | None = None  # the answer to any request that has tools
        self.refuse_choice: Reply | None = None  # ...that names the tool to call (tool_choice)
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeLLM:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def queue(self, *replies: Reply | dict[str, Any]) -> None:
        for reply in replies:
            self.replies.append(reply if isinstance(reply, Reply) else Reply(body=reply))

    def bodies(self) -> list[Any]:
        return [seen.body for seen in self.requests if seen.method == "POST"]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so connection reuse can be observed

    def setup(self) -> None:
        super().setup()
        # Like real servers: without it, header and body writes meet delayed ACKs (40 ms).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.fake.connections += 1  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def do_GET(self) -> None:
        self._serve(None)

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", 0))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw
        self._serve(body)

    def _serve(self, body: Any) -> None:
        fake: FakeLLM = self.server.fake  # type: ignore[attr-defined]
        headers = {k.lower(): v for k, v in self.headers.items()}
        fake.requests.append(Seen(self.command, self.path, headers, body))
        problem = _shape_problem(self.path, headers, body) if self.command == "POST" else None
        refusal = _refusal(fake, body)
        if refusal is not None:
            reply = refusal
        elif problem:
            fake.violations.append(problem)
            reply = Reply(400, {"error": {"message": problem, "type": "invalid_request_error"}})
        elif fake.replies:
            reply = fake.replies.popleft()
        else:
            reply = Reply(500, {"error": {"message": "the test script ran out of replies"}})
        trickled = reply.trickle is not None or reply.trickle_head is not None  # sent as it is
        if (
            isinstance(body, dict)
            and body.get("stream") is True
            and reply.status == 200
            and not trickled
        ):
            events = reply.events or _as_events(reply.body, body)
            if events is not None:
                self._send_events(reply, events)
                return
        self._send(reply)

    def _send_events(self, reply: Reply, events: list[str]) -> None:
        if not self._generating(reply.delay):
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        try:
            for number, event in enumerate(events):
                if reply.cut_after is not None and number >= reply.cut_after:
                    self.close_connection = True  # no last chunk: the reply was cut
                    return
                if not self._generating(reply.token_delay):
                    return
                data = event.encode()
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            self.server.fake.abandoned += 1  # type: ignore[attr-defined]
            self.close_connection = True

    def _generating(self, seconds: float) -> bool:
        """Take `seconds` over a reply, as a server generating it would; False (and counted as
        abandoned) as soon as the client hangs up, as llama.cpp and vLLM then stop."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            readable, _, _ = select.select([self.connection], [], [], min(left, 0.05))
            if readable and not self.connection.recv(1, socket.MSG_PEEK):
                self.server.fake.abandoned += 1  # type: ignore[attr-defined]
                self.close_connection = True
                return False
        return True

    def _send(self, reply: Reply) -> None:
        if not self._generating(reply.delay):
            return
        payload = reply.body
        if isinstance(payload, dict | list):
            payload = json.dumps(payload).encode()
        elif isinstance(payload, str):
            payload = payload.encode()
        payload = payload or b""
        if reply.trickle_head is not None:
            self._trickle_head(reply, payload)
            return
        self.send_response(reply.status)
        content_type = "application/json" if isinstance(reply.body, dict | list) else "text/html"
        self.send_header("content-type", reply.headers.pop("content-type", content_type))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        try:
            if reply.trickle is None:
                self.wfile.write(payload)
            else:
                for byte in payload:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(reply.trickle)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _trickle_head(self, reply: Reply, payload: bytes) -> None:
        head = f"HTTP/1.1 {reply.status} OK\r\ncontent-type: application/json\r\n"
        head += f"content-length: {len(payload)}\r\n\r\n"
        try:
            for byte in head.encode():
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(reply.trickle_head or 0)
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass


def _words(text: str) -> list[str]:
    return re.findall(r"\s*\S+\s*", text) or [text]


def _pieces(text: str) -> list[str]:
    third = max(1, len(text) // 3)
    return [text[i : i + third] for i in range(0, len(text), third)] or [""]


def _sse(data: Any, event: str | None = None) -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n"


def _as_events(reply: Any, request: dict[str, Any]) -> list[str] | None:
    """A completion as the stream the real API would send for it (None: not a completion)."""
    if isinstance(reply, dict) and "choices" in reply:
        usage = (request.get("stream_options") or {}).get("include_usage") is True
        return _openai_events(reply, usage)
    if isinstance(reply, dict) and reply.get("type") == "message":
        return _anthropic_events(reply)
    return None


def _openai_events(reply: dict[str, Any], include_usage: bool) -> list[str]:
    choice = reply["choices"][0]
    message, finish = choice["message"], choice.get("finish_reason")

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> str:
        return _sse(
            {
                "id": reply.get("id", "chatcmpl-1"),
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            }
        )

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": word}) for word in _words(message.get("content") or "")]
    if message.get("refusal"):
        events.append(chunk({"refusal": message["refusal"]}))
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call["function"]
        start = {"index": index, "id": call["id"], "type": "function"}
        events.append(chunk({"tool_calls": [{**start, "function": {"name": function["name"]}}]}))
        events += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in _pieces(function["arguments"])
        ]
    events.append(chunk({}, finish))
    if include_usage and "usage" in reply:
        events.append(
            _sse({"object": "chat.completion.chunk", "choices": [], "usage": reply["usage"]})
        )
    return [*events, "data: [DONE]\n\n"]


def _anthropic_events(reply: dict[str, Any]) -> list[str]:
    usage = reply.get("usage", {})
    start = {**reply, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events = [_sse({"type": "message_start", "message": start}, "message_start")]
    for index, block in enumerate(reply["content"]):
        if block["type"] == "text":
            opened, deltas = (
                {"type": "text", "text": ""},
                [{"type": "text_delta", "text": word} for word in _words(block["text"])],
            )
        else:
            opened = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            raw = block["input"] if isinstance(block["input"], str) else json.dumps(block["input"])
            deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in _pieces(raw)]
        events.append(
            _sse(
                {"type": "content_block_start", "index": index, "content_block": opened},
                "content_block_start",
            )
        )
        events += [
            _sse(
                {"type": "content_block_delta", "index": index, "delta": delta},
                "content_block_delta",
            )
            for delta in deltas
        ]
        events.append(_sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
    events.append(
        _sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": reply.get("stop_reason"), "stop_sequence": None},
                "usage": {"output_tokens": usage.get("output_tokens", 0)},
            },
            "message_delta",
        )
    )
    return [*events, _sse({"type": "message_stop"}, "message_stop")]


def _refusal(fake: FakeLLM, body: Any) -> Reply | None:
    if not isinstance(body, dict):
        return None
    requested = body.get("response_format") or {}
    kind = requested.get("type")
    if kind == "json_object" and "schema" in requested:
        kind = "json_object_schema"
    for name in ("structured_outputs", "json_schema"):
        if name in body and name in fake.refuse_formats:
            # A server that forbids fields it does not know (pydantic's extra="forbid").
            message = f"1 validation error: {name}: Extra inputs are not permitted"
            return Reply(400, {"error": {"message": message, "type": "BadRequestError"}})
    if kind in fake.refuse_formats:
        # What llama-cpp-python's server answers for a response_format type it does not know.
        message = (
            "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
            f"'msg': \"Input should be 'text' or 'json_object'\", 'input': '{kind}'}}]"
        )
        return Reply(500, {"error": {"message": message, "type": "internal_server_error"}})
    if fake.refuse_tools is not None and body.get("tools"):
        return fake.refuse_tools
    if fake.refuse_choice is not None and isinstance(body.get("tool_choice"), dict):
        named = body["tool_choice"].get("type") in ("function", "tool")
        return fake.refuse_choice if named else None
    return None


def _shape_problem(path: str, headers: dict[str, str], body: Any) -> str | None:
    if not isinstance(body, dict):
        return "the body is not a JSON object"
    if path.endswith("/chat/completions"):
        return _openai_problem(body)
    if path.endswith("/v1/messages"):
        return _anthropic_problem(headers, body)
    return f"unknown path {path}"


_FUNCTION_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # both APIs (Anthropic allows 128)
_BAD_NAME = "String should match pattern '^[a-zA-Z0-9_-]{1,64}$'"


def _openai_tools_problem(tools: list[dict[str, Any]]) -> str | None:
    for tool in tools:
        function = tool.get("function", {})
        if tool.get("type") != "function" or "name" not in function or "parameters" not in function:
            return "each tool needs type function, a name and parameters"
        if not _FUNCTION_NAME.fullmatch(function["name"]):
            return f"Invalid 'tools.function.name' {function['name']!r}: {_BAD_NAME}"
    return None


def _openai_problem(body: dict[str, Any]) -> str | None:
    if not isinstance(body.get("model"), str) or not isinstance(body.get("messages"), list):
        return "model and messages are required"
    if problem := _openai_tools_problem(body.get("tools", [])):
        return problem
    pending: list[str] = []
    for message in body["messages"]:
        role = message.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            return f"unknown role {role}"
        if role == "tool":
            if message.get("tool_call_id") not in pending:
                return "a tool message must answer a pending tool_call_id"
            pending.remove(message["tool_call_id"])
            continue
        if pending:
            return f"tool_call_ids without a result: {pending}"
        if role == "assistant" and (problem := _assistant_problem(message, pending)):
            return problem
    return f"tool_call_ids without a result: {pending}" if pending else None


def _assistant_problem(message: dict[str, Any], pending: list[str]) -> str | None:
    """What is wrong with an assistant message; its calls' ids are added to `pending`."""
    if not isinstance(message.get("content"), str | list):  # llama-cpp-python's rule
        return "messages.assistant.content: Input should be a valid string"
    for call in message.get("tool_calls") or []:
        if not _FUNCTION_NAME.fullmatch(call["function"]["name"]):
            return f"Invalid 'messages.tool_calls.function.name' {call['function']['name']!r}"
        if not isinstance(call["function"]["arguments"], str):
            return "tool call arguments must be a string"
        if call["id"] in pending:
            return f"duplicate tool_call id {call['id']}"
        pending.append(call["id"])
    return None


def _anthropic_problem(headers: dict[str, str], body: dict[str, Any]) -> str | None:
    if "anthropic-version" not in headers:
        return "anthropic-version header is required"
    if not isinstance(body.get("max_tokens"), int):
        return "max_tokens: field required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or messages[0].get("role") != "user":
        return "messages must start with a user message"
    for tool in body.get("tools", []):
        if "name" not in tool or "input_schema" not in tool:
            return "each tool needs a name and an input_schema"
        if not _FUNCTION_NAME.fullmatch(tool["name"]):
            return f"tools.name {tool['name']!r}: {_BAD_NAME}"
    expected_role, pending, used = "user", [], set()
    for message in messages:
        if message.get("role") != expected_role:
            return f"roles must alternate; got {message.get('role')} for {expected_role}"
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        if not blocks or any(b.get("type") == "text" and not b.get("text") for b in blocks):
            return "text content blocks must be non-empty"
        results = [b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"]
        if sorted(results) != sorted(pending):
            return f"tool_use ids {pending} need exactly one tool_result each, got {results}"
        pending = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        if any(
            not _FUNCTION_NAME.fullmatch(b["name"]) for b in blocks if b.get("type") == "tool_use"
        ):
            return f"messages.content.tool_use.name: {_BAD_NAME}"
        if set(pending) & used or len(set(pending)) != len(pending):
            return f"tool_use ids must be unique: {pending}"
        used.update(pending)
        expected_role = "assistant" if expected_role == "user" else "user"
    return _anthropic_history_tools_problem(body, messages)


def _anthropic_history_tools_problem(body: dict[str, Any], messages: list[Any]) -> str | None:
    """The API's own words when a history of tool blocks comes without tools (reported in
    anthropic-sdk-python#494); and, stricter than anything documented, a tool_use naming a tool
    the request does not define (the API checks tool references so; agent-cli keeps them)."""
    blocks = [b for m in messages if isinstance(m.get("content"), list) for b in m["content"]]
    named = {b.get("name") for b in blocks if b.get("type") == "tool_use"}
    if not named and not any(b.get("type") == "tool_result" for b in blocks):
        return None
    defined = {tool.get("name") for tool in body.get("tools", [])}
    if not defined:
        return "Requests which include `tool_use` or `tool_result` blocks must define tools."
    if missing := sorted(str(name) for name in named - defined):
        return f"tool_use names a tool the request does not define: {missing}"
    return None


# --- replies in each dialect ------------------------------------------------------------------


def openai_calls(
    *calls: tuple[str, Any], text: str | None = None, usage: tuple[int, int] = (100, 20)
) -> dict[str, Any]:
    """A reply with tool calls; each call is (name, args dict or raw argument string)."""
    tool_calls = [
        {
            "id": f"call_{name}_{i}",
            "type": "function",
            "function": {
                "name": name,
                "arguments": args if isinstance(args, str) else json.dumps(args),
            },
        }
        for i, (name, args) in enumerate(calls)
    ]
    message = {"role": "assistant", "content": text, "tool_calls": tool_calls}
    return _openai(message, "tool_calls", usage)


def openai_text(
    text: str, *, finish: str = "stop", usage: tuple[int, int] = (100, 20)
) -> dict[str, Any]:
    return _openai({"role": "assistant", "content": text}, finish, usage)


def _openai(message: dict[str, Any], finish: str, usage: tuple[int, int]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-test",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": sum(usage),
        },
    }


def anthropic_calls(
    *calls: tuple[str, Any], text: str = "", usage: tuple[int, int] = (100, 20)
) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [
        {"type": "tool_use", "id": f"toolu_{name}_{i}", "name": name, "input": args}
        for i, (name, args) in enumerate(calls)
    ]
    return _anthropic(content, "tool_use", usage)


def anthropic_text(
    text: str, *, stop: str = "end_turn", usage: tuple[int, int] = (100, 20)
) -> dict[str, Any]:
    return _anthropic([{"type": "text", "text": text}] if text else [], stop, usage)


def _anthropic(content: list[dict[str, Any]], stop: str, usage: tuple[int, int]) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": stop,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }


def error(
    status: int,
    message: str,
    *,
    type_: str = "api_error",
    code: str | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    return Reply(
        status, {"error": {"message": message, "type": type_, "code": code}}, headers or {}
    )
