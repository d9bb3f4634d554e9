"""Loopback fakes of the channels' APIs, written from their documentation and checking requests
as the real ones do (paths, auth headers, body shapes), so a test fails on a request the real
service would refuse:

- Chatwoot's application API: `POST /api/v1/accounts/{a}/conversations/{c}/messages` (header
  `api_access_token`; `{"content", "message_type"}`) and `.../toggle_status` (`{"status"}`).
- LINE's Messaging API: `POST /v2/bot/message/reply` (a reply token it issued, used once, while
  fresh), `/v2/bot/message/push` (`X-Line-Retry-Key` a UUID; a key again is 409 with
  `x-line-accepted-request-id`), `/v2/bot/chat/loading/start` (202); `Authorization: Bearer`.
- A receiver for the generic webhook's replies.

Each records what it accepted; `fail` queues statuses to answer the next requests with."""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: Any
    at: float = field(default_factory=time.monotonic)  # when it came


@dataclass
class _State:
    token: str
    accepted: list[Seen] = field(default_factory=list)
    refused: list[tuple[int, Seen]] = field(default_factory=list)
    fail: deque[tuple[int, dict[str, str]]] = field(default_factory=deque)
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Fake:
    def __init__(self, token: str) -> None:
        self.state = _State(token)
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                seen = Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                status, answer, headers = fake.answer(seen)
                data = json.dumps(answer).encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def fail(self, *statuses: int, headers: dict[str, str] | None = None) -> None:
        self.state.fail.extend((status, headers or {}) for status in statuses)

    @property
    def accepted(self) -> list[Seen]:
        with self.state.lock:
            return list(self.state.accepted)

    @property
    def refused(self) -> list[tuple[int, Seen]]:
        with self.state.lock:
            return list(self.state.refused)

    def wait_for(self, count: int, seconds: float = 60.0, path: str = "") -> list[Seen]:
        """The accepted requests (whose path holds `path`), once there are `count` of them."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            found = [s for s in self.accepted if path in s.path]
            if len(found) >= count:
                return found
            time.sleep(0.02)
        raise AssertionError(
            f"{count} requests to {path or 'the fake'} never came: {self.accepted}"
        )

    def answer(self, seen: Seen) -> tuple[int, Any, dict[str, str]]:
        with self.state.lock:
            if self.state.fail:
                status, headers = self.state.fail.popleft()
                self.state.refused.append((status, seen))
                return status, {"error": "failing on purpose"}, headers
            status, body, headers = self.handle(seen)
            if 200 <= status < 300:
                self.state.accepted.append(seen)
            else:
                self.state.refused.append((status, seen))
            return status, body, headers

    def handle(self, seen: Seen) -> tuple[int, Any, dict[str, str]]:
        raise NotImplementedError


class FakeChatwoot(_Fake):
    """Chatwoot's application API for one account."""

    def __init__(self, token: str = "cw-api-token", account: int = 7) -> None:
        self.account = account
        self._next_id = 1000
        super().__init__(token)

    def handle(self, seen: Seen) -> tuple[int, Any, dict[str, str]]:
        if seen.headers.get("api_access_token") != self.state.token:
            return 401, {"error": "You need to sign in or sign up before continuing."}, {}
        found = re.fullmatch(
            r"/api/v1/accounts/(\d+)/conversations/(\d+)/(messages|toggle_status)", seen.path
        )
        if found is None or int(found[1]) != self.account:
            return 404, {"error": "not found"}, {}
        body = seen.body if isinstance(seen.body, dict) else {}
        if found[3] == "toggle_status":
            if body.get("status") not in ("open", "resolved", "pending", "snoozed"):
                return 422, {"error": "invalid status"}, {}
            return 200, {"payload": {"success": True, "current_status": body["status"]}}, {}
        if not isinstance(body.get("content"), str) or body.get("message_type") != "outgoing":
            return 422, {"error": "content and message_type outgoing are required"}, {}
        self._next_id += 1
        return 200, {"id": self._next_id, "content": body["content"], "message_type": 1}, {}

    def messages(self, conversation: int) -> list[str]:
        where = f"/conversations/{conversation}/messages"
        return [s.body["content"] for s in self.accepted if s.path.endswith(where)]


class FakeLine(_Fake):
    """LINE's Messaging API for one channel."""

    def __init__(self, token: str = "line-access-token", token_life: float = 60.0) -> None:
        self.token_life = token_life
        self._tokens: dict[str, float] = {}  # reply token -> when it expires
        self._retry_keys: dict[str, str] = {}  # X-Line-Retry-Key -> the request id it got
        super().__init__(token)

    def reply_token(self) -> str:
        token = secrets.token_hex(16)
        self._tokens[token] = time.monotonic() + self.token_life
        return token

    def handle(self, seen: Seen) -> tuple[int, Any, dict[str, str]]:
        if seen.headers.get("authorization") != f"Bearer {self.state.token}":
            return 401, {"message": "Authentication failed"}, {}
        body = seen.body if isinstance(seen.body, dict) else {}
        if seen.path == "/v2/bot/chat/loading/start":
            seconds = body.get("loadingSeconds", 20)
            if not isinstance(body.get("chatId"), str) or seconds % 5 or not 5 <= seconds <= 60:
                return 400, {"message": "The request body has 1 error(s)"}, {}
            return 202, {}, {}
        messages = body.get("messages")
        if not isinstance(messages, list) or not 1 <= len(messages) <= 5:
            return 400, {"message": "messages must hold 1 to 5"}, {}
        if any(m.get("type") != "text" or not 0 < len(m.get("text", "")) <= 5000 for m in messages):
            return 400, {"message": "a text message holds 1 to 5000 characters"}, {}
        if seen.path == "/v2/bot/message/reply":
            expires = self._tokens.pop(str(body.get("replyToken")), None)
            if expires is None or time.monotonic() > expires:
                return 400, {"message": "Invalid reply token"}, {}
            return 200, {"sentMessages": [{"id": "1"}]}, {}
        if seen.path == "/v2/bot/message/push":
            return self._push(seen, body)
        return 404, {"message": "Not found"}, {}

    def _push(self, seen: Seen, body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        key = seen.headers.get("x-line-retry-key", "")
        if key:
            try:
                uuid.UUID(key)
            except ValueError:
                return 400, {"message": "The retry key must be a UUID"}, {}
            if key in self._retry_keys:
                accepted = {"x-line-accepted-request-id": self._retry_keys[key]}
                return 409, {"message": "The retry key is already accepted"}, accepted
            self._retry_keys[key] = uuid.uuid4().hex
        if not isinstance(body.get("to"), str):
            return 400, {"message": "to is required"}, {}
        return 200, {"sentMessages": [{"id": "2"}]}, {}

    def texts(self) -> list[str]:
        return [
            m["text"]
            for s in self.accepted
            if s.path in ("/v2/bot/message/reply", "/v2/bot/message/push")
            for m in s.body["messages"]
        ]


class FakeReceiver(_Fake):
    """Where the generic webhook posts its replies: takes any JSON."""

    def __init__(self) -> None:
        super().__init__("")

    def handle(self, seen: Seen) -> tuple[int, Any, dict[str, str]]:
        return 200, {"ok": True}, {}
