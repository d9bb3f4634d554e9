"""A conversation's lease: one process answers its messages at a time. A row-level claim
(`lease_owner`, `lease_until`) taken by a conditional update in one short transaction, never a
transaction held across a model call; renewed while a turn runs (runtime/conversation.py's
heartbeat); a process killed mid-turn loses it when it expires, and the conversation goes on
elsewhere."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from agent_cli.errors import ConversationBusy, ConversationClosed, ConversationNotFound
from agent_cli.store import conversations as stored
from agent_cli.store.sqlite import OrderStore


def lease(
    store: OrderStore, conversation_id: str, owner: str, seconds: float
) -> stored.Conversation:
    """Hold the conversation for one turn, up to `seconds`: ConversationBusy while another
    process holds it, ConversationClosed when it is closed."""
    at = datetime.now(UTC)
    until = (at + timedelta(seconds=seconds)).isoformat(timespec="seconds")

    def work() -> stored.Conversation:
        rows = store.query(
            f"SELECT lease_owner, lease_until FROM conversations WHERE id = ?{store.FOR_UPDATE}",
            (conversation_id,),
        )
        if not rows:
            raise ConversationNotFound(f"No conversation {conversation_id!r}")
        holder, expires = rows[0]
        if holder is not None and holder != owner and str(expires) > at.isoformat():
            raise ConversationBusy(
                f"conversation {conversation_id[:8]} is answering another message; send this "
                "one again in a moment"
            )
        store.execute(
            "UPDATE conversations SET lease_owner = ?, lease_until = ? WHERE id = ?",
            (owner, until, conversation_id),
        )
        return stored.found(store, conversation_id)

    held = store.atomically(work)
    if held.status == "closed":
        release(store, conversation_id, owner)
        raise ConversationClosed(
            f"conversation {conversation_id[:8]} is closed; start a new one "
            "(agent conversations start)"
        )
    return held


def renew(store: OrderStore, conversation_id: str, owner: str, seconds: float) -> bool:
    """The owner's lease extended to `seconds` from now; False when it is not the owner's any
    more (it expired and another process took it)."""
    until = (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat(timespec="seconds")

    def work() -> bool:
        rows = store.query(
            f"SELECT lease_owner FROM conversations WHERE id = ?{store.FOR_UPDATE}",
            (conversation_id,),
        )
        if not rows or rows[0][0] != owner:
            return False
        store.execute(
            "UPDATE conversations SET lease_until = ? WHERE id = ?", (until, conversation_id)
        )
        return True

    return store.atomically(work)


def release(store: OrderStore, conversation_id: str, owner: str) -> None:
    """Give the lease back (only the owner's: an expired lease someone else took stays)."""
    store.atomically(
        lambda: store.execute(
            "UPDATE conversations SET lease_owner = NULL, lease_until = NULL"
            " WHERE id = ? AND lease_owner = ?",
            (conversation_id, owner),
        )
    )
