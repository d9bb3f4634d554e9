"""The processes of stdio MCP servers: none outlives the agent, and none floods it.

The SDK starts each server in its own process group; closing it closes the server's stdin, waits
2 s, sends SIGTERM to the group, waits 2 s more, then SIGKILL. A run that ends on a hung server
would exit 4 s late, and a process that exits before the SDK's last step (its loop is on a daemon
thread) leaves a server that ignores SIGTERM running. So every server spawned is remembered by
its group: `stop_groups` ends each one still alive after a short grace (SIGTERM, then SIGKILL),
and at exit whatever is left is killed.

A server's stdout is read through `CappedLines`. A tool listing has any tool the SDK would refuse
taken out (and named in its `_meta`), so one malformed tool does not cost the server all of
them. A message (one line) longer than MAX_LINE_BYTES is not read whole: its first bytes are
kept, the rest skipped as it arrives, and an error reply to the same request id takes its place,
saying how it began. A 50 MB result becomes an `ERROR:` observation at once, not a read that
copies the growing line again for every chunk until the run times out.

This hooks the SDK's spawning function (`mcp.client.stdio._create_platform_compatible_process`),
which is not public: if a later SDK renames it, servers still run, with only the SDK's own limits.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import signal
import time
from contextlib import suppress
from contextvars import ContextVar
from typing import Any

import anyio
import mcp.client.stdio as sdk_stdio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process
from mcp import types
from pydantic import ValidationError

MAX_LINE_BYTES = 4 * 1024 * 1024
SKIPPED_META = "agent-cli/skipped"  # where a listing says which tools were taken out
KEPT_BYTES = 4_096  # of an over-long line's start and end: where its request id is
SHOWN_CHARS = 500  # of its first text, in the error that replaces it
_ID = rb'"id"\s*:\s*(-?\d+|"[^"\\]{0,100}")'
_HEAD_ID = re.compile(rb'^\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*' + _ID)
_TAIL_ID = re.compile(rb'"jsonrpc"\s*:\s*"2\.0"\s*,\s*' + _ID + rb"\s*\}\s*$")
_TEXT = re.compile(rb'"text"\s*:\s*"')
_STRING_END = re.compile(r'((?:[^"\\]|\\.)*)"', re.DOTALL)
_LENIENT = json.JSONDecoder(strict=False)  # control characters as the server sent them

_groups: set[int] = set()  # the process group of every stdio server started, until it ends
_spawn = getattr(sdk_stdio, "_create_platform_compatible_process", None)
# The groups of the servers one `McpServers` starts: set in the task that starts each server.
OWNER: ContextVar[set[int] | None] = ContextVar("mcp_server_groups", default=None)


def install() -> None:
    """Route the SDK's spawning of stdio servers through `_spawned` (once; harmless again)."""
    if _spawn is not None and sdk_stdio._create_platform_compatible_process is _spawn:
        sdk_stdio._create_platform_compatible_process = _spawned
        atexit.register(kill_groups)


async def _spawned(*args: Any, **kwargs: Any) -> Any:
    assert _spawn is not None  # installed only when the SDK has it
    process = await _spawn(*args, **kwargs)
    if not isinstance(process, Process) or process.stdout is None:
        return process  # not the POSIX process this wraps (Windows): the SDK's limits only
    _groups.add(process.pid)
    if (owner := OWNER.get()) is not None:
        owner.add(process.pid)
    return CappedProcess(process)


def stop_groups(groups: set[int], grace_s: float) -> None:
    """SIGTERM each of `groups` still alive, then SIGKILL whatever is left after `grace_s`."""
    alive = [group for group in list(groups) if _signal(group, signal.SIGTERM)]
    deadline = time.monotonic() + grace_s
    while alive and time.monotonic() < deadline:
        time.sleep(0.02)
        alive = [group for group in alive if _signal(group, 0)]
    kill_groups(groups)


def kill_groups(groups: set[int] | None = None) -> None:
    """SIGKILL each of `groups` (default: every server group this process started)."""
    for group in list(_groups if groups is None else groups):
        _signal(group, signal.SIGKILL)
        _groups.discard(group)
        if groups is not None:
            groups.discard(group)


def _signal(group: int, number: int) -> bool:
    """Send `number` to the group; False once it is gone (or not ours to signal)."""
    try:
        os.killpg(group, number)
    except (ProcessLookupError, PermissionError):
        _groups.discard(group)
        return False
    return True


class CappedProcess(Process):
    """The SDK's process, its stdout read through `CappedLines`; the rest passed through."""

    def __init__(self, inner: Process) -> None:
        self._inner = inner
        assert inner.stdout is not None
        self._stdout = CappedLines(inner.stdout)

    def __getattr__(self, name: str) -> Any:  # e.g. the SDK's look at `_process` when closing
        return getattr(self._inner, name)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def wait(self) -> int:
        return await self._inner.wait()

    def terminate(self) -> None:
        self._inner.terminate()

    def kill(self) -> None:
        self._inner.kill()

    def send_signal(self, signal: signal.Signals) -> None:
        self._inner.send_signal(signal)

    @property
    def pid(self) -> int:
        return self._inner.pid

    @property
    def returncode(self) -> int | None:
        return self._inner.returncode

    @property
    def stdin(self) -> ByteSendStream | None:
        return self._inner.stdin

    @property
    def stdout(self) -> ByteReceiveStream:
        return self._stdout

    @property
    def stderr(self) -> ByteReceiveStream | None:
        return self._inner.stderr


class CappedLines(ByteReceiveStream):
    """Whole lines only, each at most MAX_LINE_BYTES; a longer one becomes an error reply to
    its request (see the module's docstring)."""

    def __init__(self, inner: ByteReceiveStream, cap: int = MAX_LINE_BYTES) -> None:
        self._inner = inner
        self._cap = cap
        self._line = bytearray()  # the line so far (at most `cap` bytes)
        self._tail = b""  # while skipping: the last bytes seen
        self._skipping = False

    async def receive(self, max_bytes: int = 65536) -> bytes:
        while True:
            try:
                chunk = await self._inner.receive(max_bytes)
            except anyio.EndOfStream:
                if self._line and not self._skipping:  # a last line without its newline
                    last, self._line = bytes(self._line), bytearray()
                    return last
                raise
            ready = self._take(chunk)
            if ready:
                return ready

    async def aclose(self) -> None:
        await self._inner.aclose()

    def _take(self, chunk: bytes) -> bytes:
        out = bytearray()
        while chunk:
            end = chunk.find(b"\n")
            part, chunk = (chunk, b"") if end < 0 else (chunk[: end + 1], chunk[end + 1 :])
            if self._skipping:
                self._tail = (self._tail + part)[-KEPT_BYTES:]
            elif len(self._line) + len(part) > self._cap:
                self._line += part[: max(0, self._cap - len(self._line))]
                self._skipping, self._tail = True, part[-KEPT_BYTES:]
            else:
                self._line += part
            if end >= 0:
                out += self._replaced() if self._skipping else without_bad_tools(self._line)
                self._line, self._tail, self._skipping = bytearray(), b"", False
        return bytes(out)

    def _replaced(self) -> bytes:
        """The error reply that stands in for the over-long line (nothing if it has no id)."""
        head, tail = bytes(self._line[:KEPT_BYTES]), self._tail.rstrip()
        found = _HEAD_ID.match(head) or _TAIL_ID.search(tail)
        if found is None:
            return b""
        size = f"{self._cap // 2**20} MB" if self._cap >= 2**20 else f"{self._cap:,} bytes"
        message = f"its answer was over {size} and was not read"
        if began := first_text(bytes(self._line)):
            message += f"; it began: {began}"
        error = {"code": -32603, "message": message}
        request = json.loads(found.group(1))
        reply = {"jsonrpc": "2.0", "id": request, "error": error}
        return json.dumps(reply).encode() + b"\n"


def without_bad_tools(line: bytes | bytearray) -> bytes:
    """A tool listing with the tools the SDK could not read taken out, each named in the
    result's `_meta` (SKIPPED_META): the SDK would refuse the whole listing, and the server with
    it, for one bad tool. Any other line is passed as it is."""
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
    """The start of the first `"text": "..."` value in a cut JSON line, decoded; or ''."""
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
