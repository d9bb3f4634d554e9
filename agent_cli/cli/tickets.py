"""`agent tickets list | show | claim | close`."""

from typing import Annotated

import typer

from agent_cli.cli._apps import tickets_app
from agent_cli.cli._completion import complete_ticket
from agent_cli.cli._options import AsOption, ConfigOption, JsonOption

TicketArgument = Annotated[
    int, typer.Argument(help="The ticket number.", autocompletion=complete_ticket)
]


@tickets_app.command(name="list")
def tickets_list(
    status: Annotated[
        str | None,
        typer.Option(help="Only tickets in this status: open, claimed, closed, or all."),
    ] = None,
    json_output: JsonOption = False,
    config: ConfigOption = None,
) -> None:
    """List the open and claimed tickets, oldest first (piped: one tab-separated line each)."""
    from agent_cli.commands.tickets import list_tickets

    list_tickets(status=status, json_output=json_output, config=config)


@tickets_app.command(name="show")
def tickets_show(
    ticket: TicketArgument, json_output: JsonOption = False, config: ConfigOption = None
) -> None:
    """Show one ticket: the customer, the order, the summary, the question and the run it came
    from, who claimed and closed it. Exit code 1 if there is no such ticket."""
    from agent_cli.commands.tickets import show_ticket_command

    show_ticket_command(ticket, json_output=json_output, config=config)


@tickets_app.command(name="claim")
def tickets_claim(ticket: TicketArgument, by: AsOption = None, config: ConfigOption = None) -> None:
    """Take an open ticket. Exit code 1 if there is no such ticket, or it is claimed or closed."""
    from agent_cli.commands.tickets import claim_ticket

    claim_ticket(ticket, by=by, config=config)


@tickets_app.command(name="close")
def tickets_close(
    ticket: TicketArgument,
    note: Annotated[str | None, typer.Option(help="What was done, kept with the ticket.")] = None,
    close_conversation: Annotated[
        bool,
        typer.Option(
            "--close-conversation",
            help="Close the ticket's conversation too (default: it goes back to the desk).",
        ),
    ] = False,
    by: AsOption = None,
    config: ConfigOption = None,
) -> None:
    """Close an open or claimed ticket, with a note; a conversation kept in the store that it
    came from goes back to the desk (or is closed). Exit code 1 if there is no such ticket, or
    it is closed already."""
    from agent_cli.commands.tickets import close_ticket

    close_ticket(ticket, by=by, note=note, config=config, close_conversation=close_conversation)


@tickets_app.command(name="reply")
def tickets_reply(
    ticket: TicketArgument,
    text: Annotated[str, typer.Argument(help="Your words to the customer.")],
    config: ConfigOption = None,
) -> None:
    """Add your words to the conversation the ticket came from (a conversation kept in the
    store: agent conversations show ID lists them). Exit code 1 if there is no such ticket, it
    is closed, or it came from no stored conversation."""
    from agent_cli.commands.tickets import reply_to_ticket

    reply_to_ticket(ticket, text, config=config)
