"""A person and the conversation they took over (issue 53, point 1's first part): a hand-over
ticket opened in a stored conversation's turn leaves it `handed_over` (the desk answers nothing
in it, and keeps the customer's messages for the person); `agent tickets reply` puts a person's
words in it; closing the ticket hands the conversation back to the desk, or closes it. Delivery
of those words to the customer's channel is the outbox's (issue 53, point 2)."""

from __future__ import annotations

from agent_cli.errors import ConversationClosed, ConversationNotFound
from agent_cli.store import conversations as stored
from agent_cli.store import desk_reads
from agent_cli.store.conversations import Conversation
from agent_cli.store.sqlite import OrderStore
from agent_cli.store.tickets import Ticket

MAX_REPLY_CHARS = 4_000


def conversation_of(store: OrderStore, ticket: Ticket) -> Conversation | None:
    """The stored conversation whose turn opened the ticket, if any."""
    return stored.of_run(store, ticket.run_id)


def requester(
    store: OrderStore, ticket: Ticket, conversation: Conversation | None
) -> dict[str, str | None]:
    """Who the ticket is for, as a help desk shows it: the customer's name and email when they
    were identified, and the channel they wrote from."""
    found = desk_reads.customer(store, ticket.customer_id) if ticket.customer_id else None
    return {
        "name": found.name if found is not None else None,
        "email": found.email if found is not None else None,
        "channel": conversation.channel if conversation is not None else None,
    }


def reply(store: OrderStore, ticket: Ticket, text: str) -> Conversation:
    """A person's words in the ticket's conversation (role `staff`)."""
    conversation = conversation_of(store, ticket)
    if conversation is None:
        raise ConversationNotFound(
            f"ticket #{ticket.id} came from no stored conversation (agent ask or chat): answer "
            "the customer where they wrote"
        )
    if conversation.status == "closed":
        raise ConversationClosed(
            f"ticket #{ticket.id}'s conversation {conversation.id[:8]} is closed; nothing sent"
        )
    stored.add_message(store, conversation.id, "staff", "message", text)
    return conversation


def hand_back(store: OrderStore, ticket: Ticket, *, close: bool) -> Conversation | None:
    """The ticket is closed: its conversation goes back to the desk (`open`), or is closed; None
    when it came from no stored conversation (or the conversation is not held any more)."""
    conversation = conversation_of(store, ticket)
    if conversation is None:
        return None
    if close:
        closed, _ = stored.close(store, conversation.id, by=ticket.closed_by or "staff")
        return closed
    if conversation.status == "handed_over":
        stored.set_status(store, conversation.id, "open")
    return stored.get(store, conversation.id)
