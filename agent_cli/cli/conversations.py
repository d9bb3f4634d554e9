"""`agent conversations start | list | show | close`."""

from typing import Annotated

import typer

from agent_cli.cli._apps import conversations_app
from agent_cli.cli._completion import complete_conversation
from agent_cli.cli._options import AsOption, ConfigOption, JsonOption

ConversationArgument = Annotated[
    str,
    typer.Argument(
        help="The conversation's id, or its first characters (at least 6).",
        autocompletion=complete_conversation,
    ),
]


@conversations_app.command(name="start")
def conversations_start(
    channel: Annotated[
        str, typer.Option(help="Where the customer writes from (cli, web, chatwoot, line...).")
    ] = "cli",
    customer: Annotated[
        str | None,
        typer.Option(
            help="The customer's id in the store, when you have identified them already "
            "(recorded as your assertion: --as)."
        ),
    ] = None,
    by: AsOption = None,
    json_output: JsonOption = False,
    config: ConfigOption = None,
) -> None:
    """Start a conversation in the store and print its id (alone, on the last line); continue
    it with agent ask --conversation ID "..."."""
    from agent_cli.commands.conversations import start_conversation

    start_conversation(
        channel=channel, customer=customer, by=by, json_output=json_output, config=config
    )


@conversations_app.command(name="list")
def conversations_list(
    status: Annotated[
        str | None,
        typer.Option(
            help="Only conversations in this status: open, awaiting_customer, "
            "awaiting_approval, handed_over, closed, or all (default: all but closed)."
        ),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("-n", "--limit", min=1, help="At most this many conversations.")
    ] = None,
    json_output: JsonOption = False,
    config: ConfigOption = None,
) -> None:
    """List conversations, the most recently active first (piped: one tab-separated line each)."""
    from agent_cli.commands.conversations import list_conversations

    list_conversations(status=status, limit=limit, json_output=json_output, config=config)


@conversations_app.command(name="show")
def conversations_show(
    conversation: ConversationArgument, json_output: JsonOption = False, config: ConfigOption = None
) -> None:
    """Show one conversation: its status, channel and customer, the change waiting for the
    customer's yes, and every message in order. Exit code 1 if there is no such conversation."""
    from agent_cli.commands.conversations import show_conversation

    show_conversation(conversation, json_output=json_output, config=config)


@conversations_app.command(name="close")
def conversations_close(
    conversation: ConversationArgument, by: AsOption = None, config: ConfigOption = None
) -> None:
    """Close a conversation: no more messages are answered in it. Exit code 1 if there is no
    such conversation, or it is closed already."""
    from agent_cli.commands.conversations import close_conversation

    close_conversation(conversation, by=by, config=config)
