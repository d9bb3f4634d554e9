"""A person and the conversation they took over (issue 53, point 1's first part): a hand-over
ticket opened in a stored conversation's turn leaves it `handed_over` (the desk answers nothing
in it, and keeps the customer's messages for the person); `agent tickets reply` puts a person's
words in it; closing the ticket hands the conversation back to the desk, or closes it. Delivery
of those words to the customer's channel is the outbox's (issue 53, point 2)."""

from __future__ import annotations

import re

from agent_cli.domain.tickets import Ticket
from agent_cli.errors import ConversationClosed, ConversationNotFound
from agent_cli.language.intent_model import EMAIL
from agent_cli.policy.verdicts import find_order_codes
from agent_cli.store import conversations as stored
from agent_cli.store import record_reads, tickets
from agent_cli.store.conversations import Conversation
from agent_cli.store.sqlite import OrderStore

MAX_REPLY_CHARS = 4_000


def conversation_of(store: OrderStore, ticket: Ticket) -> Conversation | None:
    """The stored conversation whose turn opened the ticket, if any."""
    return stored.of_run(store, ticket.run_id)


_NAMED = re.compile(
    r"\b(?:my name is|i am|i'm|this is)\s+([A-Z][a-z]+(?:[ -][A-Z][a-z]+)+)\b", re.IGNORECASE
)


def requester(
    store: OrderStore, ticket: Ticket, conversation: Conversation | None
) -> dict[str, str | None]:
    """Who the ticket is for, as a help desk shows it: the customer's name and email from
    their record when they were identified; else what they said about themselves (an email, a
    name, an order code in their messages: `known_from` says which); and their channel."""
    channel = conversation.channel if conversation is not None else None
    found = record_reads.customer(store, ticket.customer_id) if ticket.customer_id else None
    if found is not None:
        return {
            "name": found.name,
            "email": found.email,
            "channel": channel,
            "known_from": "record",
            "order": ticket.order_code,
        }
    given = _their_words(store, ticket, conversation)
    return {**given, "channel": channel, "order": ticket.order_code or given.get("order")}


def _their_words(
    store: OrderStore, ticket: Ticket, conversation: Conversation | None
) -> dict[str, str | None]:
    """What an unidentified customer said about themselves, in every message they wrote (as
    written, never checked against the store: a person reads it as a claim)."""
    texts = (
        [m.text for m in stored.messages(store, conversation.id) if m.role == "customer"]
        if conversation is not None
        else [ticket.question]
    )
    joined = "\n".join(texts)
    email = EMAIL.search(joined)
    named = _NAMED.search(joined)
    codes = find_order_codes(joined)
    given = {
        "email": email.group(0) if email else None,
        "name": " ".join(w.capitalize() for w in named[1].split()) if named else None,
        "order": codes[0] if codes else None,
    }
    if (
        given["email"]
        and not given["name"]
        and (who := record_reads.customer_by_email(store, given["email"]))
    ):
        record = record_reads.customer(store, who)
        given["name"] = record.name if record is not None else None
    given["known_from"] = "their words" if any(given.values()) else None
    return given


def claim(store: OrderStore, number: int, *, by: str) -> tickets.TicketStep | None:
    """The ticket claimed by `by` (once: see store/tickets.py); its conversation, if one kept
    in the store that the desk holds again (handed back), is a person's from now."""
    done = tickets.claim(store, number, by=by)
    if done is not None and done.changed and (held := conversation_of(store, done.ticket)):
        stored.hand_over(store, held.id)
    return done


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
