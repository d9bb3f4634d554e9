"""`agent tickets list | show | claim | close`: the hand-overs a person picks up."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from agent_cli.config import load_settings
from agent_cli.domain.tickets import TICKET_STATUSES, Ticket
from agent_cli.errors import TicketNotFound, TicketUnchanged, UsageError
from agent_cli.runtime import handovers
from agent_cli.runtime.assemble import operator_name
from agent_cli.runtime.stores import opened_store
from agent_cli.store import conversations, tickets
from agent_cli.text import print_json_lines
from agent_cli.ui import make_console
from agent_cli.ui.conversations_view import show_conversation_record
from agent_cli.ui.tickets_view import show_ticket, show_tickets
from agent_cli.validation_text import status_filter


def ticket_json(ticket: Ticket) -> dict[str, object]:
    return dataclasses.asdict(ticket)


def list_tickets(*, status: str | None, json_output: bool, config: Path | None) -> None:
    """Open and claimed tickets, oldest first (`--status closed` or `all` for the others)."""
    try:
        wanted = status_filter(status, TICKET_STATUSES, "ticket")
    except ValueError as bad:
        raise UsageError(str(bad)) from None
    with opened_store(load_settings(config)) as store:
        found = tickets.listed(store, status=None if wanted == "all" else wanted)
    if wanted is None:
        found = [t for t in found if t.status != "closed"]
    if json_output:
        print_json_lines(ticket_json(t) for t in found)
        return
    show_tickets(make_console(), found)


def _found(ticket: Ticket | None, number: int) -> Ticket:
    if ticket is None:
        raise TicketNotFound(f"No ticket #{number}; see 'agent tickets list --status all'")
    return ticket


def show_ticket_command(number: int, *, json_output: bool, config: Path | None) -> None:
    """The ticket, and the conversation it came from (its whole transcript) when it was one
    kept in the store."""
    with opened_store(load_settings(config)) as store:
        ticket = _found(tickets.get(store, number), number)
        conversation = handovers.conversation_of(store, ticket)
        messages = conversations.messages(store, conversation.id) if conversation else []
        requester = handovers.requester(store, ticket, conversation)
    if json_output:
        transcript = [{"role": m.role, "text": m.text, "at": m.at} for m in messages]
        shown = {**ticket_json(ticket), **requester}
        shown["conversation"] = conversation.id if conversation else None
        print_json_lines([{**shown, "transcript": transcript}])
        return
    show_ticket(make_console(), ticket, requester)
    if conversation is not None:
        show_conversation_record(make_console(), conversation, messages, conversation.proposal)


def claim_ticket(number: int, *, by: str | None, config: Path | None) -> None:
    who = (by or "").strip() or operator_name()
    with opened_store(load_settings(config)) as store:
        done = handovers.claim(store, number, by=who)
    ticket = _found(done.ticket if done else None, number)
    if done is None or not done.changed:
        raise TicketUnchanged(f"Ticket #{number} is {_state(ticket)}; nothing was changed")
    print(f"#{number}: claimed by {who}")


def close_ticket(
    number: int,
    *,
    by: str | None,
    note: str | None,
    config: Path | None,
    close_conversation: bool = False,
) -> None:
    """Close the ticket; its stored conversation, if any, goes back to the desk (or is closed
    too, with `close_conversation`)."""
    who = (by or "").strip() or operator_name()
    cleaned = " ".join(note.split()) if note else None
    if cleaned is not None and len(cleaned) > 2_000:
        raise UsageError(f"--note is {len(cleaned):,} characters; at most 2,000")
    with opened_store(load_settings(config)) as store:
        done = tickets.close(store, number, by=who, note=cleaned)
        ticket = _found(done.ticket if done else None, number)
        if done is None or not done.changed:
            raise TicketUnchanged(f"Ticket #{number} is {_state(ticket)}; nothing was changed")
        back = handovers.hand_back(store, ticket, close=close_conversation)
    print(f"#{number}: closed by {who}")
    if back is not None:
        print(f"conversation {back.id[:8]}: {back.status}")


def reply_to_ticket(number: int, text: str, *, config: Path | None) -> None:
    """A person's words in the ticket's conversation, for the customer."""
    reply = text.strip()
    if not reply or len(reply) > handovers.MAX_REPLY_CHARS:
        raise UsageError(f"the reply must be 1 to {handovers.MAX_REPLY_CHARS:,} characters")
    with opened_store(load_settings(config)) as store:
        ticket = _found(tickets.get(store, number), number)
        if ticket.status == "closed":
            raise TicketUnchanged(f"Ticket #{number} is {_state(ticket)}; nothing was sent")
        conversation = handovers.reply(store, ticket, reply)
    print(f"#{number}: reply added to conversation {conversation.id[:8]}")


def _state(ticket: Ticket) -> str:
    if ticket.status == "claimed":
        return f"claimed already, by {ticket.claimed_by} at {ticket.claimed_at}"
    if ticket.status == "closed":
        return f"closed already, by {ticket.closed_by} at {ticket.closed_at}"
    return ticket.status
