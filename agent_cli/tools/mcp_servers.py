"""MCP tool servers: each `[mcp.servers.NAME]` started (`command`, over stdio) or reached (`url`,
streamable HTTP) with the official SDK, and its tools offered to the model as `NAME.tool`.

The SDK is asynchronous and the loop is not: the sessions live on one event loop in a
background thread, and a call from the loop waits for it at most the run's time left. Everything
a server says is untrusted: a tool is offered only if its schema is a valid JSON Schema for an
object (else it is skipped with a warning), the model's arguments are validated against that
schema strictly and closed, results become plain observations (the loop cuts and delimits them
like any other), and every failure of a server (it does not start, hangs, crashes, or answers
with an error) is an `ERROR:` observation, never a hang or a crash.

Imported only when a server is configured: the SDK alone takes over a second to import.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import IO, Any

from mcp import Client, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

# The SDK's own client factory (its timeouts, its redirect rules) for a url with headers: not
# exported, but what the SDK itself builds when given none.
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from agent_cli.config import McpServerSettings
from agent_cli.core.seams import Observation
from agent_cli.core.tool_outcomes import Failed
from agent_cli.text import mask_secrets, valid_text
from agent_cli.tools import mcp_http, mcp_processes
from agent_cli.tools.mcp_limits import SKIPPED_META
from agent_cli.tools.mcp_tools import (
    MAX_STDERR_LINE,
    McpTool,
    clipped,
    observation_of,
    offer,
    one_line,
)

# The SDK logs its servers' failures; with no handler at all Python would print them on stderr,
# in the middle of the live view. What matters reaches the user as warnings and observations.
logging.getLogger("mcp").addHandler(logging.NullHandler())
logging.getLogger("mcp").propagate = False

mcp_processes.install()

MAX_LISTING_PAGES = 20
SHUTDOWN_WAIT_S = 3.0
STOP_GRACE_S = 0.5  # after stdin closes, before SIGTERM; as long again before SIGKILL
MAX_WARNINGS = 3  # skipped tools warned about one by one, per server
MAX_TOOLS_IN_ALL = 256  # from every server together; each gives at most MAX_TOOLS_PER_SERVER
HTTP_HINTS = {
    401: " (unauthorized: check its headers)",
    403: " (forbidden: check its headers)",
    404: " (not found: check its url, often ending /mcp)",
}
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_Listing = tuple[list[types.Tool], list[str]]  # the tools, and the unreadable ones taken out


class ServerUnavailable(Exception):
    """A server could not be reached or started; the message says why, in one line."""


@dataclass(frozen=True, slots=True)
class ServerReport:
    """How starting one server went, for warnings and `agent doctor`."""

    name: str
    ok: bool
    detail: str  # "3 tools in 1.2 s", or why it failed
    skipped: tuple[str, ...] = ()  # one line per tool that is not offered

    def skips(self) -> list[str]:
        """The skipped lines worth showing: the first few, then one that counts the rest (a
        hostile server's 10,000 bad names are not 10,000 warnings)."""
        if len(self.skipped) <= MAX_WARNINGS + 1:
            return list(self.skipped)
        rest = len(self.skipped) - MAX_WARNINGS
        return [*self.skipped[:MAX_WARNINGS], f"and {rest:,} more like these"]


@dataclass(eq=False)
class _Server:
    name: str
    settings: McpServerSettings
    client: Client | None = None
    failure: str | None = None  # set once its tools can no longer be called
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    holder: asyncio.Task[None] | None = None
    stderr: IO[str] | None = None  # a stdio server's stderr, for its last words
    http_status: int | None = None  # an HTTP server's last error status

    async def transport(self, stack: contextlib.AsyncExitStack) -> Any:
        """What Client connects to: the URL (with the configured headers, on an HTTP client
        closed with `stack`), or the command, started with its stderr kept."""
        config = self.settings
        if config.url is not None:
            http = create_mcp_http_client(headers=expand_env(config.headers, os.environ))
            http.event_hooks["response"] += [self._note_status, mcp_http.cap_reply]
            await stack.enter_async_context(http)
            limit = mcp_http.SSE_EVENT_LIMIT
            return streamable_http_client(config.url, http_client=http, max_sse_event_size=limit)
        assert config.command is not None  # the settings give one or the other
        params = StdioServerParameters(
            command=config.command,
            args=config.args,
            env=expand_env(config.env, os.environ),
            cwd=config.cwd,
        )
        # Closed in McpServers.close, after the server has stopped writing to it.
        self.stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        return stdio_client(params, errlog=self.stderr)

    async def _note_status(self, response: Any) -> None:
        """The SDK reports any HTTP error as "Server returned an error response": keep the
        status, which says what to fix (a 401: the headers)."""
        if response.status_code >= 400:
            self.http_status = int(response.status_code)

    def last_words(self) -> str:
        """What the server said of its failure: the last line it wrote on stderr, or the HTTP
        status it answered, as '; it said: ...'; or ''."""
        if self.http_status is not None:
            hint = HTTP_HINTS.get(self.http_status, "")
            return f"; it answered HTTP {self.http_status}{hint}"
        if self.stderr is None:
            return ""
        try:
            self.stderr.seek(0)
            lines = [line.strip() for line in self.stderr.read().splitlines() if line.strip()]
        except (OSError, ValueError):
            return ""
        if not lines:
            return ""
        return f"; it said: {clipped(mask_secrets(valid_text(lines[-1])), MAX_STDERR_LINE)}"


def expand_env(env: Mapping[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """A server's environment (or HTTP headers): `${NAME}` in a value is NAME from ours (keys
    stay out of the config file); an unset one is ServerUnavailable."""

    def value(key: str, text: str) -> str:
        def substitute(found: re.Match[str]) -> str:
            name = found.group(1)
            if name not in environ:
                raise ServerUnavailable(f"{key} needs ${name}, which is not set")
            return environ[name]

        return _REFERENCE.sub(substitute, text)

    return {key: value(key, text) for key, text in env.items()}


class McpServers:
    """The configured servers and their tools, on one event loop in a background thread."""

    def __init__(
        self, servers: Mapping[str, McpServerSettings], *, warn: Callable[[str], None]
    ) -> None:
        self._warn = warn
        self._loop = asyncio.new_event_loop()
        self._servers = {name: _Server(name, config) for name, config in servers.items()}
        self._thread = threading.Thread(target=self._loop.run_forever, name="mcp", daemon=True)
        self._thread.start()
        self.tools: list[McpTool] = []
        self.reports: list[ServerReport] = []
        self._groups: set[int] = set()  # the process groups of its stdio servers

    @property
    def unavailable(self) -> dict[str, str]:
        """Each server whose tools cannot be called, with why."""
        return {s.name: s.failure for s in self._servers.values() if s.failure is not None}

    def start(self, timeout: float) -> None:
        """Start or reach every server at once, each within its startup_timeout and `timeout`
        (the run's own limit); a server that fails is warned about and left out."""
        work = asyncio.run_coroutine_threadsafe(self._start_all(timeout), self._loop)
        try:
            self.reports = work.result(timeout + SHUTDOWN_WAIT_S)  # _start_all bounds itself
        except FutureTimeout:  # it did not: whatever is not up by now is not waited for
            self.reports = [self._late(server, timeout) for server in self._servers.values()]
        finally:
            work.cancel()
        self._cap_tools()
        for report in self.reports:
            if not report.ok:
                self._warn(
                    f"MCP server {report.name} {report.detail}; its tools are not offered "
                    "(agent doctor checks it)"
                )
            for line in report.skips():
                self._warn(f"MCP server {report.name}: {line}")

    def _cap_tools(self) -> None:
        """The servers' tools in the order the config names the servers (they start in any
        order), at most MAX_TOOLS_IN_ALL of them; one warning counts the rest."""
        order = {name: index for index, name in enumerate(self._servers)}
        self.tools.sort(key=lambda tool: order.get(tool.server, len(order)))
        if len(self.tools) > MAX_TOOLS_IN_ALL:
            self._warn(
                f"{len(self.tools) - MAX_TOOLS_IN_ALL:,} more MCP tools not offered: at most "
                f"{MAX_TOOLS_IN_ALL} from all servers together"
            )
            del self.tools[MAX_TOOLS_IN_ALL:]

    def _late(self, server: _Server, timeout: float) -> ServerReport:
        if server.client is not None and server.failure is None:
            return ServerReport(server.name, True, "started late")
        server.failure = server.failure or f"did not start within {timeout:g} s"
        return ServerReport(server.name, False, server.failure)

    async def _start_all(self, timeout: float) -> list[ServerReport]:
        return list(
            await asyncio.gather(
                *(
                    self._start(server, min(timeout, server.settings.startup_timeout))
                    for server in self._servers.values()
                )
            )
        )

    async def _start(self, server: _Server, timeout: float) -> ServerReport:
        began = time.monotonic()
        ready: asyncio.Future[_Listing] = self._loop.create_future()
        server.holder = asyncio.create_task(self._hold(server, ready))
        try:
            listing, unreadable = await asyncio.wait_for(asyncio.shield(ready), timeout)
        except TimeoutError:
            server.holder.cancel()
            server.failure = f"did not start within {timeout:g} s{server.last_words()}"
            return ServerReport(server.name, False, server.failure)
        except Exception as exc:  # every way a start fails is reported, none escapes
            server.failure = f"{start_failure(exc)}{server.last_words()}"
            return ServerReport(server.name, False, server.failure)
        offered, skipped = offer(server.name, server.settings, listing, self)
        skipped = [*unreadable, *skipped]
        self.tools.extend(offered)
        elapsed = time.monotonic() - began
        detail = f"{len(offered)} tools in {elapsed:.1f} s"
        return ServerReport(server.name, True, detail, tuple(skipped))

    async def _hold(self, server: _Server, ready: asyncio.Future[_Listing]) -> None:
        """The server's connection, from start to `close`: the SDK's contexts must be entered
        and left in one task."""
        mcp_processes.OWNER.set(self._groups)  # this task's context: its server's process
        try:
            async with contextlib.AsyncExitStack() as stack:
                client = await stack.enter_async_context(Client(await server.transport(stack)))
                listing = await list_all(client)
                server.client = client
                ready.set_result(listing)
                await server.stop.wait()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # reported, never raised into the loop
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(exc))
            elif server.failure is None:
                server.failure = f"it stopped ({describe(exc)}){server.last_words()}"

    def call(
        self, server_name: str, tool: str, args: dict[str, Any], deadline: float
    ) -> Observation:
        """One tool call, waited for until `deadline` (time.monotonic()) at most."""
        server = self._servers[server_name]
        name = f"{server_name}.{tool}"
        if server.failure is not None or server.client is None:
            reason = server.failure or "not started"
            return Observation.of(Failed(f"MCP server {server_name} is not available: {reason}"))
        left = deadline - time.monotonic()
        if left <= 0:
            return Observation.of(Failed(f"no time was left in this run to call {name}"))
        pending = asyncio.run_coroutine_threadsafe(server.client.call_tool(tool, args), self._loop)
        try:
            result = pending.result(timeout=left)
        except FutureTimeout:
            return Observation.of(
                Failed(f"{name} did not answer within {left:.1f} s (the time left in this run)")
            )
        except MCPError as exc:
            return self._failed(server, name, exc)
        except Exception as exc:  # a reply the SDK could not read, a broken transport...
            return Observation.of(
                Failed(f"{name} failed ({type(exc).__name__}); try another approach"),
                detail=mask_secrets(f"{type(exc).__name__}: {exc}"),
            )
        finally:
            pending.cancel()  # no-op once done; else the server's answer is not awaited
        return observation_of(result)

    def _failed(self, server: _Server, name: str, exc: MCPError) -> Observation:
        if exc.code == types.CONNECTION_CLOSED:  # it crashed or went away: no call can work now
            server.failure = f"it stopped{server.last_words()}"
            return Observation.of(
                Failed(f"{name} failed: MCP server {server.name} stopped{server.last_words()}")
            )
        return Observation.of(Failed(f"{name} failed: {one_line(exc.message)}"))

    def close(self) -> None:
        """Stop every server and the thread, within about a second whatever the servers do: a
        server is told to stop (its stdin closed, or its HTTP session ended), given
        STOP_GRACE_S, then its process group gets SIGTERM and, as long again later, SIGKILL."""
        if self._loop.is_running():
            self._run_briefly(self._stop_all, STOP_GRACE_S)
            mcp_processes.stop_groups(self._groups, STOP_GRACE_S)
            self._run_briefly(self._end_holders, SHUTDOWN_WAIT_S)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(SHUTDOWN_WAIT_S)
        mcp_processes.kill_groups(self._groups)
        for server in self._servers.values():
            if server.stderr is not None:
                server.stderr.close()

    def _run_briefly(self, work: Callable[[float], Any], seconds: float) -> None:
        running = asyncio.run_coroutine_threadsafe(work(seconds), self._loop)
        with contextlib.suppress(Exception):  # closing must not fail, nor wait long
            running.result(seconds + 1)

    async def _stop_all(self, seconds: float) -> None:
        for server in self._servers.values():
            server.stop.set()
        holders = [s.holder for s in self._servers.values() if s.holder is not None]
        if holders:
            await asyncio.wait(holders, timeout=seconds)

    async def _end_holders(self, seconds: float) -> None:
        holders = [s.holder for s in self._servers.values() if s.holder is not None]
        if holders:
            _, late = await asyncio.wait(holders, timeout=seconds)
            for holder in late:
                holder.cancel()


async def list_all(client: Client) -> tuple[list[types.Tool], list[str]]:
    """Every page of the server's tool listing (a bounded number of pages), and a line for
    each tool taken out of it as unreadable (see `mcp_limits.without_bad_tools`)."""
    tools: list[types.Tool] = []
    unreadable: list[str] = []
    cursor: str | None = None
    for _ in range(MAX_LISTING_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        skipped = (page.meta or {}).get(SKIPPED_META)
        if isinstance(skipped, list):
            unreadable += [str(line) for line in skipped]
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools, unreadable


def start_failure(exc: BaseException) -> str:
    inner = innermost(exc)
    if isinstance(inner, MCPError) and inner.code == types.CONNECTION_CLOSED:
        return "exited before it was ready"
    return f"did not start: {describe(inner)}"


def innermost(exc: BaseException) -> BaseException:
    """The first exception inside any groups (anyio's task groups wrap them)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe(exc: BaseException) -> str:
    """One line for an exception, the innermost of a group."""
    exc = innermost(exc)
    message = one_line(str(exc)) or type(exc).__name__
    if isinstance(exc, FileNotFoundError | PermissionError):
        message = f"{exc.strerror}: {exc.filename}" if exc.filename else message
    return clipped(mask_secrets(message), MAX_STDERR_LINE)
