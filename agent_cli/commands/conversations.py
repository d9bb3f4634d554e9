"""`agent conversations start | list | show | close`: the conversations kept in the store."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from agent_cli.config import load_settings
from agent_cli.errors import ConversationClosed, UsageError
from agent_cli.runtime.api import Options
from agent_cli.runtime.assemble import operator_name
from agent_cli.runtime.converse import Conversation
from agent_cli.runtime.stores import opened_store
from agent_cli.store import conversations as stored
from agent_cli.store import outbox
from agent_cli.store.conversations import STATUSES
from agent_cli.text import print_json_lines
from agent_cli.ui import make_console
from agent_cli.ui.conversations_view import show_conversation_record, show_conversations
from agent_cli.validation_text import status_filter


def conversation_json(
    conversation: stored.Conversation,
    messages: list[stored.Message] | None = None,
    deliveries: dict[int, outbox.Row] | None = None,
) -> dict[str, Any]:
    """A conversation as `--json` prints it (its messages only with `show`, each with its
    delivery to the customer's channel when it has one)."""
    record: dict[str, Any] = {
        "id": conversation.id,
        "channel": conversation.channel,
        "status": conversation.status,
        "customer": conversation.customer_id,
        "asserted_by": conversation.asserted_by,
        "proposal": conversation.proposal,
        "created_at": conversation.created_at,
        "updated_at": conversation.updated_at,
        "closed_by": conversation.closed_by,
    }
    if messages is not None:
        record["messages"] = [_message_json(m, (deliveries or {}).get(m.id)) for m in messages]
    return record


def _message_json(message: stored.Message, delivery: outbox.Row | None) -> dict[str, Any]:
    shown = {k: v for k, v in dataclasses.asdict(message).items() if k not in ("reply", "id")}
    if delivery is not None:
        shown["delivery"] = {
            "status": delivery.status,
            "attempts": delivery.attempts,
            "last_error": delivery.last_error,
            "sent_at": delivery.sent_at,
        }
    return shown


def start_conversation(
    *,
    channel: str,
    customer: str | None,
    by: str | None,
    json_output: bool,
    config: Path | None,
) -> None:
    asserted = (by or "").strip() or operator_name()
    options: Options = {} if config is None else {"config": config}
    made = Conversation.start(channel=channel, customer=customer, asserted_by=asserted, **options)
    if json_output:
        print_json_lines([{"id": made.id, "status": "open"}])
        return
    print(made.id)


def list_conversations(
    *, status: str | None, limit: int | None, json_output: bool, config: Path | None
) -> None:
    try:
        wanted = status_filter(status, STATUSES, "conversation")
    except ValueError as bad:
        raise UsageError(str(bad)) from None
    chosen = {None: "live", "all": None}.get(wanted, wanted)  # default: all but the closed
    with opened_store(load_settings(config)) as store:
        found = stored.listed(store, status=chosen, limit=limit)
    if json_output:
        print_json_lines(conversation_json(c) for c in found)
        return
    show_conversations(make_console(), found)


def show_conversation(given: str, *, json_output: bool, config: Path | None) -> None:
    with opened_store(load_settings(config)) as store:
        conversation = stored.found(store, given)
        messages = stored.messages(store, conversation.id)
        rows = outbox.of_conversation(store, conversation.id)
    deliveries = {row.message_id: row for row in rows if row.message_id is not None}
    if json_output:
        print_json_lines([conversation_json(conversation, messages, deliveries)])
        return
    show_conversation_record(
        make_console(), conversation, messages, conversation.proposal, deliveries=deliveries
    )


def close_conversation(given: str, *, by: str | None, config: Path | None) -> None:
    who = (by or "").strip() or operator_name()
    with opened_store(load_settings(config)) as store:
        conversation, changed = stored.close(store, given, by=who)
    if not changed:
        raise ConversationClosed(
            f"conversation {conversation.id[:8]} was closed already (by "
            f"{conversation.closed_by or 'someone'}); nothing changed"
        )
    print(f"Closed conversation {conversation.id[:8]}.")
