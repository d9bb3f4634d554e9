"""The `agent` command line: options -> settings -> model -> tools -> loop -> renderers.

This package is the only one that imports Typer, and holds the one error boundary
(`boundary.py`): every AgentError (and any Typer usage error) becomes one line on stderr and a
documented exit code, never a traceback. The commands (`runs.py`: ask, chat, replay; `evals.py`:
eval run, tau2, replay, list; `admin.py`: doctor, config, tools, orders; `logs.py`: the run
log; `approvals.py`: the approval queue) import the heavy modules inside their bodies, so
`agent --help` pays only for Typer.
"""

from __future__ import annotations

from agent_cli.cli import admin, approvals, conversations, evals, kb, logs, runs, serve, tickets
from agent_cli.cli.apps import (
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
from agent_cli.cli.help import add_help

__all__ = ["app"]

_COMMANDS = (
    runs,
    admin,
    logs,
    approvals,
    tickets,
    kb,
    conversations,
    serve,
    evals,
)  # imported for what they add to the apps
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
    evals.eval_app,
)
