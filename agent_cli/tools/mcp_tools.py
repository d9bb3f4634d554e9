"""What an MCP server offers, checked before the model sees any of it: which of its tools are
offered (names, input schemas, descriptions), `McpTool` (what the registry calls: arguments
validated against the server's schema, strictly and closed; approval when configured), and a
tool's result as an observation. Everything here treats the server as untrusted, like the model.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import jsonschema
import jsonschema.exceptions
from mcp import types

from agent_cli.config import McpServerSettings
from agent_cli.core.seams import ApprovalNeeded, Observation, ToolSpec
from agent_cli.core.tool_outcomes import Failed
from agent_cli.text import clean_text, valid_text
from agent_cli.tools import Action, InvalidArguments, signature

TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]+")  # MCP's own rule for a tool's name
MAX_NAME = 64  # NAME.tool, as the provider APIs limit a function's name
MAX_DESCRIPTION = 1_000
MAX_RESULT_CHARS = 100_000  # a first cut, before the loop's own: what a trace line may hold
MAX_STDERR_LINE = 200
MAX_TOOLS_PER_SERVER = 128  # a server listing 10,000 tools would send megabytes per request


class McpServers(Protocol):
    """What a tool needs of the servers that offer it (mcp_servers.McpServers): one call, waited
    for until `deadline` at most. A protocol, so this module does not import the one that imports
    it."""

    def call(
        self, server_name: str, tool: str, args: dict[str, Any], deadline: float
    ) -> Observation: ...


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
    if len(offered) > MAX_TOOLS_PER_SERVER:
        skipped.append(
            f"{len(offered) - MAX_TOOLS_PER_SERVER:,} more tools not offered: at most "
            f"{MAX_TOOLS_PER_SERVER} from one server"
        )
        offered = offered[:MAX_TOOLS_PER_SERVER]
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
    description = clipped(one_line(tool.description or ""), MAX_DESCRIPTION)
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
        return clipped(one_line(exc.message), MAX_STDERR_LINE)
    return None


def closed(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with no arguments beyond those it names, as our tools are, unless it says
    what other arguments may be."""
    open_keys = ("additionalProperties", "patternProperties", "unevaluatedProperties")
    if any(key in schema for key in open_keys):
        return schema
    return {**schema, "additionalProperties": False}


@dataclass(frozen=True, slots=True, kw_only=True)
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
            raise InvalidArguments(f"{where}: {clipped(one_line(error.message), MAX_STDERR_LINE)}")
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
    return Observation.of(Failed(text)) if result.is_error else Observation(text)


def one_line(text: str) -> str:
    """A server's text on one line, without terminal controls (it reaches screens and prompts)."""
    return " ".join(clean_text(valid_text(text)).split())


def clipped(text: str, limit: int) -> str:
    """`text` in at most `limit` characters: cut at a word's end where one is near, and
    marked with `…` so a reader knows there was more."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit * 3 // 4:  # a word boundary near the end: cut there, not mid-word
        cut = cut[:space]
    return cut.rstrip() + "…"
