"""`agent tools`: our tools and those of the MCP servers."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

from agent_cli.config import load_settings
from agent_cli.core.budget import RefundCounter
from agent_cli.runtime.assemble import build_tools, start_mcp_servers
from agent_cli.runtime.stores import LazyStore
from agent_cli.text import print_json_lines
from agent_cli.ui import (
    make_console,
    show_tools,
)


def show_tools_command(*, json_output: bool, config: Path | None) -> None:
    """`agent tools`: ours and those of the MCP servers, which are started to list them."""
    settings = load_settings(config)
    with ExitStack() as stack:
        servers = start_mcp_servers(settings, stack)
        registry = build_tools(
            settings, LazyStore(settings).get, RefundCounter(), dry_run=True, mcp=servers
        )
    if json_output:
        print_json_lines(
            {"name": s.name, "description": s.description, "parameters": dict(s.parameters)}
            for s in registry.specs()
        )
        return
    show_tools(make_console(), registry.specs())
