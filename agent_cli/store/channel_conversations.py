"""A conversation as a channel knows it (issue 53): the channel's own id of it (`external_id`: a
Chatwoot conversation, a LINE user or group, a caller's id) and its address (where replies go,
merged as each message brings news, such as LINE's reply token); a channel's message kept before
the channel is answered, a redelivery dropped."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agent_cli.store import conversations as stored
from agent_cli.store.sqlite import OrderStore


def of_channel(store: OrderStore, channel: str, external_id: str) -> stored.Conversation | None:
    """The conversation the channel calls `external_id` (the live one: a closed one lets go of
    the channel's id)."""
    rows = store.query(
        f"SELECT {stored.COLUMNS} FROM conversations WHERE channel = ? AND external_id = ?",
        (channel, external_id),
    )
    return stored.from_row(rows[0]) if rows else None


def for_channel(
    store: OrderStore, channel: str, external_id: str, address: dict[str, Any] | None
) -> stored.Conversation:
    """The channel's conversation `external_id`: the one kept, with `address` merged into
    its address (a new reply token, say), or a new one (a closed one lets go of the id, and
    the customer's next message starts afresh). `address` None: the channel reads replies from
    its own request, and nothing is owed to the outbox."""
    conversation, _ = store.atomically(lambda: _bound(store, channel, external_id, address))
    return stored.found(store, conversation)


def _bound(
    store: OrderStore, channel: str, external_id: str, address: dict[str, Any] | None
) -> tuple[str, str]:
    """`for_channel`'s work inside the caller's transaction: the conversation's id and status."""
    rows = store.query(
        "SELECT id, status, address FROM conversations WHERE channel = ? AND external_id = ?"
        f"{store.FOR_UPDATE}",
        (channel, external_id),
    )
    if rows and rows[0][1] != "closed":
        if address is not None:
            merged = {**(stored.address_of(rows[0][2]) or {}), **address}
            store.execute(
                "UPDATE conversations SET address = ? WHERE id = ?",
                (json.dumps(merged, ensure_ascii=False), rows[0][0]),
            )
        return str(rows[0][0]), str(rows[0][1])
    if rows:
        store.execute("UPDATE conversations SET external_id = NULL WHERE id = ?", (rows[0][0],))
    made = stored.new_id()
    stored.insert_row(
        store, made, {"channel": channel, "external_id": external_id, "address": address}
    )
    return made, "open"


@dataclass(frozen=True, slots=True, kw_only=True)
class Arrival:
    """A channel's message as it arrives: the channel's id of its conversation, the address it
    brings, its key and text, and who the channel says holds the conversation (a person: True;
    the bot: False; unsaid: None)."""

    external_id: str
    address: dict[str, Any] | None
    key: str
    text: str
    hold: bool | None = None


def keep(store: OrderStore, channel: str, arrival: Arrival) -> tuple[str, bool] | None:
    """One transaction before the channel is answered: the message's conversation found or
    started (its status following who the channel says holds it), and the message kept unless
    its key was received before. The conversation's id and whether the message is new; None for
    a conversation a person holds that the desk never had (nothing kept)."""

    def work() -> tuple[str, bool] | None:
        if arrival.hold and of_channel(store, channel, arrival.external_id) is None:
            return None
        conversation, status = _bound(store, channel, arrival.external_id, arrival.address)
        if arrival.hold and status != "handed_over":
            stored.status_written(store, conversation, "handed_over")
        elif arrival.hold is False and status == "handed_over":  # a person handed it back
            stored.status_written(store, conversation, "open")
        if stored.by_key(store, conversation, arrival.key) is not None:
            return conversation, False
        at = stored.now()
        store.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", (at, conversation))
        store.insert(
            "INSERT INTO conversation_messages (conversation_id, role, kind, text, at,"
            " message_key) VALUES (?, 'customer', 'message', ?, ?, ?)",
            (conversation, arrival.text, at, arrival.key),
        )
        return conversation, True

    return store.atomically(work)


def take_from_address(store: OrderStore, conversation_id: str, name: str, value: object) -> bool:
    """Remove `name` from the conversation's address if it still holds `value` (a LINE reply
    token is used once); whether it did."""

    def work() -> bool:
        rows = store.query(
            f"SELECT address FROM conversations WHERE id = ?{store.FOR_UPDATE}",
            (conversation_id,),
        )
        held = stored.address_of(rows[0][0]) if rows else None
        if not held or held.get(name) != value:
            return False
        del held[name]
        store.execute(
            "UPDATE conversations SET address = ? WHERE id = ?",
            (json.dumps(held, ensure_ascii=False), conversation_id),
        )
        return True

    return store.atomically(work)
