"""What an MCP server may send us, however it is connected: no message past a byte cap is read
whole, and one malformed tool does not cost a server its whole listing.

`LineCap` is the core, fed bytes as they arrive. A stdio server's stdout is one JSON-RPC message
per line; a streamable HTTP reply is one JSON body (`whole`) or SSE lines whose `data:` holds the
message (`prefix`). A message longer than `cap` is not read whole: its first bytes are kept, the
rest skipped as it arrives, and an error reply to the same request id takes its place, saying how
it began. A 50 MB result becomes an `ERROR:` observation at once, not a read that copies the
growing message again for every chunk until the run times out. A tool listing has any tool the
SDK would refuse taken out (and named in its `_meta`); the SDK would refuse the whole listing.
"""

from __future__ import annotations

import json
import re
from contextlib import suppress

from mcp import types
from pydantic import ValidationError

MAX_LINE_BYTES = 4 * 1024 * 1024
SKIPPED_META = "agent-cli/skipped"  # where a listing says which tools were taken out
KEPT_BYTES = 4_096  # of an over-long message's start and end: where its request id is
SHOWN_CHARS = 500  # of its first text, in the error that replaces it
_ID = rb'"id"\s*:\s*(-?\d+|"[^"\\]{0,100}")'
_HEAD_ID = re.compile(rb'^\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*' + _ID)
_TAIL_ID = re.compile(rb'"jsonrpc"\s*:\s*"2\.0"\s*,\s*' + _ID + rb"\s*\}\s*$")
_TEXT = re.compile(rb'"text"\s*:\s*"')
_STRING_END = re.compile(r'((?:[^"\\]|\\.)*)"', re.DOTALL)
_LENIENT = json.JSONDecoder(strict=False)  # control characters as the server sent them


class LineCap:
    """Complete messages out of chunks in: `take` each chunk as it comes, `rest` at the end.

    `prefix` (SSE's b"data:"): only lines starting with it hold a message; others pass as they
    are. `whole`: newlines do not end a message (a JSON body, maybe pretty-printed)."""

    def __init__(self, cap: int = MAX_LINE_BYTES, *, prefix: bytes = b"", whole: bool = False):
        self._cap, self._prefix, self._whole = cap, prefix, whole
        self._line = bytearray()  # the message so far (at most `cap` bytes)
        self._tail = b""  # while skipping: the last bytes seen
        self._skipping = False

    def take(self, chunk: bytes) -> bytes:
        """The messages that `chunk` completes, each checked (or replaced), newlines kept."""
        out = bytearray()
        while chunk:
            end = -1 if self._whole else chunk.find(b"\n")
            part, chunk = (chunk, b"") if end < 0 else (chunk[: end + 1], chunk[end + 1 :])
            if self._skipping:
                self._tail = (self._tail + part)[-KEPT_BYTES:]
            elif len(self._line) + len(part) > self._cap:
                self._line += part[: max(0, self._cap - len(self._line))]
                self._skipping, self._tail = True, part[-KEPT_BYTES:]
            else:
                self._line += part
            if end >= 0:
                out += self._finished()
        return bytes(out)

    def rest(self) -> bytes:
        """At the end of the stream: a last message without its newline, checked or replaced."""
        return self._finished() if self._line else b""

    def cut_short(self) -> bytes | None:
        """Once the message being read is over the cap and its id is known from its start,
        its error reply (the rest need not be read); else None."""
        if not self._skipping or _HEAD_ID.match(self._payload()) is None:
            return None
        return self._finished()

    def _finished(self) -> bytes:
        line = self._replaced() if self._skipping else self._checked()
        self._line, self._tail, self._skipping = bytearray(), b"", False
        return line

    def _payload(self, line: bytes | bytearray | None = None) -> bytes:
        line = self._line if line is None else line
        if self._prefix and line.startswith(self._prefix):
            return bytes(line[len(self._prefix) :])
        return bytes(line) if not self._prefix else b""

    def _checked(self) -> bytes:
        if self._prefix and not self._line.startswith(self._prefix):
            return bytes(self._line)  # an SSE field other than data, or the blank line
        return self._prefix + without_bad_tools(self._payload())

    def _replaced(self) -> bytes:
        """The error reply that stands in for the over-long message (nothing if it has no id)."""
        head, tail = self._payload()[:KEPT_BYTES], self._tail.rstrip()
        found = _HEAD_ID.match(head) or _TAIL_ID.search(tail) if head else None
        if found is None:
            return b""
        cap = self._cap
        size = f"{cap // 2**20} MB" if cap >= 2**20 else f"{cap:,} bytes"
        message = f"its answer was over {size} and was not read"
        if began := first_text(self._payload()):
            message += f"; it began: {began}"
        error = {"code": -32603, "message": message}
        reply = {"jsonrpc": "2.0", "id": json.loads(found.group(1)), "error": error}
        return self._prefix + json.dumps(reply).encode() + b"\n"


def without_bad_tools(line: bytes | bytearray) -> bytes:
    """A tool listing with the tools the SDK could not read taken out, each named in the
    result's `_meta` (SKIPPED_META). Any other message is passed as it is."""
    if b'"tools"' not in line or b'"result"' not in line:
        return bytes(line)
    try:
        message = json.loads(line)
        tools = message["result"]["tools"]
    except (ValueError, TypeError, KeyError):
        return bytes(line)
    if not isinstance(tools, list):
        return bytes(line)
    kept, skipped = [], []
    for number, tool in enumerate(tools, 1):
        try:
            types.Tool.model_validate(tool)
        except ValidationError as exc:
            skipped.append(_why_unreadable(number, tool, exc))
        else:
            kept.append(tool)
    if not skipped:
        return bytes(line)
    meta = message["result"].get("_meta")
    message["result"]["_meta"] = {**(meta if isinstance(meta, dict) else {}), SKIPPED_META: skipped}
    message["result"]["tools"] = kept
    return json.dumps(message).encode() + b"\n"


def _why_unreadable(number: int, tool: object, exc: ValidationError) -> str:
    name = tool.get("name") if isinstance(tool, dict) else None
    called = f"{name!r}" if isinstance(name, str) else f"number {number}"
    problem = exc.errors()[0]
    where = ".".join(str(part) for part in problem["loc"]) or "the tool"
    return f"tool {called[:80]} skipped: {where}: {problem['msg']}"


def first_text(line: bytes) -> str:
    """The start of the first `"text": "..."` value in a cut JSON message, decoded; or ''."""
    found = _TEXT.search(line)
    if found is None:
        return ""
    raw = line[found.end() : found.end() + SHOWN_CHARS * 6].decode("utf-8", "ignore")
    whole = _STRING_END.match(raw)
    if whole is not None:  # the value ends within what was kept
        raw = whole.group(1)
    for cut in range(8):  # cut off inside an escape (`\\u30`): shorten until it decodes
        with suppress(ValueError):
            return str(_LENIENT.decode(f'"{raw[: len(raw) - cut]}"'))[:SHOWN_CHARS]
    return ""
