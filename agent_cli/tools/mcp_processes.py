"""The processes of stdio MCP servers: none outlives the agent, and none floods it.

The SDK starts each server in its own process group; closing it closes the server's stdin, waits
2 s, sends SIGTERM to the group, waits 2 s more, then SIGKILL. A run that ends on a hung server
would exit 4 s late, and a process that exits before the SDK's last step (its loop is on a daemon
thread) leaves a server that ignores SIGTERM running. So every server spawned is remembered by
its group: `stop_groups` ends each one still alive after a short grace (SIGTERM, then SIGKILL),
and at exit whatever is left is killed.

A server's stdout is read through `CappedLines`: no line past a byte cap is read whole, and
malformed tools are taken out of a listing (see `mcp_limits`).

This hooks the SDK's spawning function (`mcp.client.stdio._create_platform_compatible_process`),
which is not public: if a later SDK renames it, servers still run, with only the SDK's own limits.
"""

from __future__ import annotations

import atexit
import os
import signal
import time
from contextvars import ContextVar
from typing import Any

import anyio
import mcp.client.stdio as sdk_stdio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

from agent_cli.tools.mcp_limits import MAX_LINE_BYTES, LineCap

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
    """Whole lines only, each at most `cap` bytes (see `mcp_limits.LineCap`)."""

    def __init__(self, inner: ByteReceiveStream, cap: int = MAX_LINE_BYTES) -> None:
        self._inner = inner
        self._lines = LineCap(cap)

    async def receive(self, max_bytes: int = 65536) -> bytes:
        while True:
            try:
                chunk = await self._inner.receive(max_bytes)
            except anyio.EndOfStream:
                if last := self._lines.rest():  # a last line without its newline
                    return last
                raise
            ready = self._lines.take(chunk)
            if ready:
                return ready

    async def aclose(self) -> None:
        await self._inner.aclose()
