"""Streamed replies: server-sent events read as they arrive, assembled into the same reply a
non-streamed request gets, so everything after (parsing, repairs, the grounding check, usage)
is the same code either way.

Each dialect has a `StreamReader` (openai.py, anthropic.py): `feed` takes one event's data and
hands the text that arrived to `emit`; `payload()` is the reply as a non-streamed response
would have held it; `complete` says the stream ended as it should (a stream cut part-way is a
failed attempt, retried as a dropped connection is).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from agent_cli.core.seams import TextDelta
from agent_cli.text import JsonTextError, read_json

MAX_EVENT_BYTES = 1_048_576  # one event's data; a server sending more is not streaming a reply


class StreamFailed(Exception):
    """The stream says the reply failed (an error event). `retryable`: as a 5xx would be."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


class StreamReader(Protocol):
    @property
    def complete(self) -> bool:
        """The stream ended as it should: the reply is whole."""
        ...

    @property
    def events(self) -> int:
        """Events read so far."""
        ...

    def feed(self, event: str, data: str) -> None: ...

    def payload(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class ServerEvent:
    event: str  # "message" when the server names none
    data: str


class SseParser:
    """Bytes in, events out, as the HTML spec reads text/event-stream: lines of `field: value`,
    `data` lines joined, a blank line ends an event, `:` lines are comments."""

    def __init__(self) -> None:
        self._buffer = b""
        self._event = ""
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> Iterator[ServerEvent]:
        self._buffer += chunk
        if len(self._buffer) > MAX_EVENT_BYTES:
            raise StreamFailed("a streamed event larger than 1 MiB", retryable=False)
        *lines, self._buffer = self._buffer.split(b"\n")
        for raw in lines:
            line = raw.rstrip(b"\r").decode("utf-8", errors="replace")
            if not line:
                if self._data:
                    yield ServerEvent(self._event or "message", "\n".join(self._data))
                self._event, self._data = "", []
                continue
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "data":
                self._data.append(value)
            elif name == "event":
                self._event = value


def event_json(data: str) -> Any:
    """One event's data as JSON; data that is not JSON means the stream cannot be read."""
    try:
        return read_json(data)
    except JsonTextError as exc:
        raise StreamFailed(f"a streamed event is not JSON ({exc})", retryable=False) from None


class JsonAnswer:
    """JSON mode streams a decision, `{"type": "final", "answer": "..."}`: only the answer's
    text, decoded as it arrives, is worth showing (a tool call shows nothing)."""

    def __init__(self, emit: Callable[[TextDelta], None]) -> None:
        self._emit = emit
        self._raw = ""
        self._shown = 0

    def __call__(self, delta: TextDelta) -> None:
        if delta.restart:
            self._raw, self._shown = "", 0
            self._emit(delta)
            return
        self._raw += delta.text
        answer = partial_answer(self._raw)
        if answer is not None and len(answer) > self._shown:
            self._emit(TextDelta(answer[self._shown :]))
            self._shown = len(answer)


def partial_answer(raw: str) -> str | None:
    """The decoded text of the `"answer"` string so far, or None before it starts. An escape
    cut in two by the stream is left for the next delta."""
    key = raw.find('"answer"')
    colon = raw.find(":", key + len('"answer"')) if key >= 0 else -1
    if colon < 0:
        return None
    start = colon + 1
    while start < len(raw) and raw[start] in " \t\r\n":
        start += 1
    if start >= len(raw) or raw[start] != '"':
        return None  # not begun yet, or not a string
    end = start + 1
    while end < len(raw) and raw[end] != '"':
        end += 2 if raw[end] == "\\" else 1
    body = raw[start + 1 : min(end, len(raw))]
    for cut in range(len(body), max(len(body) - 6, -1), -1):  # a \uXXXX may be half here
        try:
            return str(json.loads(f'"{body[:cut]}"'))
        except ValueError:
            continue
    return None
