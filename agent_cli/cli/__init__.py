"""The `agent` command line: options -> settings -> model -> tools -> loop -> renderers.

This package is the only one that imports Typer, and holds the one error boundary
(`_boundary.py`): every AgentError (and any Typer usage error) becomes one line on stderr and a
documented exit code, never a traceback. Each command group has its module here beside its
body in `commands/` (`cli/ask.py` and `commands/ask.py`, `cli/orders.py` and
`commands/orders.py` ...); the CLI's own helpers are named with a leading underscore (`_apps`:
the groups, `_options`: the shared options, `_boundary`, `_help`, `_completion`). Commands
import the heavy modules inside their bodies, so `agent --help` pays only for Typer.
"""

from __future__ import annotations

from agent_cli.cli import (
    approvals,
    ask,
    chat,
    config,
    conversations,
    doctor,
    evaluate,
    kb,
    logs,
    orders,
    replay,
    serve,
    tickets,
    tokens,
    tools,
)
from agent_cli.cli._apps import (
    app,
    approvals_app,
    config_app,
    conversations_app,
    kb_app,
    logs_app,
    orders_app,
    tickets_app,
    tokens_app,
    tools_app,
)
from agent_cli.cli._help import add_help

__all__ = ["app"]

_COMMANDS = (  # imported for what they add to the apps, in the order help lists them
    ask,
    chat,
    replay,
    doctor,
    config,
    tools,
    orders,
    logs,
    approvals,
    tickets,
    kb,
    conversations,
    serve,
    tokens,
    evaluate,
)
add_help(
    app,
    orders_app,
    approvals_app,
    config_app,
    logs_app,
    tools_app,
    tickets_app,
    kb_app,
    conversations_app,
    tokens_app,
    evaluate.eval_app,
)
