"""The `agent` command and its groups (orders, config, logs), before any command is added."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from agent_cli._version import __version__
from agent_cli.cli._boundary import EXIT_CODES_HELP, AgentGroup


def _plain_help() -> None:
    """Under NO_COLOR help is plain text: Rich drops the colours, not the bold, dim and the
    rest of each style, so every text style of Typer's help is emptied."""
    import typer.rich_utils as styles

    for name in dir(styles):
        if name.startswith("STYLE_") and isinstance(getattr(styles, name), str):
            setattr(styles, name, "")


if os.environ.get("NO_COLOR"):
    _plain_help()

app = typer.Typer(
    cls=AgentGroup,
    help="A command-line support agent: an LLM in an observe-reason-act loop.\n\n"
    + EXIT_CODES_HELP,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
orders_app = typer.Typer(
    help="Browse, import and export the orders in the order store (SQLite, or the team's "
    "PostgreSQL; τ²-bench's retail data in and out).",
    context_settings={"help_option_names": ["-h", "--help"]},
    no_args_is_help=True,
)
app.add_typer(orders_app, name="orders")
approvals_app = typer.Typer(
    help="The approval queue: refunds and desk changes that wait for a person (list, show, "
    "approve, deny).",
    context_settings={"help_option_names": ["-h", "--help"]},
    no_args_is_help=True,
)
app.add_typer(approvals_app, name="approvals")
config_app = typer.Typer(
    help="Read and write the configuration: show, get, set, unset, edit, path, init; push and "
    "shop for a team's one set of rules.",
    context_settings={"help_option_names": ["-h", "--help"]},
    no_args_is_help=True,
)
app.add_typer(config_app, name="config")
tools_app = typer.Typer(  # help: tools_group's docstring, with examples (help.py)
    context_settings={"help_option_names": ["-h", "--help"]},
    invoke_without_command=True,
)
app.add_typer(tools_app, name="tools")
tickets_app = typer.Typer(
    help="Hand-over tickets: customers a person follows up (list, show, claim, reply, close).",
    context_settings={"help_option_names": ["-h", "--help"]},
    no_args_is_help=True,
)
app.add_typer(tickets_app, name="tickets")
conversations_app = typer.Typer(
    help="Conversations kept in the store, one customer across many messages (start, list, "
    "show, close); agent ask --conversation ID continues one.",
    context_settings={"help_option_names": ["-h", "--help"]},
    no_args_is_help=True,
)
app.add_typer(conversations_app, name="conversations")
tokens_app = typer.Typer(
    help="agent serve's bearer tokens (create, list, revoke), kept in the store as digests.",
    context_settings={"help_option_names": ["-h", "--help"]},
    no_args_is_help=True,
)
app.add_typer(tokens_app, name="tokens")
kb_app = typer.Typer(
    help="The shop's help centre: import Markdown articles, list, show, search and delete them.",
    context_settings={"help_option_names": ["-h", "--help"]},
    no_args_is_help=True,
)
app.add_typer(kb_app, name="kb")
logs_app = typer.Typer(
    help="List, search and show the logged runs (every ask, chat turn and eval case).",
    context_settings={"help_option_names": ["-h", "--help"]},
    no_args_is_help=True,
)
app.add_typer(logs_app, name="logs")


def _version(value: bool) -> None:
    if value:
        print(f"agent-cli {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """A command-line support agent: an LLM in an observe-reason-act loop."""
