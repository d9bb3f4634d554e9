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
import json
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

import jsonschema
import jsonschema.exceptions
from mcp import Client, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

# The SDK's own client factory (its timeouts, its redirect rules) for a url with headers: not
# exported, but what the SDK itself builds when given none.
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from agent_cli.config import McpServerSettings
from agent_cli.seams import ApprovalNeeded, Observation, ToolSpec
from agent_cli.text import clean_text, mask_secrets, valid_text
from agent_cli.tools import Action, InvalidArguments, signature

# The SDK logs its servers' failures; with no handler at all Python would print them on stderr,
# in the middle of the live view. What matters reaches the user as warnings and observations.
logging.getLogger("mcp").addHandler(logging.NullHandler())
logging.getLogger("mcp").propagate = False

TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]+")  # MCP's own rule for a tool's name
MAX_NAME = 64  # NAME.tool, as the provider APIs limit a function's name
MAX_DESCRIPTION = 1_000
MAX_RESULT_CHARS = 100_000  # a first cut, before the loop's own: what a trace line may hold
MAX_LISTING_PAGES = 20
MAX_STDERR_LINE = 200
SHUTDOWN_WAIT_S = 3.0
HTTP_HINTS = {
    401: " (unauthorized: check its headers)",
    403: " (forbidden: check its headers)",
    404: " (not found: check its url, often ending /mcp)",
}
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class ServerUnavailable(Exception):
    """A server could not be reached or started; the message says why, in one line."""


@dataclass(frozen=True, slots=True)
class ServerReport:
    """How starting one server went, for warnings and `agent doctor`."""

    name: str
    ok: bool
    detail: str  # "3 tools in 1.2 s", or why it failed
    skipped: tuple[str, ...] = ()  # one line per tool that is not offered


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
            http.event_hooks["response"].append(self._note_status)
            await stack.enter_async_context(http)
            return streamable_http_client(config.url, http_client=http)
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
        return f"; it said: {mask_secrets(valid_text(lines[-1]))[:MAX_STDERR_LINE]}"


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
        for report in self.reports:
            if not report.ok:
                self._warn(
                    f"MCP server {report.name} {report.detail}; its tools are not offered "
                    "(agent doctor checks it)"
                )
            for line in report.skipped:
                self._warn(f"MCP server {report.name}: {line}")

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
        ready: asyncio.Future[list[types.Tool]] = self._loop.create_future()
        server.holder = asyncio.create_task(self._hold(server, ready))
        try:
            listing = await asyncio.wait_for(asyncio.shield(ready), timeout)
        except TimeoutError:
            server.holder.cancel()
            server.failure = f"did not start within {timeout:g} s{server.last_words()}"
            return ServerReport(server.name, False, server.failure)
        except Exception as exc:  # every way a start fails is reported, none escapes
            server.failure = f"{start_failure(exc)}{server.last_words()}"
            return ServerReport(server.name, False, server.failure)
        offered, skipped = offer(server.name, server.settings, listing, self)
        self.tools.extend(offered)
        elapsed = time.monotonic() - began
        detail = f"{len(offered)} tools in {elapsed:.1f} s"
        return ServerReport(server.name, True, detail, tuple(skipped))

    async def _hold(self, server: _Server, ready: asyncio.Future[list[types.Tool]]) -> None:
        """The server's connection, from start to `close`: the SDK's contexts must be entered
        and left in one task."""
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
            return Observation(f"ERROR: MCP server {server_name} is not available: {reason}", True)
        left = deadline - time.monotonic()
        if left <= 0:
            return Observation(f"ERROR: no time was left in this run to call {name}", True)
        pending = asyncio.run_coroutine_threadsafe(server.client.call_tool(tool, args), self._loop)
        try:
            result = pending.result(timeout=left)
        except FutureTimeout:
            return Observation(
                f"ERROR: {name} did not answer within {left:.1f} s (the time left in this run)",
                True,
            )
        except MCPError as exc:
            return self._failed(server, name, exc)
        except Exception as exc:  # a reply the SDK could not read, a broken transport...
            return Observation(
                f"ERROR: {name} failed ({type(exc).__name__}); try another approach",
                True,
                detail=mask_secrets(f"{type(exc).__name__}: {exc}"),
            )
        finally:
            pending.cancel()  # no-op once done; else the server's answer is not awaited
        return observation_of(result)

    def _failed(self, server: _Server, name: str, exc: MCPError) -> Observation:
        if exc.code == types.CONNECTION_CLOSED:  # it crashed or went away: no call can work now
            server.failure = f"it stopped{server.last_words()}"
            return Observation(
                f"ERROR: {name} failed: MCP server {server.name} stopped{server.last_words()}",
                True,
            )
        return Observation(f"ERROR: {name} failed: {one_line(exc.message)}", True)

    def close(self) -> None:
        """Stop every server (a stdio one is terminated by the SDK) and the thread, within a
        few seconds whatever the servers do."""

        async def stop_all() -> None:
            holders = [s.holder for s in self._servers.values() if s.holder is not None]
            for server in self._servers.values():
                server.stop.set()
            if holders:
                _, late = await asyncio.wait(holders, timeout=SHUTDOWN_WAIT_S)
                for holder in late:
                    holder.cancel()

        if self._loop.is_running():
            stopping = asyncio.run_coroutine_threadsafe(stop_all(), self._loop)
            with contextlib.suppress(Exception):  # closing must not fail, nor wait long
                stopping.result(SHUTDOWN_WAIT_S + 1)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(SHUTDOWN_WAIT_S)
        for server in self._servers.values():
            if server.stderr is not None:
                server.stderr.close()


async def list_all(client: Client) -> list[types.Tool]:
    """Every page of the server's tool listing (a bounded number of pages)."""
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(MAX_LISTING_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


def offer(
    server: str, settings: McpServerSettings, listing: list[types.Tool], servers: McpServers
) -> tuple[list[McpTool], list[str]]:
    """The tools worth offering, and a line for each one that is not (or a setting that names a
    tool the server does not have)."""
    offered: list[McpTool] = []
    skipped: list[str] = []
    for tool in listing:
        made = mcp_tool(server, settings, tool, servers)
        if isinstance(made, str):
            skipped.append(made)
        else:
            offered.append(made)
    listed = {tool.name for tool in listing}
    skipped += [
        f"[mcp.servers.{server}.tools.{name}] names no tool of this server"
        for name in settings.tools
        if name not in listed
    ]
    return offered, skipped


def mcp_tool(
    server: str, settings: McpServerSettings, tool: types.Tool, servers: McpServers
) -> McpTool | str:
    """The tool, or why it is skipped."""
    shown = one_line(tool.name)[:MAX_NAME]
    name = f"{server}.{tool.name}"
    if not TOOL_NAME.fullmatch(tool.name) or len(name) > MAX_NAME:
        return (
            f"tool {shown!r} skipped: its name must be letters, digits, _ . or - and "
            f"{server}.NAME at most {MAX_NAME} characters"
        )
    schema = tool.input_schema
    if problem := schema_problem(schema):
        return f"tool {shown} skipped: its input schema is invalid ({problem})"
    read_only = bool(tool.annotations and tool.annotations.read_only_hint)
    approval = settings.approval_of(tool.name, read_only=read_only)
    description = one_line(tool.description or "")[:MAX_DESCRIPTION]
    return McpTool(
        name=name,
        # The model is told too: a call may wait for a person, or be denied.
        description=f"{description} (from MCP server {server}"
        + ("; each call needs a person's approval)" if approval == "always" else ")"),
        schema=closed(schema),
        needs_approval=approval == "always",
        server=server,
        remote_name=tool.name,
        servers=servers,
    )


def schema_problem(schema: Any) -> str | None:
    """Why a tool's input schema cannot be used, or None."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return 'its root must be {"type": "object"}'
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        return one_line(exc.message)[:MAX_STDERR_LINE]
    return None


def closed(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with no arguments beyond those it names, as our tools are, unless it says
    what other arguments may be."""
    open_keys = ("additionalProperties", "patternProperties", "unevaluatedProperties")
    if any(key in schema for key in open_keys):
        return schema
    return {**schema, "additionalProperties": False}


@dataclass(frozen=True, slots=True)
class McpTool:
    """One tool of an MCP server, as the registry sees it."""

    name: str
    description: str
    schema: dict[str, Any]
    needs_approval: bool
    server: str
    remote_name: str
    servers: McpServers

    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.schema)

    def signature(self) -> str:
        return signature(self.name, self.schema)

    def bind(self, args: Mapping[str, Any], *, time_left: float) -> Action:
        arguments = dict(args)
        validator = jsonschema.validators.validator_for(self.schema)(self.schema)
        if (
            error := jsonschema.exceptions.best_match(validator.iter_errors(arguments))
        ) is not None:
            where = ".".join(str(part) for part in error.absolute_path) or "arguments"
            raise InvalidArguments(f"{where}: {one_line(error.message)[:MAX_STDERR_LINE]}")
        deadline = time.monotonic() + time_left  # an approval may take a while: one deadline

        def call() -> Observation:
            return self.servers.call(self.server, self.remote_name, arguments, deadline)

        if not self.needs_approval:
            return call
        summary = (
            f"call {self.name} on MCP server {self.server} with "
            f"{json.dumps(arguments, ensure_ascii=False, sort_keys=True)[:MAX_DESCRIPTION]}"
        )
        return lambda: ApprovalNeeded(summary, call)


def observation_of(result: types.CallToolResult) -> Observation:
    """A tool's result as text: its text blocks, others named, structured content as JSON."""
    parts = [
        block.text if isinstance(block, types.TextContent) else f"[{block.type} content omitted]"
        for block in result.content
    ]
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    text = valid_text("\n".join(parts))[:MAX_RESULT_CHARS] or "(no content)"
    return Observation(f"ERROR: {text}", True) if result.is_error else Observation(text)


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
    return mask_secrets(message)[:MAX_STDERR_LINE]


def one_line(text: str) -> str:
    """A server's text on one line, without terminal controls (it reaches screens and prompts)."""
    return " ".join(clean_text(valid_text(text)).split())
